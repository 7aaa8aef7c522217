"""Detection and interleaved A/A: is a real ×1.10 slowdown flagged, and is "no change" left alone?

Each of ``--runs`` separate invocations of ``python -m harness run --sides`` measures
one case three times over, as three sides whose processes alternate in rounds: the
case unchanged, the case unchanged again, and the case with one size raised (``--raise
NAME=VALUE``: really more work, e.g. a scan 10 % longer).  Every metric of the raised
side is compared with the unchanged one (detection), and the two unchanged sides with
each other (an A/A test of interleaved sides, which is how bisect, sweep, triage and the
matrix compare releases), by the rule ``compare`` applies.

Run it with the interpreter that has JAX and the harness, while nothing else loads the
machine, e.g.:

    .nox/release-jax-0.12.0.1/bin/python benchmarks/detection.py --case scan_sync --size N=100 \\
        --size M=500 --raise M=550 --runs 10

Raising scan_sync's M by 10 % makes its scans' wall time really ×1.09–1.10; vmapped_scans's M only
×1.07, since part of its program does not grow with M.  Options after ``--`` go to every
``harness run`` (none: its defaults, 5 processes a side measured until decided, up to 20).  It
prints, per run and metric, the ratio, p-value and verdict, then how often each metric was flagged.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from harness.analysis.metrics import compare_runs
from harness.analysis.significance import Thresholds, Verdict
from harness.measure.sides import release_label
from harness.store.results import StoredResult, load_results

SIDES = ("unchanged", "again", "raised")


def sides_plan(release: str, raised: dict[str, int]) -> list[dict[str, object]]:
    return [
        {"release": release, "profile": "unchanged", "label": "unchanged"},
        {"release": release, "profile": "again", "label": "unchanged again"},
        {"release": release, "profile": "raised", "label": "raised", "sizes": raised},
    ]


def one_run(
    folder: Path, plan: Path, case: str, sizes: list[str], extra: list[str]
) -> dict[str, StoredResult]:
    command = [
        sys.executable,
        "-m",
        "harness",
        "run",
        "--case",
        case,
        "--sides",
        str(plan),
        "--results",
        str(folder),
    ]
    command += [f"--size={size}" for size in sizes] + extra
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    print(
        f"  {time.monotonic() - started:.0f} s, exit code {done.returncode}",
        file=sys.stderr,
        flush=True,
    )
    results, problems = load_results(folder)
    by_side = {r.result.profile: r for r in results if r.result.status == "ok"}
    if problems or set(by_side) != set(SIDES):
        tail = done.stderr.strip().splitlines()[-1:] or ["(no output)"]
        raise SystemExit(
            f"run in {folder} stored {sorted(by_side)}, not one ok result per side: {tail[0]}"
        )
    return by_side


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--case", required=True)
    parser.add_argument(
        "--size", action="append", default=[], help="NAME=INTEGER of the unchanged case"
    )
    parser.add_argument(
        "--raise", dest="raised", required=True, metavar="NAME=VALUE", help="the raised size"
    )
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--release", default="", help="release label of the sides (default: the installed jax)"
    )
    parser.add_argument(
        "extra", nargs=argparse.REMAINDER, help="after --: options for every harness run"
    )
    args = parser.parse_args()
    extra = args.extra[1:] if args.extra[:1] == ["--"] else args.extra
    name, _, value = args.raised.partition("=")
    release = args.release or release_label()
    thresholds = Thresholds()
    flagged: dict[str, Counter[str]] = {"detection": Counter(), "A/A interleaved": Counter()}
    compared: Counter[tuple[str, str]] = Counter()
    with tempfile.TemporaryDirectory(prefix="detection-") as scratch:
        plan = Path(scratch) / "sides.json"
        plan.write_text(json.dumps(sides_plan(release, {name: int(value)})))
        for i in range(args.runs):
            print(f"run {i + 1}/{args.runs}", file=sys.stderr, flush=True)
            sides = one_run(Path(scratch) / f"run-{i + 1}", plan, args.case, args.size, extra)
            for what, (a, b) in {
                "detection": (sides["unchanged"], sides["raised"]),
                "A/A interleaved": (sides["unchanged"], sides["again"]),
            }.items():
                for found in compare_runs(a, b, thresholds)[0]:
                    c = found.comparison
                    metric = found.key.metric_name
                    compared[(what, metric)] += 1
                    if c.verdict in (Verdict.SLOWER, Verdict.FASTER):
                        flagged[what][metric] += 1
                    print(
                        f"run {i + 1} {what}: {metric} ×{c.ratio:.3f} p={c.p_value:.2g} "
                        f"{c.verdict} "
                        f"(processes {c.processes[0]}/{c.processes[1]}, "
                        f"between {c.spreads[0].between:.1%}"
                        f"/{c.spreads[1].between:.1%})",
                        flush=True,
                    )
    print(
        f"\n{args.case} {' '.join(args.size)}, raised {args.raised}, {args.runs} runs, "
        f"options {' '.join(extra)}"
    )
    for what, counts in flagged.items():
        for (kind, metric), total in sorted(compared.items()):
            if kind == what:
                print(f"{what}: {metric} flagged in {counts[metric]} of {total} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
