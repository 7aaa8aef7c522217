"""How often does a triage or bisect give the right answer?  The same command, run again and
again from scratch.

Runs one ``nox -s triage|bisect -- ...`` command ``--runs`` times, each into a results and
reports folder of its own (so nothing measured by one run is reused by the next; the release
venvs are), optionally with one CPU-bound process kept busy for the whole run (``--busy``: the
load a shared machine or CI runner sees), and counts the runs whose output has a line matching
``--expect`` (a regular expression, e.g. the answer "slower ×[0-9.]+ since 0.5.1"), with their exit
codes and wall times.

    python benchmarks/repeat_answers.py --runs 5 --busy --expect 'first bad 0\\.5\\.1' -- \\
        bisect -- --script benchmarks/regressions/reg_square_cpu.py --script-arg 256 \\
        --metric process.wall_ns --good 0.4.38 --bad 0.5.3

Everything after the first ``--`` is the nox session and its arguments; ``--results`` and ``--out``
are added.  Not a test: each run takes minutes.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def one_run(session: list[str], root: Path, busy: bool) -> tuple[int, float, str]:
    """Exit code, wall time and the whole output of one run of the session, into folders of its
    own."""
    command = [
        sys.executable,
        "-m",
        "nox",
        "-R",
        "-s",
        *session,
        "--results",
        str(root / "results"),
    ]
    command += ["--out", str(root / "reports")]
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if busy else None
    try:
        started = time.monotonic()
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
        seconds = time.monotonic() - started
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    return done.returncode, seconds, done.stdout + done.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of the command (default 5)")
    parser.add_argument("--busy", action="store_true", help="keep one core busy during every run")
    parser.add_argument(
        "--expect", required=True, help="a regular expression the right answer's line matches"
    )
    parser.add_argument("--keep", type=Path, help="keep every run's folders and output here")
    parser.add_argument(
        "session", nargs=argparse.REMAINDER, help="after --: the nox session and its arguments"
    )
    args = parser.parse_args()
    session = args.session[1:] if args.session[:1] == ["--"] else args.session
    if not session:
        parser.error("give the nox session after --, e.g. -- triage -- --script F --from A --to B")
    expect = re.compile(args.expect)
    right, seconds, codes = 0, [], []
    with tempfile.TemporaryDirectory(prefix="repeat-answers-") as scratch:
        base = args.keep or Path(scratch)
        for number in range(1, args.runs + 1):
            root = base / f"run{number}"
            root.mkdir(parents=True, exist_ok=True)
            code, wall, output = one_run(session, root, args.busy)
            (root / "output.txt").write_text(output)
            matched = [line for line in output.splitlines() if expect.search(line)]
            right += bool(matched)
            seconds.append(wall)
            codes.append(code)
            said = matched[0].strip()[:160] if matched else "no line matches"
            print(
                f"run {number}: exit {code}, {wall:.0f} s, "
                f"{'right' if matched else 'NOT right'}: {said}",
                flush=True,
            )
    load = ", one core kept busy" if args.busy else ""
    print(
        f"\n{right} of {args.runs} runs gave the expected answer{load}; exit codes {codes}; "
        "wall time median "
        f"{statistics.median(seconds):.0f} s (min {min(seconds):.0f}, max {max(seconds):.0f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
