"""The whole range in minutes: a plain script's triage over a wide range, ``--no-why``, run twice,
each from a results and reports folder of its own: the default screen (the ends and a grid, refined
where neighbours differ) and ``--every-release``.  Prints each run's wall time, releases measured
(of those in range), processes run and confirmed steps side by side (the small ones, within what
another run's first round lists nine times in ten, apart, with those not measured again), and
whether the two confirm the same steps past that, or each names the other's as small (a step near
its bound); exit 1 where a step one confirms past its bound the other does not name at all.

    python benchmarks/whole_range.py benchmarks/regressions/reg_square_cpu.py --script-arg 256

Without --from/--to the range is the release table's oldest to newest.  The release venvs are
nox's, shared by the runs (the first run makes what is missing: --run chooses the runs and their
order); nothing one run measured is reused by another.  Not a test: each triage takes minutes, and
the machine should be quiet.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KINDS = {"adaptive": [], "every-release": ["--every-release"]}
UNMEASURED = "(first round)"  # a small candidate not measured again


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("script", type=Path, help="the plain script to triage")
    parser.add_argument(
        "--script-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one of its arguments (repeatable; one starting with - as --script-arg=-n)",
    )
    parser.add_argument("--from", dest="first", metavar="VERSION", help="the range's first")
    parser.add_argument("--to", dest="last", metavar="VERSION", help="the range's last")
    parser.add_argument("--processes", type=int, help="the triage's --processes")
    parser.add_argument(
        "--run",
        dest="runs",
        action="append",
        choices=list(KINDS),
        help="the runs, in order (repeatable: --run adaptive --run adaptive asks whether one "
        "triage confirms the same steps twice; default: adaptive, then every-release)",
    )
    parser.add_argument("--keep", type=Path, help="keep both runs' folders and output here")
    args = parser.parse_args(argv)
    if not args.script.is_file():
        parser.error(f"{args.script}: no such file")
    return args


def triage_argv(args: argparse.Namespace, root: Path, kind: str) -> list[str]:
    """The nox command of one run, into ``root``'s own folders, its answer's data in triage.json."""
    posargs = ["--script", str(args.script.resolve())]
    posargs += [f"--script-arg={value}" for value in args.script_arg]
    posargs += ["--from", args.first] if args.first else []
    posargs += ["--to", args.last] if args.last else []
    posargs += ["--processes", str(args.processes)] if args.processes else []
    posargs += ["--no-why", "--results", str(root / "results"), "--out", str(root / "reports")]
    posargs += ["--json", str(root / "triage.json"), *KINDS[kind]]
    return [sys.executable, "-m", "nox", "-R", "-s", "triage", "--", *posargs]


@dataclass
class Run:
    kind: str
    exit_code: int
    seconds: float
    measured: int = 0  # releases of the first round
    in_range: int = 0
    processes: int = 0  # every process stored: the first round's and the confirmations'
    steps: list[str] = field(default_factory=list)  # confirmed, ``metric before → after``
    small: list[str] = field(default_factory=list)  # confirmed, but not twice-safe


def read_run(kind: str, root: Path, exit_code: int, seconds: float) -> Run:
    """What a run's folder says: its answer's data and the results it stored."""
    run = Run(kind, exit_code, seconds)
    answer = root / "triage.json"
    if answer.is_file():
        data = json.loads(answer.read_text())
        first = data.get("first_round", {})
        run.measured = len(first.get("releases", []))
        run.in_range = first.get("in_range", run.measured)
        for c in data.get("confirmations", []):
            named = f"{c['metric']} {c['before']} → {c['after']}"
            if c.get("outcome") == "confirmed":
                (run.steps if c.get("twice_safe", True) else run.small).append(named)
            elif c.get("outcome") == "small, not measured again":
                run.small.append(f"{named} {UNMEASURED}")
        run.steps.sort()
        run.small.sort()
    for path in (root / "results").rglob("*.json"):
        try:
            stored = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(stored, dict) and isinstance(stored.get("processes"), list):
            run.processes += len(stored["processes"])
    return run


def side_by_side(runs: list[Run]) -> str:
    """The runs as a table, then whether they confirmed the same steps."""
    rows = [
        ("", *(run.kind for run in runs)),
        ("exit status", *(str(run.exit_code) for run in runs)),
        ("wall time", *(f"{run.seconds:.0f} s" for run in runs)),
        ("releases measured", *(f"{run.measured} of {run.in_range}" for run in runs)),
        ("processes run", *(str(run.processes) for run in runs)),
    ]
    for label, named in (("confirmed steps", "steps"), ("small, not twice-safe", "small")):
        lists = [getattr(run, named) for run in runs]
        for index in range(max(len(steps) for steps in lists)):
            cells = (steps[index] if index < len(steps) else "" for steps in lists)
            rows.append((label if index == 0 else "", *cells))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    lines.append(agreement(runs)[1])
    return "\n".join(line.rstrip() for line in lines)


def agreement(runs: list[Run]) -> tuple[bool, str]:
    """Whether every step one run confirms past the bound is named by every other run, and how: the
    same steps, or some confirmed past the bound in one run and named small in another (a step
    near its bound)."""
    past = [set(run.steps) for run in runs]
    if all(steps == past[0] for steps in past):
        return True, "the same confirmed steps"
    named = [
        steps | {step.removesuffix(f" {UNMEASURED}") for step in run.small}
        for steps, run in zip(past, runs, strict=True)
    ]
    if not all(steps <= every for steps in past for every in named):
        return False, "the confirmed steps DIFFER"
    near = "; ".join(sorted(set.union(*past) - set.intersection(*past)))
    return True, f"the same steps named; past the bound in one run, small in another: {near}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    runs = []
    with tempfile.TemporaryDirectory(prefix="whole-range-") as scratch:
        base = args.keep or Path(scratch)
        for number, kind in enumerate(args.runs or list(KINDS), start=1):
            root = base / f"{number}-{kind}"
            root.mkdir(parents=True, exist_ok=True)
            started = time.monotonic()
            done = subprocess.run(
                triage_argv(args, root, kind), cwd=REPO, capture_output=True, text=True, check=False
            )
            seconds = time.monotonic() - started
            (root / "output.txt").write_text(done.stdout + done.stderr)
            runs.append(read_run(kind, root, done.returncode, seconds))
            print(f"{kind}: exit {done.returncode}, {seconds:.0f} s", flush=True)
    print(side_by_side(runs))
    return 0 if agreement(runs)[0] else 1


if __name__ == "__main__":
    sys.exit(main())
