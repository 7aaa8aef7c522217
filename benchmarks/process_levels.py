"""Do the processes of one invocation share a level?  Fork against spawn isolation.

The verdict over processes treats a cell's K case processes as independent draws of the
level a process sets.  With ``fork`` isolation every case process is forked from its
side's worker and inherits the worker's address-space layout (randomised once, at the
worker's ``exec``), so processes of one invocation may share part of their level, and
separate invocations differ by more than their processes suggest.  This benchmark runs
``--runs`` separate invocations of one cell under each isolation, alternating
(fork, spawn, fork, spawn, ...), and reports for each metric:

- the spread of the process medians *within* an invocation (pooled standard deviation
  of log process medians), and
- the spread of the invocation means *between* invocations against what that within
  spread predicts for K processes (sd_within / sqrt(K)): a ratio near 1 says processes
  of one invocation are independent draws; well above 1, they share a level.

Run it with the interpreter that has JAX and the harness, on a quiet machine:

    .venv/bin/python benchmarks/process_levels.py --runs 4 -- \
        --case scan_sync --size N=100 --size M=500
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.analysis.metrics import metric_samples
from harness.store.results import load_results


def invocation(folder: Path, isolation: str, extra: list[str]) -> dict[str, list[float]]:
    """Metric name → log median of each process of the one cell the invocation stored."""
    command = [
        sys.executable,
        "-m",
        "harness",
        "run",
        "--results",
        str(folder),
        "--isolation",
        isolation,
        *extra,
    ]
    subprocess.run(command, capture_output=True, check=True)
    results, problems = load_results(folder)
    if len(results) != 1 or problems:
        raise SystemExit(
            f"expected one result in {folder}, found {len(results)} ({len(problems)} unusable)"
        )
    found = {}
    for key, samples in metric_samples(results[0]).items():
        medians = [statistics.median(process) for process in samples.processes if process]
        if len(medians) >= 2 and min(medians) > 0:
            found[key.metric_name] = [math.log(m) for m in medians]
    return found


def spreads(runs: list[dict[str, list[float]]]) -> dict[str, tuple[float, float, int]]:
    """Metric → (sd within invocations, sd of invocation means, processes per invocation)."""
    out = {}
    for name in sorted(set.intersection(*(set(r) for r in runs))):
        groups = [r[name] for r in runs]
        k = min(len(g) for g in groups)
        within = math.sqrt(statistics.mean(statistics.variance(g) for g in groups))
        between = statistics.stdev(statistics.mean(g) for g in groups)
        out[name] = (within, between, k)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=4, help="invocations per isolation (default 4)")
    parser.add_argument(
        "extra", nargs=argparse.REMAINDER, help="after --: options for harness run (one cell)"
    )
    args = parser.parse_args()
    extra = args.extra[1:] if args.extra[:1] == ["--"] else args.extra
    found: dict[str, list[dict[str, list[float]]]] = {"fork": [], "spawn": []}
    with tempfile.TemporaryDirectory(prefix="process-levels-") as scratch:
        for i in range(args.runs):
            for isolation in found:
                print(f"run {i + 1}/{args.runs}, {isolation} …", file=sys.stderr, flush=True)
                found[isolation].append(
                    invocation(Path(scratch) / f"{isolation}-{i}", isolation, extra)
                )
    print(
        "| isolation | metric | sd within (log) | sd between invocations (log) "
        "| expected sd/sqrt(K) | ratio |"
    )
    print("|---|---|---|---|---|---|")
    for isolation, runs in found.items():
        for name, (within, between, k) in spreads(runs).items():
            expected = within / math.sqrt(k)
            ratio = between / expected if expected > 0 else math.nan
            print(
                f"| {isolation} | {name} | {within:.3f} | {between:.3f} "
                f"| {expected:.3f} | {ratio:.1f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
