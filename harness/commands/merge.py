"""``merge``: results from many folders (CI artifacts, other machines) into one, each once."""

from __future__ import annotations

import sys

from harness.cli.merge import MergeOptions
from harness.store.results import merge


def execute(opts: MergeOptions) -> int:
    merged = merge(opts.sources, opts.into)
    for problem in merged.problems:
        print(f"left out {problem}", file=sys.stderr)
    print(
        f"merged into {opts.into}: {len(merged.copied)} copied, {merged.duplicates} already there, "
        f"{len(merged.problems)} left out",
        file=sys.stderr,
    )
    return 1 if merged.problems else 0
