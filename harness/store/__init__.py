"""Stored results: the typed schema, older versions brought up to it, results written atomically
and loaded once (docs/layout.md names each module)."""
