import pytest

from harness.cli.routing import Here, device_profile_argv, session_for
from harness.pins import DRIVEN

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
