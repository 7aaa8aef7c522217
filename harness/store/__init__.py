"""Stored results: the typed schema and its parser (``schema``, built from ``checks``), older
versions (``migrations``), results written atomically and loaded once (``results``), merged from
many machines (``merge``), each machine's noise floor (``calibrations``), what a document may hold
(``bounds``), and bounded reads and link-safe writes (``files``).
"""
