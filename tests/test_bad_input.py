"""Malformed command lines, table-driven: each is one ``harness: error:`` line and exit 2, never a
traceback, and nothing is measured, installed or written before the refusal.  The same for nox
sessions' posargs, which the noxfile checks with ``session_view`` (and ``interleaved_request``)
before installing anything."""

import pytest

from harness.cli.sessions import interleaved_request, release_run_view, session_view
from harness.errors import UsageError
from harness.main import main

from .conftest import FIXTURES, REPO

HUGE = "9" * 201
RANGE = ["scan_sync", "--good", "0.4.26", "--bad", "0.4.35"]
SWEEP = ["scan_sync", "--from", "0.4.26", "--to", "0.4.35"]

# Each command line runs with --results / --out / --into pointing into a folder that must stay
# empty.
BAD_RUNS = [
    ["--case", "nope"],
    ["--case", ""],
    ["--size", "N="],
    ["--size", f"N={HUGE}"],
    ["--size", "N=-3"],
    ["--size", "N=0"],
    ["--size", "N=1.5"],
    ["--size", "N=１２"],
    ["--size", "N=1_000"],
    ["--size", "=5"],
    ["--size", "../N=5"],
    ["--size", "N"],
    ["--size", "N=100", "--size", "N=200"],
    ["--size", "Q=5", "--case", "scan_sync"],
    ["--effort", "slow"],
    ["--repeats", "0"],
    ["--repeats", "-1"],
    ["--repeats", "ten"],
    ["--repeats", HUGE],
    ["--repeats", "１０"],
    ["--warmup", "x"],
    ["--timeout", "inf"],
    ["--timeout", "nan"],
    ["--timeout", "0"],
    ["--timeout", "-1"],
    ["--max-seconds", "inf"],
    ["--max-seconds", "0"],
    ["--processes", "0"],
    ["--processes", "many"],
    ["--min-sample-time", "-1"],
    ["--min-sample-time", "inf"],
    ["--affinity", "x"],
    ["--affinity", "9999"],
    ["--affinity", "1-0"],
    ["--max-load", "-2"],
    ["--target-ratio", "1"],
    ["--target-ratio", "1.02"],
    ["--target-ratio", "x"],
    ["--max-processes", "10"],
    ["--target-kind", "wall"],
    ["--target-ratio", "1.1", "--target-kind", "speed"],
    ["--target-ratio", "1.1", "--max-processes", "4", "--processes", "5"],
    ["--target-ratio", "1.1", "--max-processes", "0"],
    ["--budget", "memory=lots"],
    ["--budget", "time=5"],
    ["--budget", "flops"],
    ["--seed", "x"],
    ["--isolation", "thread"],
    ["--force", "--retry-failed"],
    ["--profile", ""],
    ["--profile", ".."],
    ["--profile", "a/b"],
    ["--results", ""],
    ["--cases-dir", "/nonexistent-cases"],
    ["--sides", "/nonexistent-plan.json"],
    ["--sides", "PLAN_NOT_JSON"],
    ["--bogus"],
    ["extra-positional"],
    ["--script", "MISSING_SCRIPT"],
    ["--script", "OUT_FOLDER"],
    ["--script", "BAD_NAME_SCRIPT"],
    ["--script", "BINARY_SCRIPT"],
    ["--script", ""],
    ["--script", "SCRIPT", "--case", "scan_sync"],
    ["--script", "SCRIPT", "--size", "N=3"],
]
BAD_SEARCHES = [
    [],
    ["nope"],
    ["scan_sync", "--size", "N=x"],
    ["scan_sync", "--size", f"M={HUGE}"],
    ["scan_sync", "--max-examples", "0"],
    ["scan_sync", "--confirm", "-1"],
    ["scan_sync", "--timeout", "inf"],
    ["scan_sync", "--profile", "../x"],
    ["scan_sync", "--jax", "9.9"],
    ["scan_sync", "--holds", "yes"],
]
BAD_EXPORTS = [
    [],
    ["nope"],
    ["scan_sync", "--size", "N=0"],
    ["scan_sync", "--size", "Q=3"],
    ["scan_sync", "--repeats", "0"],
    ["scan_sync", "--out", "OUT_FOLDER"],
    ["scan_sync", "--out", "MISSING_FOLDER/x.py"],
    ["scan_sync", "--out", ""],
]
BAD_ISSUES = [
    [],
    ["nope"],
    ["scan_sync", "--size", "N=abc"],
    ["scan_sync", "--timeout", "nan"],
    ["scan_sync", "--profile", ".."],
    ["scan_sync", "--jax", "9.9"],
    ["--script", "MISSING_SCRIPT"],
    ["--script", "BAD_NAME_SCRIPT"],
    ["scan_sync", "--script", "SCRIPT"],
    ["scan_sync", "--jax", "latest"],
    ["scan_sync", "--jax", "0.4.31; rm -rf /"],
    ["scan_sync", "--jax", ""],
    ["scan_sync", "--good", "0.4.31"],
    ["scan_sync", "--bad", "0.4.33"],
    ["scan_sync", "--good", "0.4.33", "--bad", "0.4.31"],
    ["scan_sync", "--good", "0.4.31", "--bad", "0.4.31"],
    ["scan_sync", "--good", "v0.4.31", "--bad", "0.4.33"],
    ["scan_sync", "--metric", "two_scans"],
    ["scan_sync", "--metric", "two_scans.speed_ns"],
    ["scan_sync", "--releases", "PLAN_NOT_JSON"],
    ["scan_sync", "--releases", "/nonexistent/plan.json"],
    ["scan_sync", "--releases", ""],
    ["scan_sync", "--out", "A_FILE"],
    ["scan_sync", "--results", "A_FILE"],
]
BAD_REPORTS = [
    ["--results", "/nonexistent"],
    ["--results", ""],
    ["--out", "A_FILE"],
    ["--baseline", "9.9"],
    ["--factor", "1"],
    ["--factor", "0.5"],
    ["--factor", "inf"],
    ["--alpha", "0"],
    ["--alpha", "1.5"],
    ["--alpha", "nan"],
    ["--invocation-spread", "-0.01"],
    ["--invocation-spread", "1"],
    ["--invocation-spread", "nan"],
]
BAD_COMPARES = [
    [],
    ["/nonexistent"],
    ["RESULTS"],
    ["RESULTS", "/nonexistent"],
    ["RESULTS", "--a-release", "9.9", "--b-release", "0.12.0.1"],
    ["RESULTS", "--case", "nope", "--a-release", "0.4.26"],
    ["RESULTS", "--factor", "x"],
    ["RESULTS", "--invocation-spread", "x"],
    ["RESULTS", "--markdown", "OUT_FOLDER", "--a-release", "9", "--b-release", "8"],
]
BAD_RANGES = [
    [*RANGE],  # bisect needs --metric or --claim
    [*RANGE, "--metric", "nonsense"],
    [*RANGE, "--metric", "scan.speed_ns"],
    [*RANGE, "--claim", "--metric", "scan.wall_ns"],
    ["scan_sync", "--good", "0.4.35", "--bad", "0.4.26", "--claim"],
    ["scan_sync", "--good", "0.4.26", "--bad", "0.4.26", "--claim"],
    ["nope", "--good", "0.4.26", "--bad", "0.4.35", "--claim"],
    [*RANGE, "--claim", "--processes", "2"],
    [*RANGE, "--claim", "--repeats", "0"],
    [*RANGE, "--claim", "--size", "N=0"],
    [*RANGE, "--claim", "--profile", ".."],
    [*RANGE, "--claim", "--releases", "/nonexistent-plan.json"],
    [*RANGE[1:], "--claim"],  # neither a case nor --script
    [*RANGE[1:], "--claim", "--script", "MISSING_SCRIPT"],
    [*RANGE[1:], "--claim", "--script", "OUT_FOLDER"],
    [*RANGE[1:], "--claim", "--script", "BAD_NAME_SCRIPT"],
    [*RANGE, "--claim", "--script", "SCRIPT"],
    [*RANGE[1:], "--claim", "--script", "SCRIPT", "--size", "N=3"],
]
BAD_SWEEPS = [
    [*SWEEP, "--metric", "x"],
    ["scan_sync", "--from", "0.4.35", "--to", "0.4.26"],
    ["scan_sync", "--from", "0.4.26"],
    [*SWEEP, "--timeout", "inf"],
    [*SWEEP[1:], "--script", "MISSING_SCRIPT"],
    [*SWEEP[1:], "--script", "BINARY_SCRIPT"],
]
BAD_BISECT_TERMS = [
    ["scan_sync", "--broken", "0.4.26", "--claim"],  # a fix needs both ends
    ["scan_sync", "--good", "0.4.26", "--fixed", "0.4.35", "--claim"],  # terms of two kinds
    ["scan_sync", "--broken", "0.4.35", "--fixed", "0.4.26", "--claim"],
    ["scan_sync", "--claim"],
    ["scan_sync", "--broken", "../x", "--fixed", "0.4.35", "--claim"],
]
BAD_TRIAGES = [
    [],
    ["nope"],
    ["scan_sync", "--from", "0.13"],  # after the table's newest, the default end
    ["scan_sync", "--to", "0.4.1", "--from", "0.4.26"],
    ["scan_sync", "--from", "0.4.26", "--to", "0.4.26"],
    ["scan_sync", "--metric", "nonsense"],
    ["scan_sync", "--metric", "scan.wall_ns", "--claim"],
    ["scan_sync", "--processes", "2"],
    ["scan_sync", "--processes", "0"],
    ["scan_sync", "--size", "N=0"],
    ["scan_sync", "--profile", "a/b"],
    ["scan_sync", "--from", "0.4/26"],
    ["scan_sync", "--releases", "/nonexistent-plan.json"],
    ["scan_sync", "--good", "0.4.26"],
    ["scan_sync", "--factor", "1"],
]
BAD_MERGES = [
    [],
    ["/nonexistent", "--into", "INTO"],
    ["RESULTS"],
    ["RESULTS", "--into", "A_FILE"],
    ["RESULTS", "--into", ""],
]
BAD_CALIBRATIONS = [
    ["--case", "nope"],
    ["--pairs", "0"],
    ["--raise", "Q"],
    ["--size", "N=0"],
    ["--profile", ""],
    ["--", "--results", "x"],
    ["--", "--bogus"],
]
# CASES: a cases folder holding taken.py (a case) and broken.py (a case file that cannot be read).
BAD_NEWS = [
    [],
    ["Bad-Name"],
    ["1case"],
    ["../evil"],
    ["x" * 65],
    ["compat"],
    ["jax"],
    ["os"],
    ["import"],
    ["scan_sync"],
    ["taken", "--cases-dir", "CASES"],
    ["broken", "--cases-dir", "CASES"],
    ["fine", "--cases-dir", "MISSING_FOLDER"],
    ["fine", "--cases-dir", "A_FILE"],
    ["fine", "other"],
    ["fine", "--cases-dir"],
]
BAD_LISTS = [
    ["nope"],
    ["../scan_sync"],
    ["scan_sync", "extra"],
    ["broken", "--cases-dir", "CASES"],
    ["taken", "--cases-dir", "MISSING_FOLDER"],
]
BAD_OTHERS = [
    [],
    ["fly"],
    ["list", "--cases-dir", "/nonexistent"],
    ["list", "extra"],
    ["--version-of-nothing"],
    ["prune"],
    ["prune", "--days", "-3"],
    ["prune", "--days", "x"],
]

