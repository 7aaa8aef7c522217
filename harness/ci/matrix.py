"""``python -m harness.ci.matrix``: the GitHub Actions matrix, one entry per ``repro`` session of
``nox -l --json``, so the jobs of ``.github/workflows/matrix.yml`` always equal nox's sessions.

A session's runner follows its profile's kind, from the session's tags: CPU on GitHub's hosted
runners, GPU on a self-hosted runner labelled ``gpu``, TPU on one labelled ``tpu``. Needs nox only.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.errors import HarnessError, UsageError

REPO_ROOT = Path(__file__).resolve().parents[2]
RUNNERS = {"cpu": ["ubuntu-latest"], "gpu": ["self-hosted", "gpu"], "tpu": ["self-hosted", "tpu"]}
MAX_JOBS = 256  # GitHub refuses a matrix with more jobs


def nox_listing(root: Path = REPO_ROOT) -> list[dict[str, Any]]:
    """``nox -l --json -s repro`` (plain ``-l`` lists only the default sessions)."""
    command = [sys.executable, "-m", "nox", "--list", "--json", "--sessions", "repro"]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise HarnessError(f"`nox -l --json` failed with exit code {done.returncode}: {last}")
    return list(json.loads(done.stdout))


def entry(session: dict[str, Any]) -> dict[str, Any]:
    kinds = [tag for tag in session.get("tags", []) if tag in RUNNERS]
    if len(kinds) != 1:
        raise HarnessError(
            f"session {session['session']} needs one kind tag of {', '.join(RUNNERS)}, has {kinds}"
        )
    spec = session["call_spec"]
    return {
        "session": session["session"],
        "jax": spec["jax"],
        "profile": spec["profile"],
        "kind": kinds[0],
        "runner": RUNNERS[kinds[0]],
        # Artifact names may not contain quotes or parentheses, which session names do.
        "artifact": f"results-{spec['jax']}-{spec['profile']}",
    }


def matrix(
    sessions: Sequence[dict[str, Any]], kinds: Sequence[str] = tuple(RUNNERS)
) -> dict[str, Any]:
    entries = [entry(s) for s in sessions if s["name"] == "repro"]
    chosen = [e for e in entries if e["kind"] in kinds]
    if not chosen:
        asked = ", ".join(kinds)
        raise HarnessError(f"no repro session of kind {asked}: the matrix would be empty")
    if len(chosen) > MAX_JOBS:
        raise HarnessError(f"{len(chosen)} sessions exceed GitHub's {MAX_JOBS} jobs per matrix")
    return {"include": chosen}


def _kinds(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in RUNNERS]
    if unknown or not kinds:
        known = ", ".join(RUNNERS)
        raise argparse.ArgumentTypeError(f"{text!r}: kinds are {known}, comma-separated")
    return kinds


class _MatrixParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def main(argv: list[str] | None = None) -> int:
    parser = _MatrixParser(prog="python -m harness.ci.matrix", description=__doc__)
    parser.add_argument(
        "--kinds",
        type=_kinds,
        default=list(RUNNERS),
        help=f"profile kinds to include, e.g. cpu (default: {','.join(RUNNERS)})",
    )
    try:
        args = parser.parse_args(argv)
        print(json.dumps(matrix(nox_listing(), args.kinds), separators=(",", ":")))
    except HarnessError as exc:
        print(f"harness.ci.matrix: error: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
