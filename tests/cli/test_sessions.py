import json
import sys

import pytest

from harness.cli.sessions import (
    Here,
    device_profile_argv,
    interleaved_request,
    session_for,
    write_sides,
)
from harness.errors import UsageError
from harness.measure.sides import load_plan
from harness.pins import DRIVEN, EDGES, PROFILE_BY_NAME, RELEASES


def test_the_default_is_the_edges_on_cpu_and_cpu8():
    request = interleaved_request(["--case", "scan_sync"])
    assert [(r.jax, p.name) for r, p in request.sides] == [
        (r.jax, p) for r in EDGES for p in ("cpu", "cpu8")
    ]
    assert request.run_argv[:5] == ["run", "--case", "scan_sync", "--processes", "7"], (
        "the fewest that can pass the rank guard"
    )
    assert interleaved_request(["--processes=5"]).run_argv[:2] == ["run", "--processes=5"], (
        "the user's count wins"
    )


def test_the_matrix_measures_once_unless_asked_for_looks():
    assert interleaved_request([]).run_argv == [
        "run",
        "--processes",
        "7",
        "--max-seconds",
        "0.25",
        "--warmup",
        "1",
        "--decide",
        "off",
    ]
    assert "--max-seconds" not in interleaved_request(["--effort", "full"]).run_argv, (
        "the effort's sampling"
    )
    assert interleaved_request(["--warmup", "3"]).run_argv.count("--warmup") == 1, "the user's"
    assert interleaved_request(["--decide", "changes"]).run_argv[-2:] == ["--max-processes", "14"]
    assert interleaved_request(["--processes", "5", "--decide", "all"]).run_argv[-2:] == [
        "--max-processes",
        "10",
    ]
    told = interleaved_request(
        ["--max-processes", "12", "--decide-metric", "scan.wall_ns", "--time-budget", "60"]
    )
    assert told.run_argv.count("--max-processes") == 1 and "12" in told.run_argv, (
        "checked as a run of sides"
    )
    assert "--decide" not in told.run_argv, "looks asked for: measured until decided"
    for posargs in (
        ["--decide", "off"],
        ["--target-ratio", "1.1"],
        ["--jax", "0.4.26", "--profile", "cpu"],
    ):
        assert "--max-processes" not in interleaved_request(posargs).run_argv, posargs


def test_the_default_profiles_measure_each_case_only_where_its_claim_is(tmp_path):
    """Plain ``nox``'s sides say so (``claims_only``: a case's CLAIM_DEVICES); profiles the user
    names do not."""
    default = load_plan(write_sides(tmp_path / "a.json", interleaved_request([]), _here()))
    named = interleaved_request(["--profile", "cpu,cpu8"])
    assert all(side.claims_only for side in default) and not named.claims_only
    assert not any(
        side.claims_only for side in load_plan(write_sides(tmp_path / "b.json", named, _here()))
    )


def _here() -> dict[tuple[str, str], str]:
    return {(r.jax, p): sys.executable for r in RELEASES for p in PROFILE_BY_NAME}


def test_a_profile_is_paired_only_with_the_releases_it_applies_to():
    request = interleaved_request(["--jax", "all", "--profile=cpu-classic"])
    classic = PROFILE_BY_NAME["cpu-classic"]
    assert [r.jax for r, _ in request.sides] == [r.jax for r in RELEASES if classic.applies_to(r)]
    assert [p.name for p in request.profiles] == ["cpu-classic"]


@pytest.mark.parametrize(
    ("posargs", "message"),
    [
        (["--jax", "9.9"], "unknown release 9.9"),
        (["--jax", ","], "--jax names no release"),
        (["--profile", "rocm"], "unknown profile rocm"),
        (["--jax", "0.4.26", "--jax", "0.12.0.1"], "--jax is given more than once"),
        (["--jax"], "--jax needs a value"),
        (["--jax", "0.4.26", "--profile", "cpu-classic"], "no profile given applies"),
        (["--sides", "plan.json"], "leave out --sides"),
        (["--case", "nope"], "unknown case nope"),
        (["--processes", "0"], "must be positive"),
        (["--max-processes", "2"], "at least --processes"),
        (
            ["--decide", "off", "--max-processes", "14"],
            "needs --target-ratio, or a run of several sides",
        ),
        (["--decide", "off", "--time-budget", "60"], "goes with --decide"),
    ],
)
def test_bad_posargs_are_refused_before_anything_is_installed(posargs, message):
    with pytest.raises(UsageError, match=message):
        interleaved_request(posargs)


def test_the_sides_plan_is_one_the_runner_reads(tmp_path):
    request = interleaved_request(["--jax", "0.4.26,0.12.0.1", "--profile", "cpu8"])
    interpreters = {(r.jax, p.name): str(tmp_path / f"python-{r.jax}") for r, p in request.sides}
    for path in interpreters.values():
        (tmp_path / path).touch(mode=0o755)
    plan = write_sides(tmp_path / "sides.json", request, interpreters)
    sides = load_plan(plan)
    assert [(s.release, s.profile, s.interpreter) for s in sides] == [
        ("0.4.26", "cpu8", interpreters["0.4.26", "cpu8"]),
        ("0.12.0.1", "cpu8", interpreters["0.12.0.1", "cpu8"]),
    ]
    assert (
        json.loads(plan.read_text())[0]["env"]["XLA_FLAGS"]
        == "--xla_force_host_platform_device_count=8"
    )


