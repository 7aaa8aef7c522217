"""The verdict procedure's promises, simulated: false alarms where nothing changed, power where
something did.

Runs the project's own procedure (the runner's looks, the spending, the futility stop, sides that
settle, the stored pair judged as every page judges it; ``tests/analysis/simulated_runs.py``) on
made-up process medians, and prints a markdown table: per design and noise, the share of A/A runs
that flagged a change (against α = 0.002) and the processes a side they ended at; per spread, the
share of runs that found a true ×1.10 and ×1.5 and the mean ratio shown for those found.  No JAX;
pure Python, a few minutes on one core:

    .venv/bin/python benchmarks/verdict_simulation.py --runs 4000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.analysis.processes import UPPER_ESTIMATE
from harness.analysis.significance import Thresholds, Verdict
from tests.analysis.simulated_runs import Noise, pairwise, rates, settings_of

DESIGNS = {  # (planned processes, most, sides); most None: measured once, no looks
    "run --sides: 5, looks to 20": (5, 20, 2),
    "nox / matrix: 7, no looks": (7, None, 2),
    "bisect probe (3 sides): 5, looks to 20": (5, 20, 3),
    "3, looks to 6, Welch alone (no rank guard)": (3, 6, 2),
}
NOISES = [
    Noise("lognormal", 0.02),
    Noise("lognormal", 0.10),
    Noise("t3", 0.10),
    Noise("two-level", 0.05, 0.25),
    Noise("two-level", 0.05, 0.5),
]


def false_alarms(runs: int) -> list[str]:
    rows = [
        "| design | noise | runs | flagged | rate | processes a side (mean) |",
        "|---|---|---|---|---|---|",
    ]
    for name, (first, most, sides) in DESIGNS.items():
        rule = Thresholds(rank_guard="no rank guard" not in name)
        for noise in NOISES:
            counts: list[int] = []
            outcome = pairwise(
                [1.0] * sides, noise, settings_of(first, most, "changes" if most else None), rule
            )

            def counted(rng, outcome=outcome, counts=counts):
                found = outcome(rng)
                counts.append(max(c.processes[0] for c in found))
                return found

            found = rates(counted, runs, seed=1)
            rows.append(
                f"| {name} | {noise.name} | {runs} | {found.flagged} | {found.rate:.2%} | "
                f"{statistics.fmean(counts):.1f} |"
            )
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def power(runs: int) -> list[str]:
    rule = Thresholds()
    rows = [
        "| spread | true ratio | found | mean ratio shown "
        "| of those, flagged as an upper estimate |",
        "|---|---|---|---|---|",
    ]
    for spread in (0.05, 0.10, 0.15):
        for truth in (1.10, 1.5):
            outcome = pairwise([1.0, truth], Noise("lognormal", spread), settings_of(5, 20), rule)
            upper: list[bool] = []

            def kept(rng, outcome=outcome, upper=upper):
                found = outcome(rng)
                upper.extend(
                    UPPER_ESTIMATE in c.flags for c in found if c.verdict == Verdict.SLOWER
                )
                return found

            found = rates(kept, runs, seed=2)
            share = f"{sum(upper) / len(upper):.0%}" if upper else "–"
            rows.append(
                f"| {spread:.0%} | ×{truth:g} | {found.rate:.1%} "
                f"| ×{found.mean_ratio():.3f} | {share} |"
            )
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--runs", type=int, default=2000, help="simulated runs per A/A row (power rows: a quarter)"
    )
    args = parser.parse_args()
    started = time.monotonic()
    lines = ["## Where nothing changed (α = 0.002)", "", *false_alarms(args.runs), ""]
    lines += [
        "## Where something did (run --sides: 5, looks to 20)",
        "",
        *power(max(args.runs // 4, 100)),
        "",
    ]
    lines.append(f"{args.runs} runs a row, {time.monotonic() - started:.0f} s")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
