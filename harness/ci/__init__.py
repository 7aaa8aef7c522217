"""Continuous integration: the GitHub Actions matrix generated from nox's own session list
(``python -m harness.ci.matrix``).
"""
