"""Discover: what is measured.  The case catalogue read from ``cases/`` without importing it
(constants by AST: ``discovery``), what each case defines (programs, metric names: ``outline``), a
template for a new one (``scaffold``); a plain script in a case's place (``scripts``, its own
libraries in ``script_deps``, a pytest-benchmark suite run unchanged in ``benchmark_suite``, its
arguments checked in ``suite_args``), both asked as one ``subjects``; size spaces, anchors, budgets
and hypothesis-drawn size points (``sizes``), and the search for the smallest size at which a claim
breaks (``search``).
"""
