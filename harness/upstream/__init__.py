"""Upstream issues: a case exported as a standalone script (``export``, with its measuring end
``standalone``), the draft's short script (``minimal``), and what a draft is about (``change``: the
step a bisect or triage answer names, read back from its JSON).  The draft's text is
``render.issue_draft``'s.
"""
