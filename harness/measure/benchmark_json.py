"""A pytest-benchmark suite's run as a script's programs: each benchmark the program
``bench.<name>``, each round (``stats.data``) one wall sample, judged over processes as any program.

A script finds ``BENCHMARK_JSON`` in its environment, a file in the case process's scratch folder
for ``pytest --benchmark-json``. The file is untrusted: read within bounds, what is left out said
as a note. The watch's runner (``catalogue.benchmark_suite``) adds ``harness_name`` (a benchmark's
test and parameters), ``harness_cut_short`` (how many ran of how many, and why) and
``harness_phases`` (its import and collection). Standard library only: run in the script's venv.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from harness.store.bounds import MAX_MAGNITUDE
from harness.store.files import DocumentProblem, read_bounded
from harness.store.schema import StoredProgram, TimedSample

BENCHMARK_JSON = "HARNESS_BENCHMARK_JSON"  # not JAX_: results record JAX_ variables
PREFIX = "bench."  # never the harness's own ``process`` or ``json`` programs
# A suite's JSON holds every round (1,000 benchmarks of 10,000 rounds: under 200 MB), and a result
# is read back within 64 MB: what one process keeps is bounded here too.
MAX_FILE_BYTES = 32 * 2**20
MAX_BENCHMARKS = 200
MAX_COUNT = 10**6  # benchmarks a suite plans: a bound on an untrusted count, not a limit
MAX_ROUNDS = 10_000
NAME_CHARS = re.compile(r"[^A-Za-z0-9_+-]+")
CUT_SHORT = "harness_cut_short"  # the watch's runner stopped the suite before the time-out
CUT_SHORT_NOTE = "pytest-benchmark cut short"
PHASES = "harness_phases"  # the watch's runner: ns in import statements and in collection
PHASE_NAMES = ("import_ns", "collection_ns")
MAX_NAME_CHARS = 100


@dataclass
class SuiteRun:
    """What one run of the suite measured: a program per benchmark, and what was left out."""

    programs: dict[str, StoredProgram] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # Where the watch's runner stopped the suite before the time-out: benchmarks run, planned.
    cut_short: tuple[int, int] | None = None
    # The watch's runner: ns in import statements until the suite was collected, and in the rest.
    phases: dict[str, float] = field(default_factory=dict)


def program_name(fullname: str, taken: set[str]) -> str:
    """``tests/test_x.py::test_f[8]`` → ``bench.test_x_py_test_f_8``: the module by file name alone
    (the folders above may name a home folder), other characters as ``_``, a clash numbered."""
    module, _, rest = fullname.partition("::")
    short = PurePosixPath(module.replace("\\", "/")).name + (f"::{rest}" if rest else "")
    stem = NAME_CHARS.sub("_", short).strip("_")[:MAX_NAME_CHARS] or "benchmark"
    name, number = f"{PREFIX}{stem}", 2
    while name in taken:
        name, number = f"{PREFIX}{stem}_{number}", number + 1
    return name


def _rounds(stats: Any) -> list[float] | str:
    """A benchmark's rounds in nanoseconds, or why there are none."""
    data = stats.get("data") if isinstance(stats, dict) else None
    if not isinstance(data, list) or not data:
        return "no rounds (stats.data) in its entry"
    rounds = []
    for value in data[:MAX_ROUNDS]:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "a round that is not a number"
        ns = float(value) * 1e9
        if not (math.isfinite(ns) and 0 <= ns <= MAX_MAGNITUDE):
            return f"a round of {value!r} s, which no measurement gives"
        rounds.append(ns)
    return rounds


def read_suite_run(path: Path) -> SuiteRun:
    """The benchmarks in pytest-benchmark's JSON at ``path``; none (with a note) if it has none."""
    run = SuiteRun()
    try:
        document = json.loads(read_bounded(path, limit=MAX_FILE_BYTES, follow_links=False))
    except FileNotFoundError:
        return run  # a script that is no pytest-benchmark suite writes nothing there
    except (OSError, DocumentProblem, ValueError, RecursionError) as exc:
        run.notes.append(f"pytest-benchmark's JSON not read: {str(exc)[:200]}")
        return run
    document = document if isinstance(document, dict) else {}
    if isinstance(cut := document.get(CUT_SHORT), dict):  # the runner stopped the suite early
        counts = (cut.get("ran"), cut.get("planned"))
        if all(type(n) is int and 0 <= n <= MAX_COUNT for n in counts):
            run.cut_short = (int(cut["ran"]), int(cut["planned"]))
        run.notes.append(f"{CUT_SHORT_NOTE}: {str(cut.get('said', ''))[:300]}")
    if isinstance(phases := document.get(PHASES), dict):
        run.phases = {
            name: float(ns)
            for name in PHASE_NAMES
            if type(ns := phases.get(name)) is int and 0 <= ns <= MAX_MAGNITUDE
        }
    if not isinstance(benchmarks := document.get("benchmarks"), list):
        run.notes.append("pytest-benchmark's JSON has no list of benchmarks")
        return run
    if len(benchmarks) > MAX_BENCHMARKS:
        kept = f"the first {MAX_BENCHMARKS} kept, the rest left out"
        run.notes.append(f"{len(benchmarks)} benchmarks; {kept}")
    for entry in benchmarks[:MAX_BENCHMARKS]:
        if not isinstance(entry, dict):
            continue
        # The watch's runner names a benchmark by its test and parameters; pytest's own name
        # numbers a parameter it cannot spell.
        fullname = entry.get("harness_name") or entry.get("fullname") or entry.get("name")
        if not isinstance(fullname, str):
            run.notes.append("a benchmark without a name left out")
            continue
        rounds = _rounds(entry.get("stats"))
        name = program_name(fullname, set(run.programs))
        if isinstance(rounds, str):
            run.notes.append(f"benchmark {name}: {rounds}; left out")
            continue
        if len(entry["stats"]["data"]) > MAX_ROUNDS:
            run.notes.append(f"benchmark {name}: only its first {MAX_ROUNDS} rounds kept")
        run.programs[name] = StoredProgram(
            steps=(name,),
            samples=tuple(TimedSample((ns,), ns) for ns in rounds),
            stopped_by="pytest-benchmark rounds",
            kinds=("wall",),
        )
    return run
