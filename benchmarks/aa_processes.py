"""A/A test of whole invocations: how often does ``compare`` flag a change between runs of the same release?

Runs the quick catalogue (or the ``--case`` ones) ``--runs`` times, each a separate
``python -m harness run`` into a results folder of its own (as separate CI runs would
be), then runs ``python -m harness compare`` on every pair of folders.  Nothing changed
between the runs, so every metric comparison flagged *slower* or *faster* is a false
alarm, and every pair that exits 1 would have failed a CI check for nothing.  With
``--busy`` one CPU-bound process, started by this benchmark before each invocation and
stopped after it, keeps a core busy throughout (the load a shared CI runner sees).

Run it with the interpreter that has JAX and the harness, while nothing else loads the
machine, e.g.:

    .venv/bin/python benchmarks/aa_processes.py                          # 3 runs of the quick catalogue
    .venv/bin/python benchmarks/aa_processes.py --runs 4 --busy --case scan_sync
    .venv/bin/python benchmarks/aa_processes.py --runs 2 -- --processes 1   # options after -- go to run

It reads ``compare``'s summary line ("N run pair(s) compared: X slower, Y faster, ..."),
so it measures whatever rule ``compare`` applies.
"""

from __future__ import annotations

import argparse
import itertools
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUMMARY = re.compile(r"(\d+) run pair\(s\) compared: (\d+) slower, (\d+) faster, (\d+) unchanged, (\d+) undecided")


def harness(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness", *args]


def run_once(folder: Path, cases: list[str], extra: list[str], busy: bool) -> tuple[float, int]:
    command = harness("run", "--results", str(folder), "--profile", "aa", *extra)
    for case in cases:
        command += ["--case", case]
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    try:
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        seconds = time.monotonic() - started
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    if done.returncode != 0:
        print(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "(no output)", file=sys.stderr)
    return seconds, done.returncode


def compare(a: Path, b: Path) -> tuple[int, dict[str, int] | None, str]:
    """Exit code of ``compare A B``, its counts (None when the summary line is not found), the summary line."""
    done = subprocess.run(harness("compare", str(a), str(b)), capture_output=True, text=True, check=False)
    found = SUMMARY.search(done.stdout)
    if found is None:
        return done.returncode, None, (done.stdout.strip().splitlines() or done.stderr.strip().splitlines() or [""])[-1]
    pairs, slower, faster, unchanged, inconclusive = (int(group) for group in found.groups())
    counts = {"pairs": pairs, "slower": slower, "faster": faster, "unchanged": unchanged, "inconclusive": inconclusive}
    return done.returncode, counts, found.group(0)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="separate invocations of harness run (default 3)")
    parser.add_argument("--case", action="append", default=[], help="case to run (repeatable; default: all)")
    parser.add_argument("--busy", action="store_true", help="keep one core busy during every invocation")
    parser.add_argument("--keep", type=Path, help="store the runs' results here instead of a temporary folder")
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="after --: options passed on to harness run")
    args = parser.parse_args()
    if args.runs < 2:
        parser.error("an A/A test needs at least two runs")
    extra = args.extra[1:] if args.extra[:1] == ["--"] else args.extra

    with tempfile.TemporaryDirectory(prefix="aa-processes-") as scratch:
        root = args.keep or Path(scratch)
        folders = []
        for i in range(args.runs):
            folder = root / f"run{i + 1}"
            seconds, code = run_once(folder, args.case, extra, args.busy)
            load = " with one core kept busy" if args.busy else ""
            print(f"run {i + 1}: {seconds:.1f} s{load}, exit code {code}", flush=True)
            folders.append(folder)

        print()
        flagged_total = compared_total = failing_pairs = 0
        for (i, a), (j, b) in itertools.combinations(enumerate(folders, start=1), 2):
            code, counts, summary = compare(a, b)
            failing_pairs += code != 0
            if counts is None:
                print(f"run {i} vs run {j}: exit code {code}; summary not understood: {summary}")
                continue
            flagged = counts["slower"] + counts["faster"]
            compared = flagged + counts["unchanged"] + counts["inconclusive"]
            flagged_total += flagged
            compared_total += compared
            print(
                f"run {i} vs run {j}: {flagged} of {compared} metric comparisons flagged "
                f"({counts['slower']} slower, {counts['faster']} faster), exit code {code}"
            )
    pairs = args.runs * (args.runs - 1) // 2
    share = f" ({flagged_total / compared_total:.1%})" if compared_total else ""
    print(
        f"\nA/A over {pairs} pairs: {flagged_total} of {compared_total} metric comparisons flagged{share}; "
        f"{failing_pairs} of {pairs} pairs exited non-zero"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
