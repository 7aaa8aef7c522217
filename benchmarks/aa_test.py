"""A/A test of the comparison rule on real timings, and the smallest slowdown it reliably flags.

Runs one real case several times on the JAX installed here, each run a separate
``python -m harness run`` (as separate CI runs would be), then compares every pair of
runs metric by metric.  Nothing changed between the runs, so
every *faster* / *slower* verdict is a false positive.  Then it multiplies B's raw
samples by 1.05, 1.10, ... (an injected slowdown) and counts how many comparisons
are flagged *slower*.  Run inside a session venv that has JAX, e.g.:

    .nox/tests/bin/python benchmarks/aa_test.py                      # async_dispatch, 2 runs, 10 repeats
    .nox/tests/bin/python benchmarks/aa_test.py --runs 3 --repeats 30 --case scan_sync

Metrics with too few samples for the test ever to reach p < alpha (compile timings:
3 a run) are counted apart as untestable: they can never be flagged either way.
"""

from __future__ import annotations

import argparse
import itertools
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.analysis.metrics import MetricKey, pooled_series
from harness.analysis.significance import DEFAULT_THRESHOLDS, Verdict, compare_samples, smallest_p_value
from harness.render.tables import text_table
from harness.store.results import StoredResult, load_results
from harness.units import format_ns, format_p, format_ratio

FACTORS = [round(1 + 0.05 * i, 2) for i in range(1, 11)]  # 1.05 … 1.50

Series = dict[MetricKey, list[float]]


def run_case(case: str, folder: Path, repeats: int, sizes: list[str]) -> float:
    command = [sys.executable, "-m", "harness", "run", "--case", case, "--results", str(folder)]
    command += ["--repeats", str(repeats), "--profile", "aa", "--strict"]
    for size in sizes:
        command += ["--size", size]
    started = time.monotonic()
    subprocess.run(command, check=True, capture_output=True, text=True)
    return time.monotonic() - started


def runs_by_sizes(folder: Path) -> dict[str, StoredResult]:
    results, problems = load_results(folder)
    if problems:
        raise SystemExit(f"unusable results: {problems}")
    return {" ".join(f"{k}={v}" for k, v in sorted(r.sizes.items())): r for r in results}


def testable(a: list[float], b: list[float]) -> bool:
    return smallest_p_value(len(a), len(b)) < DEFAULT_THRESHOLDS.alpha


def pairs_of_runs(runs: list[dict[str, StoredResult]], ordered: bool) -> list[tuple[str, Series, Series]]:
    """(label, A, B) per pair of distinct runs and sizes.  Unordered for the A/A count (A vs B and
    B vs A are one observation); ordered for injections (each run serves once as the baseline)."""
    choose = itertools.permutations if ordered else itertools.combinations
    pairs = []
    for first, second in choose(range(len(runs)), 2):
        for sizes, result in runs[first].items():
            other = runs[second].get(sizes)
            if other is not None:
                label = f"run {first + 1} → run {second + 1} · {sizes}"
                pairs.append((label, pooled_series(result), pooled_series(other)))
    return pairs


def aa_table(pairs: list[tuple[str, Series, Series]]) -> tuple[str, int, int, int]:
    rows, false_positives, tested, untestable = [], 0, 0, 0
    for label, a, b in pairs:
        for key in a.keys() & b.keys():
            if not testable(a[key], b[key]):
                untestable += 1
                continue
            result = compare_samples(a[key], b[key])
            tested += 1
            false_positives += result.verdict in (Verdict.FASTER, Verdict.SLOWER)
            rows.append(
                [
                    label,
                    key.label(),
                    format_ns(result.baseline.median),
                    format_ns(result.candidate.median),
                    format_ratio(result.ratio),
                    format_p(result.p_value),
                    result.verdict,
                    "; ".join(result.flags),
                ]
            )
    rows.sort(key=lambda row: (row[0], row[1]))
    headers = ["pair", "metric", "median A", "median B", "ratio", "p", "verdict", "caveats"]
    return text_table(rows, headers), false_positives, tested, untestable


def injection_table(pairs: list[tuple[str, Series, Series]]) -> tuple[str, float | None, dict[str, float | None]]:
    """Per factor, how many testable comparisons flag B × factor as slower; per metric, from which factor on."""
    rows = []
    flagged_all: list[bool] = []
    per_metric: dict[str, list[bool]] = {}
    for factor in FACTORS:
        flagged = total = 0
        by_metric: dict[str, bool] = {}
        for _, a, b in pairs:
            for key in a.keys() & b.keys():
                if not testable(a[key], b[key]):
                    continue
                hit = compare_samples(a[key], [x * factor for x in b[key]]).verdict == Verdict.SLOWER
                flagged += hit
                total += 1
                by_metric[key.label()] = by_metric.get(key.label(), True) and hit
        rows.append([f"×{factor:.2f}", f"{flagged}/{total}", f"{flagged / total:.0%}" if total else "–"])
        flagged_all.append(total > 0 and flagged == total)
        for label, hit in by_metric.items():
            per_metric.setdefault(label, []).append(hit)
    return (
        text_table(rows, ["injected slowdown", "flagged slower", "share"]),
        reliable_from(flagged_all),
        {label: reliable_from(hits) for label, hits in sorted(per_metric.items())},
    )


def reliable_from(hits: list[bool]) -> float | None:
    """The smallest factor from which on every comparison at every larger factor was flagged."""
    for i in range(len(FACTORS)):
        if all(hits[i:]):
            return FACTORS[i]
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="async_dispatch")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--size", action="append", default=[], help="NAME=INTEGER, passed to harness run")
    parser.add_argument("--keep", type=Path, help="store the runs' results here instead of a temporary folder")
    args = parser.parse_args()
    if args.runs < 2:
        parser.error("an A/A test needs at least two runs")

    with tempfile.TemporaryDirectory(prefix="aa-test-") as scratch:
        root = args.keep or Path(scratch)
        runs = []
        for i in range(args.runs):
            folder = root / f"run{i + 1}"
            seconds = run_case(args.case, folder, args.repeats, args.size)
            print(f"run {i + 1}: {args.case}, {args.repeats} repeats, {seconds:.1f} s", flush=True)
            runs.append(runs_by_sizes(folder))

    table, false_positives, tested, untestable = aa_table(pairs_of_runs(runs, ordered=False))
    print(f"\nA/A: {args.runs} runs of {args.case}, every pair of runs compared\n\n{table}\n")
    print(f"A/A false positives: {false_positives} of {tested} testable comparisons ({untestable} untestable)")

    table, reliable, per_metric = injection_table(pairs_of_runs(runs, ordered=True))
    print(f"\nInjected slowdowns (B's raw samples × factor; each run once as A):\n\n{table}\n")
    for label, factor in per_metric.items():
        print(f"  {label}: flagged reliably from {'×' + format(factor, '.2f') if factor else 'never (up to ×1.50)'}")
    print(
        "\nSmallest injected slowdown flagged in every testable comparison: "
        + (f"×{reliable:.2f}" if reliable else "none up to ×1.50")
    )


if __name__ == "__main__":
    main()