INVOCATIONS = (
    [["run", *args] for args in BAD_RUNS]
    + [["search", *args] for args in BAD_SEARCHES]
    + [["export", *args] for args in BAD_EXPORTS]
    + [["issue", *args] for args in BAD_ISSUES]
    + [["report", *args] for args in BAD_REPORTS]
    + [["compare", *args] for args in BAD_COMPARES]
    + [["bisect", *args] for args in BAD_RANGES]
    + [["sweep", *args] for args in BAD_SWEEPS]
    + [["bisect", *args] for args in BAD_BISECT_TERMS]
    + [["triage", *args] for args in BAD_TRIAGES]
    + [["merge", *args] for args in BAD_MERGES]
    + [["calibrate", *args] for args in BAD_CALIBRATIONS]
    + [["new", *args] for args in BAD_NEWS]
    + [["list", *args] for args in BAD_LISTS]
    + BAD_OTHERS
)


SHIPPED_CASE_FILES = sorted(p.name for p in (REPO / "cases").glob("*.py"))


def test_the_table_is_large():
    assert len(INVOCATIONS) >= 100


def _placed(argv, tmp_path):
    """The command line with its placeholders made real, and an output folder that must stay
    empty."""
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "A_FILE").write_text("a file where a folder should be")
    (tmp_path / "OUT_FOLDER").mkdir()
    (tmp_path / "PLAN_NOT_JSON").write_text("{not json")
    (tmp_path / "bad name.py").write_text("print('a script whose name cannot name its results')\n")
    (tmp_path / "binary.py").write_bytes(b"\xff\xfe\x00 not text")
    results = tmp_path / "RESULTS"
    results.mkdir()
    cases = tmp_path / "CASES"
    cases.mkdir()
    (cases / "taken.py").write_text((FIXTURES / "cases" / "steady.py").read_text())
    (cases / "broken.py").write_text("def programs(:\n")
    names = {
        "A_FILE": tmp_path / "A_FILE",
        "OUT_FOLDER": tmp_path / "OUT_FOLDER",
        "MISSING_FOLDER/x.py": tmp_path / "missing" / "x.py",
        "MISSING_FOLDER": tmp_path / "missing",
        "CASES": cases,
        "PLAN_NOT_JSON": tmp_path / "PLAN_NOT_JSON",
        "RESULTS": results,
        "INTO": out / "merged",
        "SCRIPT": FIXTURES / "scripts" / "cumsum_loop.py",
        "MISSING_SCRIPT": tmp_path / "missing.py",
        "BAD_NAME_SCRIPT": tmp_path / "bad name.py",
        "BINARY_SCRIPT": tmp_path / "binary.py",
    }
    placed = [str(names.get(a, a)) for a in argv]
    command = placed[0] if placed else ""
    if (
        command in ("run", "search", "issue", "bisect", "sweep", "triage", "calibrate")
        and "--results" not in placed
    ):
        placed[1:1] = ["--results", str(out / "results")]
    if (
        command in ("search", "issue", "bisect", "sweep", "triage", "report")
        and "--out" not in placed
    ):
        placed[1:1] = ["--out", str(out / "reports")]
    return placed, out


