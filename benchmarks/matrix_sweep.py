"""Time the quick CPU matrix sweep (releases × CPU profiles × cases) and break it down.

Not a test: it takes many minutes.  For every ``repro`` session whose profile
starts with ``cpu`` (or those matching ``--keyword``), it times

- ``nox -s S --install-only``: venv creation and install (warm uv cache),
- ``nox -s S --no-install -- --results DIR``: the harness run,

then splits the harness run with the phases each child records (JAX import,
backend start, building inputs, compile, measurement, environment facts) and the
rest (process start-up, nox and harness overhead), and finally times the report.
Writes a markdown summary to ``--out``.

    python benchmarks/matrix_sweep.py --label before --out reports/benchmarks/matrix-before.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PHASES = ("import", "backend", "build", "compile", "measure", "facts")


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stderr[-2000:]}")
    return time.perf_counter() - start


def sessions(keyword: str) -> list[str]:
    listed = subprocess.run(
        ["nox", "-l", "--json", "-k", keyword], cwd=REPO, capture_output=True, text=True, check=True
    )
    return [
        s["session"]
        for s in json.loads(listed.stdout)
        if s["call_spec"].get("profile", "").startswith("cpu")
    ]


def child_phases(results: Path) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for path in results.rglob("*.json"):
        record = json.loads(path.read_text())
        totals["case runs"] += record.get("duration_s", 0.0)
        # Schema version 2 keeps each case process's phases apart;
        # version 1 had one process at the top.
        for process in record.get("processes", [record]):
            for phase, seconds in process.get("phases_s", {}).items():
                totals[phase] += seconds
            totals["processes"] += 1
        totals["runs"] += 1
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--keyword", default="repro", help="nox -k expression selecting sessions")
    parser.add_argument("--label", default="sweep")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "harness_args", nargs="*", help="extra arguments for the harness run (after --)"
    )
    args = parser.parse_args()

    chosen = sessions(args.keyword)
    rows = []
    totals: dict[str, float] = defaultdict(float)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sweep-") as scratch:
        for index, session in enumerate(chosen, start=1):
            results = Path(scratch) / f"s{index}"
            install = timed(["nox", "-s", session, "--install-only"])
            run = timed(
                [
                    "nox",
                    "-s",
                    session,
                    "--no-install",
                    "--",
                    "--results",
                    str(results),
                    *args.harness_args,
                ]
            )
            phases = child_phases(results)
            other = run - sum(phases[p] for p in PHASES)
            rows.append((session, install, run, phases, other))
            totals["install"] += install
            totals["run"] += run
            totals["other"] += other
            for phase in (*PHASES, "runs"):
                totals[phase] += phases[phase]
            print(
                f"({index}/{len(chosen)}) {session}: install {install:.1f} s, run {run:.1f} s "
                f"({int(phases['runs'])} case runs)",
                file=sys.stderr,
                flush=True,
            )
        all_results = Path(scratch) / "all"
        all_results.mkdir()
        for index in range(1, len(chosen) + 1):
            for path in (Path(scratch) / f"s{index}").rglob("*.json"):
                target = all_results / f"s{index}-{path.name}"
                target.write_bytes(path.read_bytes())
        report = timed(
            [
                "nox",
                "-s",
                "report",
                "--",
                "--results",
                str(all_results),
                "--out",
                str(Path(scratch) / "r"),
            ]
        )
    wall = time.perf_counter() - started

    lines = [
        f"# Matrix sweep benchmark: {args.label}",
        "",
        f"{len(chosen)} sessions, {int(totals['runs'])} case runs, harness arguments: "
        f"`{' '.join(args.harness_args) or '(defaults)'}`; wall time **{wall / 60:.1f} min**.",
        "",
        "| part | seconds | share |",
        "|---|---|---|",
    ]
    parts = {
        "venv + install (nox --install-only)": totals["install"],
        "JAX import (in each case process)": totals["import"],
        "backend start": totals["backend"],
        "building inputs": totals["build"],
        "compile (cold lower + compile)": totals["compile"],
        "measurement (first call, warm-up, samples)": totals["measure"],
        "environment facts": totals["facts"],
        "process start-up, nox and harness overhead": totals["other"],
        "report": report,
    }
    for part, seconds in parts.items():
        lines.append(f"| {part} | {seconds:.1f} | {seconds / wall:.0%} |")
    lines += [
        "",
        "| session | install s | run s | case runs | import s | measure s | other s |",
        "|---|---|---|---|---|---|---|",
    ]
    for session, install, run, phases, other in rows:
        lines.append(
            f"| `{session}` | {install:.1f} | {run:.1f} | {int(phases['runs'])} "
            f"| {phases['import']:.1f} | "
            f"{phases['measure']:.1f} | {other:.1f} |"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:16]))


if __name__ == "__main__":
    main()
