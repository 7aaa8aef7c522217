"""Searching: where along releases (or commits) a behaviour changed, above ``install``, below
``explain``.

A release's side made ready (``ready``), its stored result reused (``reuse``) or measured
(``measurement``), both by a probe (``probes``); a release judged good or bad against the endpoints
(``judge``); bisection and sweep (``bisection``); a triage's first round on a grid refined where
neighbours differ (``grid``); a triage's steps measured again (``confirm``) and
confirmed (``triage``); below releases, attribution and the bisect over commits (``commit_bisect``);
what an answer is about, and its file's name (``answers``); the seam every kind of why goes through
(``evidence``); a watch's findings (``watch``) and what a suite's costs (``suite_floor``). Engines
return data, with a short answer or reason in words where one is kept (``BisectOutcome.answer``, a
probe's note); pages are written in ``render``.
"""