@pytest.mark.parametrize(
    "argv", INVOCATIONS, ids=[" ".join(a)[:60] or "(none)" for a in INVOCATIONS]
)
def test_a_malformed_command_line_is_one_line_and_exit_2(argv, tmp_path, capsys):
    placed, out = _placed(argv, tmp_path)
    assert main(placed) == 2, placed
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1 and err.startswith("harness: error: "), err
    assert not any(out.iterdir()), f"{placed} wrote {sorted(p.name for p in out.iterdir())}"
    assert sorted(p.name for p in (tmp_path / "CASES").iterdir()) == ["broken.py", "taken.py"]
    assert sorted(p.name for p in (REPO / "cases").glob("*.py")) == SHIPPED_CASE_FILES, (
        "no case file written"
    )


NOX_POSARGS = [
    ("search", ["scan_sync", "--jax", "9.9"]),
    ("search", ["scan_sync", "--profile", "tpu9"]),
    ("search", ["scan_sync", "--size", f"N={HUGE}"]),
    ("issue", ["scan_sync", "--jax", "0.4.26", "--profile", "cpu-classic"]),
    ("issue", ["scan_sync", "--size", "N=x"]),
    ("issue", ["scan_sync", "--jax", "not-a-version"]),
    ("issue", ["scan_sync", "--good", "0.4.31"]),
    ("issue", ["scan_sync", "--good", "0.4.33", "--bad", "0.4.31"]),
    ("issue", ["scan_sync", "--good", "0.4.26", "--bad", "0.4.31", "--profile", "cpu-classic"]),
    ("issue", ["scan_sync", "--metric", "nope"]),
    ("bisect", ["scan_sync", "--good", "0.4.26", "--bad", "0.4.35"]),
    (
        "bisect",
        ["scan_sync", "--claim", "--good", "0.4.26", "--bad", "0.7.2", "--profile", "cpu-classic"],
    ),
    ("sweep", ["scan_sync", "--from", "0.4.30", "--to", "0.7.2", "--jax", "0.4.30"]),
    # it does not apply to the table's newest
    ("triage", ["scan_sync", "--profile", "cpu-classic"]),
    ("triage", ["scan_sync", "--jax", "0.4.30"]),
    ("bisect", ["scan_sync", "--claim", "--broken", "0.4.26"]),
    ("run", ["--case", "nope"]),
    ("run", ["--timeout", "inf"]),
    ("run", ["--script", "/nonexistent/repro.py"]),
    ("sweep", ["--script", "/nonexistent/repro.py", "--from", "0.4.30", "--to", "0.7.2"]),
    ("issue", ["--script", "/nonexistent/repro.py"]),
    ("report", ["--results", "/nonexistent"]),
    ("compare", ["/nonexistent"]),
]


