"""Bad input gets one clear line and exit code 2, never a traceback."""

import os
import re
import subprocess
import sys

import pytest

from harness.analysis.significance import Thresholds
from harness.cli.parser import parse
from harness.cli.ranges import RangeOptions
from harness.cli.ranges import check as checked_range_args
from harness.cli.sessions import SessionRequest, release_run_view, session_view
from harness.errors import UsageError
from harness.main import main
from harness.measure.sides import release_label
from harness.pins import DEFAULT_RELEASE, PROFILE_BY_NAME, RELEASE_BY_VERSION, RELEASES

from .conftest import FIXTURES, derive, harness_command, real_result, write_results


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "required"),
        (["fly"], "invalid choice"),
        (["run", "--case", "nope"], "unknown case nope"),
        (["run", "--size", "N"], "malformed size"),
        (["run", "--size", "N=abc"], "malformed size"),
        (["run", "--size", "Q=3"], "no selected case has size Q"),
        (["run", "--repeats", "0"], "must be positive"),
        (["run", "--timeout", "soon"], "not a number"),
        (["run", "--effort", "heroic"], "invalid choice"),
        (["run", "--bogus"], "unrecognized arguments"),
        (["run", "--cases-dir", "/nonexistent"], "cases folder not found"),
        (["report", "--results", "/nonexistent"], "results folder not found"),
        (["report", "--factor", "0.9"], "must be above 1"),
        (["report", "--alpha", "2"], "must be between 0 and 1"),
        (["compare"], "required: A"),
        (["compare", "/nonexistent", "--a-release", "1"], "results folder not found"),
        (["compare", "FIXTURES"], "A and B are the same results"),
        (
            ["compare", "FIXTURES", "--a-release", "0.12.0.1", "--b-release", "9.9"],
            "no results in B",
        ),
        (["run", "--seed", "abc"], "is not a whole number"),
        (["run", "--seed", "１２"], "is not a whole number"),
        (["run", "--proc", "1"], "did you mean --processes?"),
        (["run", "--budget", "memory"], "malformed budget"),
        (["run", "--budget", "memory=lots"], "malformed quantity"),
        (["run", "--budget", "disk=3G"], "malformed budget"),
        (["run", "--warmup", "-1"], "is not a whole number"),
        (["run", "--max-seconds", "0"], "must be a finite positive number"),
        (["run", "--force", "--retry-failed"], "exclude each other"),
        (["run", "--results", "THIS_FILE"], "is a file"),
        (["run", "--size", "N=0"], "sizes must be positive"),
        (["run", "--case", "scan_sync", "--size", "B=3"], "no selected case has size B"),
        (["run", "--effort"], "expected one argument"),
        (["search"], "name a case with --case NAME"),
        (["search", "scan_sync", "--case", "nested_scan"], "two cases named"),
        (["search", "nope"], "unknown case nope"),
        (["search", "scan_sync", "--size", "Q=1"], "no selected case has size Q"),
        (["search", "scan_sync", "--max-examples", "0"], "must be positive"),
        (["search", "scan_sync", "--confirm", "x"], "is not a whole number"),
        (["search", "scan_sync", "--budget", "flops=-3"], "malformed quantity"),
        (["report", "--baseline"], "expected one argument"),
        (["list", "--cases-dir", "/nonexistent"], "cases folder not found"),
        (["export"], "name a case with --case NAME"),
        (["export", "nope"], "unknown case nope"),
        (["export", "scan_sync", "--size", "Q=1"], "no selected case has size Q"),
        (["issue", "scan_sync", "--size", "N=x"], "malformed size"),
        (["issue", "scan_sync", "--repeats", "0"], "must be positive"),
        (["bisect", "nope", "--good", "0.4.26", "--bad", "0.4.35", "--claim"], "unknown case nope"),
        (
            ["bisect", "scan_sync", "--good", "0.4.26", "--bad", "0.4.26", "--claim"],
            "the same release (0.4.26)",
        ),
        (
            ["bisect", "scan_sync", "--good", "0.4.35", "--bad", "0.4.26", "--claim"],
            "from an older release",
        ),
        (
            ["bisect", "scan_sync", "--good", "0.4.26", "--bad", "0.4.35", "--metric", "two_scans"],
            "malformed metric",
        ),
        (
            ["bisect", "scan_sync", "--good", "0.4.26", "--bad", "0.4.35"],
            "bisect a case by --metric",
        ),
        (
            [
                "bisect",
                "scan_sync",
                "--good",
                "1",
                "--bad",
                "2",
                "--claim",
                "--metric",
                "a.wall_ns",
            ],
            "not allowed with",
        ),
        (
            ["bisect", "scan_sync", "--good", "0.4.26", "--claim"],
            "bisect needs both ends: --good V --bad V (a regression) or --broken V --fixed V (a "
            "fix)",
        ),
        (
            ["bisect", "scan_sync", "--good", "0.4.26", "--bad", "0.4.35", "--claim"],
            "--releases PLAN is missing",
        ),
        (
            ["sweep", "scan_sync", "--from", "0.4.26", "--to", "0.4.35", "--size", "Q=1"],
            "no selected case has size Q",
        ),
        (
            ["sweep", "scan_sync", "--from", "0.4.26", "--to", "0.4.35", "--repeats", "0"],
            "must be positive",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys):
    names = {"FIXTURES": str(FIXTURES / "results"), "THIS_FILE": __file__}
    argv = [names.get(arg, arg) for arg in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("harness: error:") and message in err


def test_no_traceback_from_a_real_process():
    done = subprocess.run(
        harness_command("run", "--case", "nope"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1


def test_a_reader_that_leaves_early_ends_the_listing_quietly():
    """`jax-repro list | head`: the pipe is closed before the listing is written."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(harness_command("list"), stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)
    assert done.returncode == 141 and done.stderr == b"", done.stderr.decode()[-500:]


def test_list_shows_claims(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert (
        "scan_sync" in out
        and "claim:" in out
        and "source: https://github.com/jax-ml/jax/discussions/21411" in out
    )


def test_list_of_one_case_shows_its_sizes_programs_and_metric_names_without_importing_jax():
    script = (
        "import sys\nfrom harness.main import main\nmain(['list', 'sharding_scaling'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'numpy', 'hypothesis')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    shown, heavy = done.stdout.rsplit("\n", 2)[0], done.stdout.splitlines()[-1]
    assert heavy == "[]", "list reads case files; it starts no JAX"
    for line in (
        "sizes: B in [1, 100000], F in [1, 4096]",
        "anchors (quick): B=100 F=20; B=20000 F=200",
        "needs 2 devices",
        "programs: <method>_d<n>, pmap_d<n>",
        "        pmap_d<n>.wall_ns",
        "        named_d<len(devices)>.compile_ns",
        "<...> stands for a part of the name",
    ):
        assert line in shown, shown


def test_run_and_report_with_a_pure_python_case(fixture_cases, tmp_path, capsys):
    results = tmp_path / "results"
    code = main(
        [
            "run",
            "--cases-dir",
            str(fixture_cases),
            "--case",
            "steady",
            "--case",
            "raises",
            "--results",
            str(results),
            "--repeats",
            "3",
            "--strict",
        ]
    )
    assert code == 1, "--strict fails the run when a case failed"
    assert "2 cells, 2 results stored" in capsys.readouterr().err
    assert main(["report", "--results", str(results), "--out", str(tmp_path / "reports")]) == 0
    text = (tmp_path / "reports" / "index.md").read_text()
    assert "| steady" in text and "failed" in text


def test_report_with_a_baseline_writes_a_page_per_case(tmp_path, capsys):
    data = real_result("async_dispatch-0.12.0.1")
    results = write_results(tmp_path / "results", [data, derive(data, release="0.4.26")])
    out = tmp_path / "reports"
    assert (
        main(["report", "--results", str(results), "--out", str(out), "--baseline", "0.12.0.1"])
        == 0
    )
    assert "2 page(s)" in capsys.readouterr().err
    assert (
        "Baseline (A): jax 0.12.0.1, chosen with --baseline."
        in (out / "async_dispatch.md").read_text()
    )
    assert (
        main(["report", "--results", str(results), "--out", str(out), "--baseline", "0.4.29"]) == 2
    )
    assert "no result of release 0.4.29 to use as baseline" in capsys.readouterr().err


def test_compare_exit_status_is_1_only_when_b_got_worse(tmp_path, capsys):
    data = real_result("async_dispatch-0.12.0.1")
    results = write_results(tmp_path / "results", [data, derive(data, release="0.4.26", scale=0.8)])
    markdown = tmp_path / "comparison.md"
    worse = [
        "compare",
        str(results),
        "--a-release",
        "0.4.26",
        "--b-release",
        "0.12.0.1",
        "--markdown",
        str(markdown),
    ]
    assert main(worse) == 1
    out = capsys.readouterr().out
    # Over 5 processes a side, ×1.25 passes p < 0.002 for eager's wall (first listed), not for jit's
    # (p ≈ 0.0035).
    assert "Worse in B: async_dispatch N=1000: eager.wall_ns ×1.25" in out
    assert out.rstrip().endswith(f"Report: {markdown}")
    assert "# Comparison of two result sets" in markdown.read_text()
    better = ["compare", str(results), "--a-release", "0.12.0.1", "--b-release", "0.4.26"]
    assert main(better) == 0
    assert "Nothing got significantly worse in B; 4 comparison(s) undecided, not unchanged." in (
        capsys.readouterr().out
    )
    assert main([*worse, "--factor", "1.3"]) == 0, "a 25 % slowdown is below a 30 % threshold"
    capsys.readouterr()
    assert main([*better, "--markdown", str(tmp_path / "absent" / "x.md")]) == 2
    assert capsys.readouterr().err.startswith("harness: error: cannot write")


@pytest.mark.parametrize("flag", ["--value", "--cost", "--higher-is-better"])
def test_compare_refuses_a_declared_metric_neither_set_has(tmp_path, capsys, flag):
    """R8-17: `--value json.nosuch` was taken without a word; compare knows both sets' metrics
    before any verdict, so a name neither has is refused in one line."""
    data = real_result("async_dispatch-0.12.0.1")
    results = write_results(tmp_path / "results", [data, derive(data, release="0.4.26")])
    argv = ["compare", str(results), "--a-release", "0.4.26", "--b-release", "0.12.0.1"]
    assert main([*argv, flag, "json.nosuch"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"harness: error: {flag} json.nosuch: no metric of A or B has that name")
    assert len(err.splitlines()) == 1


def test_compare_of_separate_runs_allows_for_their_levels_and_says_so(tmp_path, capsys):
    data = real_result("async_dispatch-0.12.0.1")
    a = write_results(tmp_path / "a", [derive(data, invocation="run-a")])
    b = write_results(tmp_path / "b", [derive(data, invocation="run-b", scale=1.25)])
    assert main(["compare", str(a), str(b)]) == 0, (
        "×1.25 between separate runs stays within what their levels allow"
    )
    out = capsys.readouterr().out
    assert "note: measured in separate runs: the test allows their levels a spread of 10.0%" in out
    assert main(["compare", str(a), str(b), "--invocation-spread", "0"]) == 1, (
        "without the allowance: worse"
    )
    assert (
        "note: measured in separate runs: the test allows their levels a spread of 0.0%"
        in capsys.readouterr().out
    )


def test_export_prints_a_script_that_compiles(capsys, tmp_path):
    assert main(["export", "scan_sync", "--size", "N=16", "--size", "M=3"]) == 0
    script = capsys.readouterr().out
    compile(script, "scan_sync.py", "exec")
    assert 'SIZES = {"N": 16, "M": 3}' in script
    assert main(["export", "async_dispatch", "--out", str(tmp_path / "a.py")]) == 0
    assert 'SIZES = {"N": 1000}' in (tmp_path / "a.py").read_text()


def test_sampling_defaults_follow_the_effort_and_flags_win(fixture_cases, tmp_path):
    from harness.store.results import load_results

    base = ["run", "--cases-dir", str(fixture_cases), "--case", "steady"]
    assert main([*base, "--results", str(tmp_path / "q")]) == 0
    assert (
        main([*base, "--results", str(tmp_path / "f"), "--effort", "full", "--size", "K=10"]) == 0
    )
    # Flags of every kind in one run: each wins over the default it names, whatever the others say.
    flags = ["--repeats", "7", "--max-seconds", "1", "--processes", "2", "--min-sample-time", "0"]
    assert main([*base, "--results", str(tmp_path / "x"), *flags]) == 0
    settings = {
        name: load_results(tmp_path / name)[0][0].result.settings for name in ("q", "f", "x")
    }
    assert (settings["q"].repeats, settings["q"].max_seconds, settings["q"].processes) == (
        10,
        0.5,
        5,
    )
    assert (settings["f"].repeats, settings["f"].max_seconds, settings["f"].processes) == (
        20,
        2.0,
        10,
    )
    assert (settings["x"].repeats, settings["x"].max_seconds) == (7, 1.0)
    assert settings["q"].compile_repeats == 1 and settings["q"].min_sample_ns == 1_000_000
    assert (
        settings["x"].processes,
        settings["x"].compile_repeats,
        settings["x"].min_sample_ns,
    ) == (2, 3, 0)


def test_a_target_ratio_is_stored_and_its_rounds_end_with_a_detail_saying_what_they_reached(
    fixture_cases, tmp_path
):
    from harness.store.results import load_results

    argv = [
        "run",
        "--cases-dir",
        str(fixture_cases),
        "--case",
        "steady",
        "--results",
        str(tmp_path),
    ]
    target = ["--target-ratio", "1.5", "--max-processes", "3", "--target-kind", "wall"]
    assert main([*argv, "--processes", "2", *target]) == 0
    [stored] = load_results(tmp_path)[0]
    result = stored.result
    assert (
        result.settings.target_ratio,
        result.settings.max_processes,
        result.settings.processes,
    ) == (1.5, 3, 2)
    assert result.settings.target_kinds == ("wall",)
    assert len(result.processes) in (2, 3)
    reached = (
        r"\d processes a side (\(the most allowed\) )?can detect (only )?×[0-9.]+, (within|not) "
        r"the target"
    )
    assert re.search(reached + r" ×1\.5 on wall times", result.detail), result.detail


def test_a_nox_session_gets_a_checked_view_of_its_posargs():
    search = session_view("search", ["scan_sync", "--jax", "0.4.26", "--profile", "cpu8"])
    assert search == SessionRequest(
        RELEASE_BY_VERSION["0.4.26"],
        PROFILE_BY_NAME["cpu8"],
        ["search", "scan_sync", "--jax", "0.4.26", "--profile", "cpu8"],
    )
    issue = session_view("issue", ["scan_sync"])
    assert (issue.release, issue.profile) == (None, PROFILE_BY_NAME["cpu"]), (
        "installed apart, like bisect's"
    )
    assert issue.harness_argv == ["issue", "scan_sync", "--profile", "cpu"], (
        "the harness is told the profile"
    )
    assert issue.on_index == (DEFAULT_RELEASE.jax,)
    anywhere = session_view(
        "issue", ["scan_sync", "--jax", "0.4.33", "--good", "0.4.31", "--bad", "0.4.33"]
    )
    assert anywhere.on_index == ("0.4.33", "0.4.31", "0.4.33"), (
        "any release; the noxfile looks each up"
    )
    one_off = release_run_view(["scan_sync", "--jax", "0.4.27", "--size", "N=100"])
    assert (one_off.release, one_off.profile, one_off.on_index) == (
        None,
        PROFILE_BY_NAME["cpu"],
        ("0.4.27",),
    )
    assert one_off.harness_argv == [
        "run",
        "--case",
        "scan_sync",
        "--size",
        "N=100",
        "--profile",
        "cpu",
    ]
    assert release_run_view(["scan_sync", "--jax=0.4.27", "--profile", "cpu8"]).harness_argv[
        -2:
    ] == [
        "--profile",
        "cpu8",
    ]
    assert release_run_view(["scan_sync"]).on_index == (DEFAULT_RELEASE.jax,)
    bisect = session_view("bisect", ["scan_sync", "--claim", "--good", "0.4.26", "--bad", "0.4.35"])
    assert (bisect.release, bisect.profile, bisect.span) == (
        None,
        PROFILE_BY_NAME["cpu"],
        ("0.4.26", "0.4.35"),
    )
    report = session_view("report", ["--results", str(FIXTURES / "results")])
    assert report == SessionRequest(None, None, ["report", "--results", str(FIXTURES / "results")])


@pytest.mark.parametrize(
    ("command", "posargs", "message"),
    [
        (
            "search",
            ["scan_sync", "--jax", "9.9"],
            "unknown release 9.9; the release table has 0.4.26, 0.4.30",
        ),
        ("issue", ["scan_sync", "--profile", "rocm"], "unknown profile rocm; profiles: cpu, cpu8"),
        (
            "search",
            ["scan_sync", "--jax", "0.4.26", "--profile", "cpu-classic"],
            "does not apply to jax 0.4.26",
        ),
        (
            "bisect",
            [
                "scan_sync",
                "--claim",
                "--good",
                "0.4.26",
                "--bad",
                "0.7.2",
                "--profile",
                "cpu-classic",
            ],
            "0.4.26",
        ),
        (
            "sweep",
            ["scan_sync", "--from", "0.4.30", "--to", "0.7.2", "--profile", "cpu-classic"],
            "jax 0.7.2",
        ),
        (
            "sweep",
            ["scan_sync", "--from", "0.4.30", "--to", "0.7.2", "--jax", "0.4.30"],
            "--jax goes with --vary",
        ),
        ("report", ["--results", "/nonexistent"], "results folder not found"),
        ("compare", ["/nonexistent"], "results folder not found"),
        ("fly", [], "invalid choice"),
    ],
)
def test_a_nox_sessions_bad_posargs_are_refused(command, posargs, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        session_view(command, posargs)


def test_jax_named_outside_nox_must_be_the_one_installed(capsys):
    installed = release_label()
    other = next(r.jax for r in RELEASES if r.jax != installed)
    assert main(["issue", "scan_sync", "--jax", other, "--results", "/nonexistent"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"harness: error: --jax {other} asks for a release that is not installed here (jax "
        f"{installed}): `nox -s issue -- ... --jax {other}` installs it"
    )


def test_bisect_and_sweep_get_their_options_checked_not_the_parsed_command_line(tmp_path):
    args = parse(
        [
            "sweep",
            "scan_sync",
            "--from",
            "0.4.26",
            "--to",
            "0.5.3",
            "--metric",
            "scan.compile_ns",
            "--size",
            "N=100",
        ]
    )
    options = checked_range_args(args)
    assert isinstance(options, RangeOptions)
    assert (options.command, options.case.name, options.first, options.last) == (
        "sweep",
        "scan_sync",
        "0.4.26",
        "0.5.3",
    )
    assert options.metric is not None and options.metric.metric_name == "scan.compile_ns"
    assert options.sizes["N"] == 100 and options.profile == "default", (
        "run directly, the profile is only a label"
    )
    assert options.thresholds == Thresholds() and options.places.releases_plan is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["calibrate", "--case", "nope"], "unknown case nope"),
        (["calibrate", "--raise", "Q"], "scan_sync has no size Q"),
        (["calibrate", "--size", "N=9100"], "raising N from 9100 to 10010 leaves its range"),
        (["calibrate", "--pairs", "0"], "must be positive"),
        (["calibrate", "--", "--results", "elsewhere"], "calibrate chooses --results itself"),
        (["calibrate", "--", "--bogus"], "unrecognized arguments: --bogus"),
        (["calibrate", "--", "--repeats", "0"], "must be positive"),
    ],
)
def test_calibrate_refuses_bad_input_before_running_anything(argv, message, capsys, tmp_path):
    assert main([*argv[:1], "--results", str(tmp_path / "results"), *argv[1:]]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("harness: error:") and message in err
    assert not (tmp_path / "results").exists()


def test_an_error_naming_a_path_with_an_escape_sequence_prints_no_escape(tmp_path, capsys):
    """Issue 57, a hostile input of the watch's: ``--pytest-benchmark $'x\\e]0;title\\a'`` (a folder
    without a test) printed its ESC and BEL raw in the ``harness: error:`` line, setting the
    terminal's title."""
    folder = tmp_path / "suite\x1b]0;owned\x07"
    folder.mkdir()
    assert main(["watch", "--pytest-benchmark", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness: error: ") and "no Python file in it" in err
    assert "\x1b" not in err and "\x07" not in err


def test_the_program_measures_a_cuda_jax_here_under_its_device_s_profile_and_flags(monkeypatch):
    import harness.main as program

    monkeypatch.setattr(program.installed_jax, "version", lambda package="jax": "0.7.2")
    monkeypatch.setattr(program.installed_jax, "device_profile", lambda: "cuda13")
    for name in ("JAX_PLATFORMS", "XLA_PYTHON_CLIENT_PREALLOCATE", program.sessions.DRIVEN):
        monkeypatch.setenv(name, "")  # recorded, so what the program sets is undone after the test:
        # a delenv of a missing name records nothing (it leaked into later tests)
        monkeypatch.delenv(name)
    monkeypatch.setenv("XLA_FLAGS", "--mine")
    line = program.installed_here(["run", "--case", "scan_sync"])
    assert line == ["run", "--case", "scan_sync", "--profile", "cuda13"]
    assert os.environ["JAX_PLATFORMS"] == "cuda,cpu" and os.environ["XLA_FLAGS"] == "--mine"


def test_the_program_hands_a_release_command_to_its_packaged_session(monkeypatch):
    import harness.main as program
    from harness.commands import packaged_sessions

    driven = []
    monkeypatch.delenv(program.sessions.DRIVEN, raising=False)
    monkeypatch.setattr(packaged_sessions, "drive", lambda *args: driven.append(args))
    argv = ["triage", "--case", "scan_sync", "--from", "0.4.30", "--to", "0.4.33"]
    assert program.installed_here(argv) is None
    assert driven == [("triage", argv, program.installed_jax.version())]
