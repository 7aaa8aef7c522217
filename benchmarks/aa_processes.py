"""A/A test of whole invocations: how often does ``compare`` flag a change between runs of the
same release?

Runs the quick catalogue (or the ``--case`` ones) ``--runs`` times, each a separate
``python -m harness run`` into a results folder of its own (as separate CI runs would
be), then runs ``python -m harness compare`` on every pair of folders.  Nothing changed
between the runs, so every metric comparison flagged *slower* or *faster* is a false
alarm, and every pair that exits 1 would have failed a CI check for nothing.  With
``--busy`` one CPU-bound process, started by this benchmark before each invocation and
stopped after it, keeps a core busy throughout (the load a shared CI runner sees).

Run it with the interpreter that has JAX and the harness, while nothing else loads the
machine, e.g.:

    .venv/bin/python benchmarks/aa_processes.py    # 3 runs of the quick catalogue
    .venv/bin/python benchmarks/aa_processes.py --runs 4 --busy --case scan_sync
    # options after -- go to run:
    .venv/bin/python benchmarks/aa_processes.py --runs 2 -- --processes 1

It reads ``compare``'s summary line ("N run pair(s) compared: X slower, Y faster, ..."),
so it measures whatever rule ``compare`` applies.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUMMARY = re.compile(
    r"(\d+) run pair\(s\) compared: (\d+) slower, (\d+) faster, (\d+) unchanged, (\d+) undecided"
)


def harness(*args: str) -> list[str]:
    return [sys.executable, "-m", "harness", *args]


def sides_plan(folder: Path) -> Path:
    """Two sides of this interpreter's release under the profile labels a and b: one run measures
    both, interleaved, until decided, and ``compare`` judges a against b as it judges any two sides
    of one run."""
    folder.mkdir(parents=True, exist_ok=True)
    plan = folder.parent / f"{folder.name}-sides.json"
    release = harness_output("-c", "import jax; print(jax.__version__)")
    sides = [
        {"release": release, "profile": label, "interpreter": sys.executable}
        for label in ("a", "b")
    ]
    plan.write_text(json.dumps(sides))
    return plan


def harness_output(*args: str) -> str:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def run_once(
    folder: Path, cases: list[str], extra: list[str], busy: bool, interleaved: bool = False
) -> tuple[float, int]:
    where = ["--sides", str(sides_plan(folder))] if interleaved else ["--profile", "aa"]
    command = harness("run", "--results", str(folder), *where, *extra)
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
        print(
            done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "(no output)",
            file=sys.stderr,
        )
    return seconds, done.returncode


def compare(a: Path, b: Path, *which: str) -> tuple[int, dict[str, int] | None, str]:
    """Exit code of ``compare A B``, its counts (None when the summary line is not found), the
    summary line."""
    done = subprocess.run(
        harness("compare", str(a), str(b), *which), capture_output=True, text=True, check=False
    )
    found = SUMMARY.search(done.stdout)
    if found is None:
        return (
            done.returncode,
            None,
            (done.stdout.strip().splitlines() or done.stderr.strip().splitlines() or [""])[-1],
        )
    pairs, slower, faster, unchanged, inconclusive = (int(group) for group in found.groups())
    counts = {
        "pairs": pairs,
        "slower": slower,
        "faster": faster,
        "unchanged": unchanged,
        "inconclusive": inconclusive,
    }
    return done.returncode, counts, found.group(0)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=3, help="separate invocations of harness run (default 3)"
    )
    parser.add_argument(
        "--case", action="append", default=[], help="case to run (repeatable; default: all)"
    )
    parser.add_argument(
        "--busy", action="store_true", help="keep one core busy during every invocation"
    )
    parser.add_argument(
        "--keep", type=Path, help="store the runs' results here instead of a temporary folder"
    )
    parser.add_argument(
        "--interleaved",
        action="store_true",
        help="each run measures two sides of this release (profiles a and b) interleaved, "
        "until decided, and "
        "compares them; --runs such runs (at least 1), instead of separate runs compared pairwise",
    )
    parser.add_argument(
        "extra", nargs=argparse.REMAINDER, help="after --: options passed on to harness run"
    )
    args = parser.parse_args()
    if args.runs < (1 if args.interleaved else 2):
        parser.error("an A/A test needs at least two runs (one with --interleaved)")
    extra = args.extra[1:] if args.extra[:1] == ["--"] else args.extra

    with tempfile.TemporaryDirectory(prefix="aa-processes-") as scratch:
        root = args.keep or Path(scratch)
        folders = []
        for i in range(args.runs):
            folder = root / f"run{i + 1}"
            seconds, code = run_once(folder, args.case, extra, args.busy, args.interleaved)
            load = " with one core kept busy" if args.busy else ""
            print(f"run {i + 1}: {seconds:.1f} s{load}, exit code {code}", flush=True)
            folders.append(folder)

        print()
        flagged_total = compared_total = failing_pairs = 0
        pairs_compared: list[tuple[tuple[int, Path], tuple[int, Path], tuple[str, ...]]]
        if args.interleaved:
            by_label = ("--a-profile", "a", "--b-profile", "b")
            pairs_compared = [((i, f), (i, f), by_label) for i, f in enumerate(folders, start=1)]
        else:
            pairs_compared = [
                (a, b, ()) for a, b in itertools.combinations(enumerate(folders, start=1), 2)
            ]
        for (i, a), (j, b), which in pairs_compared:
            code, counts, summary = compare(a, b, *which)
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
    pairs = args.runs if args.interleaved else args.runs * (args.runs - 1) // 2
    share = f" ({flagged_total / compared_total:.1%})" if compared_total else ""
    print(
        f"\nA/A over {pairs} pairs: "
        f"{flagged_total} of {compared_total} metric comparisons flagged{share}; "
        f"{failing_pairs} of {pairs} pairs exited non-zero"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
