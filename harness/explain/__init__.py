"""Explaining: why a step moved, above ``steps``, below ``render``.

Every kind of evidence goes through one seam (``steps.evidence``: a ``Step``, the sides it gathers
with, ``Found``) and is listed once in ``kinds``: a middle side with the newer jax and the older
libraries (``held_library``), the script's programs exported and measured alone by a script of their
own (``reproducer``, its export folder read as data in ``export_listing``), the defaults that
changed, with the jax commit that turned each, and their trials (``defaults`` → ``tried``; an
ending's too, judged on its counts), flags named like what XLA compiled anew (``matching_flags``),
what each side compiled (``dumps``), where its run time and its host time went (``profiles``).
Each gathers for one step (two sides: releases, or a commit and its jaxlibs) and returns data; a few
short reasons are said here, every page's sentences in ``render``.
"""
