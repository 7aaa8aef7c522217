"""``python -m harness.ci.watch_issues watch.json``: ``nox -s issue -- ARGS --out OUT``, without a
shell, per target of a watch's summary with ``issue`` arguments not reported from memory.

An argument that is not a plain string is refused; a draft that fails is said and the others go
on, the exit status 1. Needs nox, not the harness's dependencies.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness.errors import UsageError
from harness.render.text import one_line
from harness.store.files import parse_document, read_bounded

REPO_ROOT = Path(__file__).resolve().parents[2]
MAX_SUMMARY_BYTES = 16 * 2**20
MAX_TARGETS = 500  # --scripts takes 50, a suite is one, the catalogue a few dozen
Run = Callable[[list[str]], int]


def drafts(summary: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(target, ``nox -s issue`` posargs) per regression to draft; UsageError for no summary."""
    if summary.get("schema") != "jax-repro-harness/watch":
        raise UsageError("not a watch summary (its schema is not jax-repro-harness/watch)")
    targets = summary.get("targets", [])
    if not isinstance(targets, list):
        raise UsageError("not a watch summary (its targets are not a list)")
    if len(targets) > MAX_TARGETS:  # each may start a nox session
        raise UsageError(
            f"not a watch summary ({len(targets):,} targets; a watch has at most {MAX_TARGETS})"
        )
    found = []
    for number, target in enumerate(targets, start=1):
        name = target.get("target") if isinstance(target, dict) else None
        if not isinstance(name, str):
            raise UsageError(f"not a watch summary (its target {number} has no name)")
        posargs = target.get("issue") or []
        if not isinstance(posargs, list) or not all(isinstance(a, str) for a in posargs):
            raise UsageError(f"target {shown(name)!r}: its issue arguments are not strings")
        if posargs and not target.get("remembered"):
            found.append((name, posargs))
    return found


def shown(text: str, limit: int = 60) -> str:
    """A summary's string for the job's log: one line, its control characters (ESC) as U+FFFD."""
    return one_line(text[:limit])


def _nox(posargs: list[str]) -> int:
    command = [sys.executable, "-m", "nox", "-s", "issue", "--", *posargs]
    return subprocess.run(command, cwd=REPO_ROOT, check=False).returncode


def draft_all(summary: dict[str, Any], out: Path, run: Run = _nox) -> int:
    """Draft each due regression's issue into ``out``; 1 when a draft failed, else 0."""
    failed = []
    due = drafts(summary)
    for target, posargs in due:
        line = shown(" ".join(posargs), 2000)
        print(f"[watch] drafting the issue of {shown(target)}: nox -s issue -- {line}", flush=True)
        if run([*posargs, "--out", str(out)]) != 0:
            failed.append(target)
    if not due:
        print("[watch] no new regression: no issue to draft")
    for target in failed:
        print(
            f"[watch] the issue of {shown(target)} could not be drafted (its lines above say why)"
        )
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None, run: Run = _nox) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.ci.watch_issues", description=__doc__)
    parser.add_argument("summary", type=Path, help="the watch's watch.json")
    parser.add_argument(
        "--out", type=Path, default=Path("reports"), help="where the drafts go (default: reports)"
    )
    args = parser.parse_args(argv)
    try:
        # Bounded, never waiting on a FIFO, /dev/zero refused as no regular file, nesting bounded.
        summary = parse_document(read_bounded(args.summary, limit=MAX_SUMMARY_BYTES))
        if not isinstance(summary, dict):
            raise UsageError(f"{args.summary}: not a watch summary")
        return draft_all(summary, args.out, run)
    except (OSError, ValueError, UsageError) as exc:  # DocumentProblem among them
        where = "" if isinstance(exc, UsageError) else f"{shown(str(args.summary), 300)}: "
        print(f"harness: error: {where}{exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
