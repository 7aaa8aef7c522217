"""Searching: where along releases (or commits) a behaviour changed, above ``install``, below ``explain``.

A probe measures a release, or reuses its stored result (``probes``); a release is judged good or bad against
the endpoints (``judge``); bisection and sweep (``bisection``); every step of a range confirmed
(``triage``); below releases, attribution and the bisect over commits (``commit_bisect``); what an answer is
about, and its file's name (``answers``).  Engines return data; ``render`` writes every sentence.
"""
