"""Continuous integration: the GitHub Actions matrix generated from nox's own session list (``python
-m harness.ci.matrix``: ``matrix``), and a draft issue per regression a watch confirmed
(``watch_issues``). Standard library only, low in the house: it reads nox's and a watch's output,
not the harness's objects."""
