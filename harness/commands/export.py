"""``export``: a case's standalone script, which runs with only jax (and numpy) installed."""

from __future__ import annotations

import sys

from harness.cli.export import ExportOptions
from harness.store.files import write_text
from harness.upstream.export import export_script


def execute(opts: ExportOptions) -> int:
    script = opts.script
    text = export_script(script.case, script.sizes, script.settings.for_child())
    if opts.out is None:
        print(text, end="")
    else:
        write_text(opts.out, text)
        print(f"written: {opts.out}", file=sys.stderr)
    return 0
