"""Stored results: one schema-versioned JSON document per case run, written atomically and never
overwritten, loaded with every unusable file named (``results``), and the merge of results from
many machines into one folder (``merge``).
"""