def test_every_session_from_the_index_says_what_it_runs_and_checks_its_posargs():
    from harness.cli.sessions import FROM_THE_INDEX

    assert list(FROM_THE_INDEX) == ["issue", "run", "flags", "bisect", "sweep", "triage", "watch"]
    for name, session in FROM_THE_INDEX.items():
        assert f"nox -s {name} --" in session.summary.splitlines()[0]
        with pytest.raises(UsageError):
            session.view(["--frobnicate"])


def test_the_flags_session_runs_both_flag_sets_on_one_release_of_the_index(tmp_path):
    from harness.cli.sessions import release_run_view

    posargs = ["--case", "scan_sync", "--jax", "0.4.30", "--b", "jax_enable_x64=true"]
    request = release_run_view(posargs, "flags")
    assert request.on_index == ("0.4.30",) and request.own_venv_of is None
    assert request.harness_argv == [
        "flags",
        "--case",
        "scan_sync",
        "--b",
        "jax_enable_x64=true",
        "--profile",
        "cpu",
    ]
    script = tmp_path / "needs.py"
    script.write_text("# /// script\n# dependencies = ['equinox']\n# ///\nimport equinox\n")
    with pytest.raises(UsageError, match="installs jax alone"):
        release_run_view(["--script", str(script), "--b", "jax_enable_x64=true"], "flags")


def test_the_triage_session_accepts_every_release():
    from harness.cli.sessions import session_view

    request = session_view("triage", ["--case", "scan_sync", "--every-release"])
    assert "--every-release" in request.harness_argv


BARE = Here(jax=None, report_extra=False)  # a uvx tool environment: the harness, nox and uv
JAX_BOX = Here(jax="0.4.35", report_extra=True)  # a machine with JAX installed


@pytest.mark.parametrize(
    ("argv", "here", "session"),
    [
        (["triage", "--script", "r.py", "--from", "0.4.30", "--to", "0.4.33"], BARE, "triage"),
        (["triage", "--script", "r.py", "--from", "0.4.30", "--to", "0.4.33"], JAX_BOX, "triage"),
        (["bisect", "--case", "scan_sync", "--releases", "plan.json"], BARE, None),
        (["sweep", "--case", "scan_sync", "--releases=plan.json"], BARE, None),
        (["watch", "--scripts", "b"], JAX_BOX, "watch"),
        (["matrix"], JAX_BOX, "matrix"),
        (["matrix", "--help"], BARE, "matrix"),
        (["issue", "--case", "scan_sync"], BARE, "issue"),
        (["issue", "--case", "scan_sync"], JAX_BOX, None),
        (["run", "--case", "scan_sync"], BARE, "run"),
        (["run", "--case", "scan_sync"], JAX_BOX, None),
        (["run", "--case", "scan_sync", "--jax", "0.4.30"], JAX_BOX, "run"),
        (["run", "--sides", "plan.json"], BARE, None),
        (["flags", "--case", "scan_sync", "--b", "jax_enable_x64=1"], JAX_BOX, None),
        (["flags", "--case", "scan_sync", "--jax", "0.4.30"], JAX_BOX, "flags"),
        (["flags", "--case", "scan_sync"], BARE, "flags"),
        (["search", "--case", "scan_sync"], BARE, "search"),
        (["search", "--case", "scan_sync"], JAX_BOX, None),
        (["report"], BARE, "report"),
        (["report"], JAX_BOX, None),
        (["triage", "--help"], BARE, None),
        (["list"], BARE, None),
        (["export", "--case", "scan_sync"], BARE, None),
        ([], BARE, None),
    ],
)
def test_a_command_line_goes_to_its_session_where_it_needs_releases_or_what_is_missing(
    argv, here, session
):
    assert session_for(argv, here, {}) == session


def test_inside_a_driven_session_every_command_runs_as_it_is():
    """The harness a driven session starts never drives nox again, whatever it lacks."""
    assert session_for(["triage", "--case", "scan_sync"], BARE, {DRIVEN: "1"}) is None


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "--case", "c"], ["run", "--case", "c", "--profile", "cuda12"]),
        (["search", "--case", "c"], ["search", "--case", "c", "--profile", "cuda12"]),
        (["flags", "--case", "c"], ["flags", "--case", "c", "--profile", "cuda12"]),
        (["run", "--case", "c", "--profile", "mine"], ["run", "--case", "c", "--profile", "mine"]),
        (["run", "--sides", "p.json"], ["run", "--sides", "p.json"]),
        (["list"], ["list"]),
    ],
)
def test_a_measurement_here_takes_the_device_s_profile_unless_one_is_named(argv, expected):
    assert device_profile_argv(argv, lambda: "cuda12") == expected
    assert device_profile_argv(argv, lambda: None) == argv == device_profile_argv(argv, None)
