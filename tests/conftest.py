from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from harness.measure.locks import LOCK_DIR_VARIABLE, TIMING_LOCK_DIR_VARIABLE
from harness.store.results import StoredResult, load_results
from harness.store.schema import SCHEMA_VERSION

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parent.parent


def nox_in_repo(
    *args: str, env: Mapping[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    """``nox ARGS`` in the repository, taking turns (``nox_turns``) with the other test workers'
    (``pytest -n``) runs that would make or install into the same venv under ``.nox``.

    A named session's venv not made yet is made first, alone (``nox --install-only ARGS`` under
    every run's lock), so that the run itself, minutes of measuring, holds only its session's lock:
    held for the whole first run, every run's lock kept the other worker's first runs waiting."""

    def nox(*words: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "nox", *words]
        return subprocess.run(
            command, cwd=REPO, capture_output=True, text=True, env=env, timeout=timeout, check=False
        )

    if (sessions := named_sessions(args)) and not all(map(installed, sessions)):
        with repo_locks(EVERY_NOX_RUN, *session_locks(sessions)):
            nox("--install-only", *args)  # bad posargs: said again by the run below
    with nox_turns(args):
        return nox(*args)


# Every nox run's lock, and the sessions' own; the release venvs a session has the harness make are
# under the harness's venv locks, which the workers share (``locks_of_the_run``).
EVERY_NOX_RUN = "tests.lock"


def nox_turns(args: tuple[str, ...]) -> AbstractContextManager[None]:
    """The locks a nox run in the repository takes: each session it names (two runs of one session
    reuse one venv), and before them every run's (``checkout_turn``) where a session's venv is not
    installed yet (nox makes it, then installs this checkout, writing its egg-info here) or the run
    names no plain session."""
    sessions = named_sessions(args)
    first = [] if sessions and all(map(installed, sessions)) else [EVERY_NOX_RUN]
    return repo_locks(*first, *session_locks(sessions))


def installed(session: str) -> bool:
    """Whether the session's venv under ``.nox`` is made and installed (the noxfile's marker)."""
    return (REPO / ".nox" / session / ".harness-installed").is_file()


def session_locks(sessions: set[str]) -> list[str]:
    return [f"tests-{name}.lock" for name in sorted(sessions)]


def checkout_turn() -> AbstractContextManager[None]:
    """Every nox run's lock: held while this checkout is built (its egg-info written here)."""
    return repo_locks(EVERY_NOX_RUN)


def named_sessions(args: tuple[str, ...]) -> set[str]:
    """The sessions ``nox ARGS`` names with ``-s``; none where one is not a plain name (its venv's
    folder another)."""
    named, naming = set(), False
    for word in args[: args.index("--")] if "--" in args else args:
        if word.startswith("-"):
            naming = word in ("-s", "--session", "--sessions", "-e")
        elif naming:
            named.add(word)
    return named if all(re.fullmatch(r"\w+", name) for name in named) else set()


@contextmanager
def repo_locks(*names: str) -> Iterator[None]:
    """Hold the lock files ``names`` under the repository's ``.nox``, taken in this order (every
    caller takes them so: none waits on another that waits on it)."""
    (REPO / ".nox").mkdir(exist_ok=True)
    with ExitStack() as held:
        for name in names:
            lock = held.enter_context((REPO / ".nox" / name).open("a"))
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


# The modules whose tests run nox in the repository, longest first: minutes each, so xdist hands
# them out first (``--dist=loadscope``: each module whole, on one worker, its module-scoped fixtures
# made once), and the workers share them out.  They take turns only where two would make or
# install into one venv (``nox_turns``); a release venv two need is made once, by the first
# (the harness's venv lock). tests/test_layout.py holds the list to the modules that call nox.
NOX_MODULES = (
    "tests/commands/test_watch.py",
    "tests/commands/test_libraries.py",
    "tests/commands/test_issue.py",
    "tests/commands/test_release_commands.py",
    "tests/commands/test_packaged_sessions.py",
    "tests/test_docs_commands.py",
    "tests/test_noxfile.py",
)


# The other modules whose real processes keep a worker longest (a minute or more each, by
# ``--durations``), longest first: handed out right after the nox modules, so that none of them,
# started last, leaves the other worker idle while it runs.
LONGEST_MODULES = (
    "tests/commands/test_shapes_commands.py",
    "tests/test_cli_script.py",
    "tests/catalogue/test_benchmark_suite.py",
    "tests/analysis/test_simulated_procedure.py",
    "tests/measure/test_resume.py",
    "tests/catalogue/test_cases.py",
    "tests/measure/test_runner.py",
    "tests/steps/test_suite_floor.py",
    "tests/explain/test_reproducer.py",
    "tests/commands/test_status_commands.py",
    "tests/test_main.py",
    "tests/catalogue/test_scaffold.py",
    "tests/test_end_to_end.py",
    "tests/explain/test_defaults.py",
)
HANDED_OUT_FIRST = (*NOX_MODULES, *LONGEST_MODULES)


def handed_out(nodeid: str) -> int:
    """When xdist hands a test's module out: the nox modules, then the longest others, each
    group longest first; then the rest, in the order collected."""
    module = nodeid.split("::", 1)[0]
    return HANDED_OUT_FIRST.index(module) if module in HANDED_OUT_FIRST else len(HANDED_OUT_FIRST)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's own scheduler, handing the scopes out in the order collected (``handed_out``), not
    the most tests first."""
    config.option.loadscopereorder = False
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest modules first (xdist hands out scopes in the order collected)."""
    items.sort(key=lambda item: handed_out(item.nodeid))


@pytest.fixture
def fixture_cases() -> Path:
    return FIXTURES / "cases"


def harness_command(*args: str) -> list[str]:
    """``python -m harness ARGS`` with this interpreter, as a subprocess runs it."""
    return [sys.executable, "-m", "harness", *args]


def stored_in(*folders: Path) -> list[StoredResult]:
    """Every result stored under ``folders``, none of them unusable."""
    found = []
    for folder in folders:
        results, problems = load_results(folder)
        assert problems == [], problems
        found += results
    return found


def as_stored(data: dict, path: Path = FIXTURES / "results" / "x.json") -> StoredResult:
    """A result document as the harness reads it, as if stored at ``path``."""
    return StoredResult.from_document(path, data)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs: a zombie has ended, whoever has yet to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def fixture_result() -> dict:
    """A real stored result (async_dispatch on jax 0.12.0.1), as loaded JSON."""
    return real_result("async_dispatch-0.12.0.1")


def real_result(name: str) -> dict:
    """A real stored result (stored as schema version 2, measured in several processes) from
    ``fixtures/results``, as the newest version (``migrations.upgrade``)."""
    from harness.store.migrations import upgrade

    return upgrade(json.loads((FIXTURES / "results" / f"{name}.json").read_text()))


def v1_result(name: str) -> dict:
    """A real result as version 1 of the schema stored it (one process), from ``fixtures/v1``."""
    return json.loads((FIXTURES / "v1" / f"{name}.json").read_text())


def _scale_measurements(record: dict, scale: float) -> None:
    for program in record.get("programs", {}).values():
        for sample in program["samples"]:
            sample["wall_ns"] = round(sample["wall_ns"] * scale)
            sample["marks_ns"] = [round(m * scale) for m in sample["marks_ns"]]
    for function in record.get("compiled", {}).values():
        for key in ("lower_ns", "compile_ns"):
            function[key] = [round(v * scale) for v in function.get(key, [])]


# Processes a side that let sides measured together reach a verdict: the rank guard's floor with 5
# and 5 is 0.0079, above the level (harness.analysis.rank_test); with 10 and 10 it is 1.1e-5.
DECIDING_PROCESSES = 10


def with_processes(data: dict, count: int = DECIDING_PROCESSES) -> dict:
    """The result with its processes repeated in turn up to ``count`` (a test-only stand-in for a
    run that measured more of them)."""
    processes = data["processes"]
    grown = []
    for index in range(count):
        process = json.loads(json.dumps(processes[index % len(processes)]))
        process["index"] = index
        grown.append(process)
    return data | {"processes": grown}


def derive(
    data: dict,
    *,
    release: str | None = None,
    scale: float = 1.0,
    processes: int = DECIDING_PROCESSES,
    **changes,
) -> dict:
    """A copy of a stored result posing as another run: a new id, optionally another
    release, every raw sample multiplied by ``scale`` (a test-only injected change), and its
    processes repeated up to ``processes`` (``with_processes``), so that copies measured together
    can differ."""
    several = "processes" in data and len(data["processes"]) > 1
    copy = with_processes(data, processes) if several else json.loads(json.dumps(data))
    copy.update(changes)
    if release:
        copy["release"] = release
    copy["id"] = f"{copy['id']}-{copy['release']}-{copy['profile']}-{scale:g}"
    for record in copy.get("processes", [copy]):
        _scale_measurements(record, scale)
    return copy


# How a fake process died (``ProcessEnd`` as JSON, with its status): for ``FakeReleases``' scales.
SEGFAULT = {
    "status": "crashed",
    "how": "signal",
    "signal": "SIGSEGV",
    "exit_status": 139,
    "last_lines": "Fatal Python error: Segmentation fault",
}
TERMINATED = {
    "status": "crashed",
    "how": "signal",
    "signal": "SIGTERM",
    "exit_status": 143,
    "from_outside": True,
}


def died(data: dict, end: dict) -> dict:
    """The result with its processes dead as ``end`` says (its first ``end["processes"]``, or every
    one); the result's status the first that is not ok, as a cell's is.  Returns it."""
    end = dict(end)
    status, count = end.pop("status"), end.pop("processes", None)
    processes = data["processes"]
    for process in processes[:count]:
        index = process.get("index", 0)
        process.clear()
        process.update(
            index=index, status=status, detail=f"killed by {end.get('signal')}", died=end
        )
    data["status"] = next((p["status"] for p in processes if p["status"] != "ok"), "ok")
    return data


def set_claim(data: dict, holds: bool) -> dict:
    """The result with the claim verdict of every process set (a test-only change); returns it."""
    for record in data.get("processes", [data]):
        if record.get("claim"):
            record["claim"]["holds"] = holds
    return data


def in_processes(data: dict, statuses: list[str], holds: list[bool] | None = None) -> dict:
    """A result posing as a cell measured in one process per status (the newest version), made from
    the result's first process: process i has every raw sample multiplied by i + 1 (a test-only
    injection) and, with ``holds``, that claim verdict.  Only processes that finished ok carry
    measurements."""
    template = data["processes"][0] if "processes" in data else data
    measured = ("programs", "compiled", "claim", "jax", "peak_rss_bytes")
    processes = []
    for index, status in enumerate(statuses):
        scaled = json.loads(json.dumps({key: template[key] for key in measured if key in template}))
        _scale_measurements(scaled, index + 1)
        if holds is not None:
            scaled["claim"] = {"holds": holds[index], "evidence": f"process {index}"}
        finished = scaled if status == "ok" else {}
        processes.append({"index": index, "status": status, "detail": "", **finished})
    cell = {key: value for key, value in data.items() if key not in (*measured, "processes")}
    first_bad = next((s for s in statuses if s != "ok"), "ok")
    return cell | {
        "schema_version": SCHEMA_VERSION,
        "processes": processes,
        "status": first_bad,
        "interleaved_with": [],
    }


def document(stored) -> dict:
    """A stored result's document exactly as its file holds it (any schema version)."""
    return json.loads(stored.path.read_text())


def write_results(folder: Path, records: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for record in records:
        (folder / f"{record['id']}.json").write_text(json.dumps(record))
    return folder


@pytest.fixture(autouse=True, scope="session")
def interruptible_children() -> Iterator[None]:
    """Ctrl-C reaches the harness processes the tests start and interrupt, even where this suite was
    started in the background by a shell that ignores SIGINT there (an ignored signal stays ignored
    across exec; a handled one is reset to the default, which Python turns into
    KeyboardInterrupt)."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.fixture(autouse=True, scope="session")
def locks_of_the_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The tests take locks of their own, so a sweep running on the machine does not stall them:
    the measurement lock each worker's own (``pytest -n``: what a test times, it only reads the
    shape of), the venv locks shared by the run's workers, so that two of them needing one release
    venv under ``.nox`` make it once."""
    worker = tmp_path_factory.getbasetemp()
    run = worker.parent if os.environ.get("PYTEST_XDIST_WORKER") else worker
    (run / "locks").mkdir(exist_ok=True)  # every worker's basetemp is in the run's
    wanted = {
        LOCK_DIR_VARIABLE: run / "locks",
        TIMING_LOCK_DIR_VARIABLE: tmp_path_factory.mktemp("timing-lock"),
        "XDG_RUNTIME_DIR": tmp_path_factory.mktemp("xdg_runtime_dir"),
    }
    previous = {name: os.environ.get(name) for name in wanted}
    os.environ.update({name: str(folder) for name, folder in wanted.items()})
    yield
    for name, value in previous.items():
        if value is None:
            del os.environ[name]
        else:
            os.environ[name] = value


def tables(markdown: str) -> list[list[str]]:
    """The markdown tables in a text, each as its lines."""
    found, current = [], []
    for line in markdown.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            found.append(current)
            current = []
    if current:
        found.append(current)
    return found


def assert_valid_tables(markdown: str) -> None:
    """Every table has a separator row and the same number of (unescaped) columns in each row."""
    found = tables(markdown)
    for table in found:
        header, separator, *rows = table
        columns = _columns(header)
        assert re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", separator.replace(" ", "")), separator
        assert _columns(separator) == columns
        assert all(_columns(row) == columns for row in rows), table


def _columns(row: str) -> int:
    return len(re.findall(r"(?<!\\)\|", row))


class FakeReleases:
    """Stands in for the release prober (``harness.steps.probes.ProbeRelease``): logic tests only.

    Each release's result is the real async_dispatch result posing as that release,
    with every sample multiplied by its scale; ``None`` is a release that cannot be
    installed, ``"failed"`` one whose run failed, a dict (``SEGFAULT``) one whose every process died
    so (``died``), or whose first ``"processes"`` did (a list of them: each in turn).  ``again``
    gives the scale of a second measurement, ``holds`` overrides the claim verdict.  Every call is
    logged.
    """

    def __init__(
        self, scales: dict, *, again: dict | None = None, holds: dict | None = None
    ) -> None:
        self.scales = scales
        self.again = again or {}
        self.holds = holds or {}
        self.calls: list[tuple[str, bool]] = []

    @property
    def releases(self) -> list[str]:
        return list(self.scales)

    def __call__(self, release: str, again: bool = False):
        from harness.steps.probes import Probe
        from harness.store.results import StoredResult

        self.calls.append((release, again))
        self.current = release  # the release ``adjust`` is asked for
        scale = self.again.get(release, self.scales[release]) if again else self.scales[release]
        if scale is None:
            return Probe(release, None, "could not be installed: fake")
        base = self.base()
        if scale == "failed":
            data = derive(
                base, release=release, status="failed", detail="exit code 1\nRuntimeError: fake"
            )
        elif isinstance(scale, dict | list):
            data = derive(base, release=release)
            for end in scale if isinstance(scale, list) else [scale]:
                died(data, end)
        else:
            data = derive(base, release=release, scale=scale)
            self.adjust(data, scale)
        if release in self.holds:
            set_claim(data, self.holds[release])
        return Probe(
            release,
            StoredResult.from_document(Path(f"{data['id']}.json"), data),
            "fake measurement",
        )

    def base(self) -> dict:
        return real_result("async_dispatch-0.12.0.1")

    def adjust(self, data: dict, scale: float) -> None:
        """What a subclass changes beyond the samples' scale."""


SCRIPT_RESULT = FIXTURES / "compare" / "a" / "script-loop_json" / "jax-0.12.0.1" / "default"


class FakeScriptReleases(FakeReleases):
    """``FakeReleases`` of a plain script: a real run of ``loop_json.py`` (6 processes; its own
    numbers ``json.*``, JAX's phases and the process's) posing as each release, every figure scaled
    too (its own numbers, the phases, the import), so that a step moves the script's metrics and
    JAX's together."""

    def base(self) -> dict:
        [path] = SCRIPT_RESULT.glob("*.json")
        return json.loads(path.read_text())

    def adjust(self, data: dict, scale: float) -> None:
        for index, record in enumerate(data["processes"]):
            # A spread of ±1 % between processes: a step is a change beyond it, not a number that
            # never varies.
            spread = 1 + 0.01 * ((index % 3) - 1)
            record["figures"] = {
                name: value * scale * spread for name, value in record["figures"].items()
            }


@pytest.fixture
def two_sets(tmp_path) -> list[str]:
    """Two result folders holding the same real result: ``compare``'s arguments where nothing
    differs."""
    for side in ("a", "b"):
        (tmp_path / side).mkdir()
        (tmp_path / side / "r.json").write_bytes(
            (FIXTURES / "results" / "scan_sync-0.12.0.1.json").read_bytes()
        )
    return [str(tmp_path / "a"), str(tmp_path / "b")]
