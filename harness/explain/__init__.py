"""Explaining: why a step moved, above ``steps``, below ``upstream``.

Every kind of evidence implements one protocol (``evidence``) and is listed once in its registry (``kinds``):
the defaults that changed and their trials (``defaults`` → ``tried``, with ``option_commits``), what each side
compiled (``dumps``) and where its run time went (``profiles``).  Each gathers for one step (two sides:
releases, or a commit and its jaxlibs) and returns data; ``render`` writes the sentences.
"""
