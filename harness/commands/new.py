"""``new``: a working template case to edit from there."""

from __future__ import annotations

import sys

from harness.catalogue.scaffold import write_case
from harness.cli.new import NewOptions


def execute(opts: NewOptions) -> int:
    path = write_case(opts.name, opts.cases_dir)
    print(f"written: {path}", file=sys.stderr)
    print(
        f"next: edit its TODO lines, then `jax-repro list --case {opts.name}` and the checklist at "
        "the end of cases/README.md (one release, lint, tests)",
        file=sys.stderr,
    )
    return 0