@pytest.mark.parametrize(("command", "posargs"), NOX_POSARGS)
def test_a_nox_sessions_malformed_posargs_are_refused_before_installing(command, posargs):
    with pytest.raises(UsageError):
        session_view(command, posargs)


BAD_ONE_OFF_RUNS = [
    ["scan_sync", "--jax"],
    ["scan_sync", "--jax", "newest"],
    ["scan_sync", "--jax=", "--size", "N=100"],
    ["scan_sync", "--jax", "0.4.31", "--jax", "0.4.33"],
    ["scan_sync", "--jax", "0.4.26", "--profile", "cpu-classic"],
    ["scan_sync", "--profile", "tpu9"],
    ["scan_sync", "--sides", "plan.json"],
    ["nope", "--jax", "0.4.31"],
    ["scan_sync", "--size", "N=0"],
    ["scan_sync", "--effort", "slow"],
    ["scan_sync", "--case", "nope"],
]


@pytest.mark.parametrize("posargs", BAD_ONE_OFF_RUNS)
def test_a_one_off_runs_malformed_posargs_are_refused_before_installing(posargs):
    with pytest.raises(UsageError):
        release_run_view(posargs)


@pytest.mark.parametrize(
    "posargs",
    [["--jax", "9.9"], ["--profile", "gpu9"], ["--jax"], ["--case", "nope"], ["--size", "N=0"]],
)
def test_the_interleaved_sessions_malformed_posargs_are_refused(posargs):
    with pytest.raises(UsageError):
        interleaved_request(posargs)
