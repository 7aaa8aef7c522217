"""Discover: the case catalogue read from ``cases/`` without importing it (constants by AST), the
selection of cases, what each defines (programs, metric names: ``outline``), a template for a new
one (``scaffold``), their size spaces, anchors and cost budgets, hypothesis-drawn size points, and the
search for the smallest size at which a claim breaks.  Stages below: ``host`` (available memory), ``units``.
"""
