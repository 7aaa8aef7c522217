"""Discover: what is measured: the case catalogue read without importing it (``discovery``,
``outline``, ``scaffold``), plain scripts and suites in a case's place (``scripts``,
``script_deps``, ``benchmark_suite``, ``suite_args``, asked as one ``subjects``), sizes (``sizes``)
and the search for the smallest size at which a claim breaks (``search``).
"""
