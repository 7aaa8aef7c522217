"""Upstream issues: a case exported as a standalone script (``export``, with its measuring end
``standalone``), the draft's short script (``minimal``), what a draft is about (``change``: the step
a bisect or triage answer names, read back from its JSON), whether a script is plain JAX and how
each side installs (``installs``), and what ``issue`` measures itself (``step_measured``). The
draft's text is ``render.issue_draft``'s."""
