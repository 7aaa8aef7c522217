"""Discover: what is measured (cases read without importing them, plain scripts and suites in a
case's place, sizes) and the search for the smallest size that breaks a claim (docs/layout.md names
each module)."""
