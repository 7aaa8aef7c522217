"""Installing: the environments a side runs in, above ``measure`` and below ``steps``: a venv per
release, per script's resolved set, per commit (docs/layout.md names each module)."""
