"""Stored results: the typed result schema, its parser and its writer (``schema``, built from the
type checks in ``checks``), older versions brought up to it (``migrations``), one JSON document per
cell written atomically and never overwritten, loaded and parsed once with every unusable file
named, and the one choice of a cell's newest run (``results``), the merge of results from many
machines into one folder (``merge``), each machine's noise floor beside them (``calibrations``),
what a stored document may hold (``bounds``), and bounded reads of untrusted files and writes that
never follow a planted link, or that go in place to a device or descriptor a user named (``files``).
"""
