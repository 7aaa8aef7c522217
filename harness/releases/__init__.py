"""Releases on the package index (``index``), one cached venv per release and build (``venvs``),
probes that measure a release or reuse its stored result (``probes``), the judgement of a release as
good or bad (``judge``), bisection and sweep (``bisection``), their reports (``report``) and the
``bisect`` and ``sweep`` commands (``commands``) with their checked options (``options``).
"""
