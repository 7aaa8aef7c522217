"""The bisect and sweep commands over releases whose results are already stored: nothing is installed."""

import json
import subprocess
import sys

import pytest

from harness.arguments import build_parser
from harness.cli import checked_range_args, main
from harness.host.environment import machine_identity
from harness.releases.commands import plan_for, prober_for
from harness.releases.venvs import ReleaseEnv, write_plan
from harness.store.results import write_result
from tests.conftest import REPO, derive, real_result

RELEASES = ["0.4.30", "0.4.31", "0.4.33", "0.4.34"]
SCALES = {"0.4.30": 1, "0.4.31": 1, "0.4.33": 3, "0.4.34": 3}


def stored_range(tmp_path):
    """A plan whose venvs do not exist, and a stored result for every release (at N=1000, profile cpu),
    measured in 5 processes on this machine (only this machine's results are reused)."""
    plan = tmp_path / "plan.json"
    missing_python = str(tmp_path / "no-such-python")
    write_plan(plan, [ReleaseEnv(r, r, missing_python, ("jax==" + r,), tmp_path / f"venv-{r}") for r in RELEASES])
    data = real_result("async_dispatch-0.12.0.1")
    data["host"]["machine"] = machine_identity()
    for release, scale in SCALES.items():
        write_result(tmp_path / "results", derive(data, release=release, scale=scale))
    return plan


def command(tmp_path, name, first, last, *more):
    ends = ["--good", first, "--bad", last] if name == "bisect" else ["--from", first, "--to", last]
    return [
        name, "async_dispatch", *ends, "--profile", "cpu", "--releases", str(tmp_path / "plan.json"),
        "--results", str(tmp_path / "results"), "--out", str(tmp_path / "reports"), *more,
    ]  # fmt: skip


def test_bisect_answers_from_stored_results_alone(tmp_path, capsys):
    stored_range(tmp_path)
    assert main(command(tmp_path, "bisect", "0.4.30", "0.4.34", "--metric", "eager.wall_ns")) == 0
    out = capsys.readouterr().out
    assert "Answer: first bad 0.4.33, last good 0.4.31" in out
    assert out.count("stored result reused") == 4, "every probe from the results folder"
    data = json.loads((tmp_path / "reports" / "bisect-async_dispatch.json").read_text())
    assert (data["last_good"], data["first_bad"], data["probe_count"]) == ("0.4.31", "0.4.33", 4)
    assert (tmp_path / "reports" / "bisect-async_dispatch.md").is_file()


def test_bisect_without_an_answer_exits_1(tmp_path, capsys):
    stored_range(tmp_path)
    assert main(command(tmp_path, "bisect", "0.4.30", "0.4.34", "--claim")) == 1, "the claim holds on all of them"
    assert "no answer: the bad endpoint 0.4.34 is not bad" in capsys.readouterr().out


def test_an_unknown_metric_is_refused_by_the_stored_results_before_any_probe(tmp_path, capsys):
    stored_range(tmp_path)
    assert main(command(tmp_path, "bisect", "0.4.30", "0.4.34", "--metric", "two_scans.wall_ns")) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "harness: error: unknown metric two_scans.wall_ns for case async_dispatch; its metrics: eager.dispatch_ns, "
        "eager.wall_ns, jit.compile_ns, jit.dispatch_ns, jit.lower_ns, jit.wall_ns"
    )


def test_a_plan_for_another_range_is_refused(tmp_path, capsys):
    stored_range(tmp_path)
    assert main(command(tmp_path, "bisect", "0.4.26", "0.4.34", "--claim")) == 2
    assert "does not run from 0.4.26 to 0.4.34" in capsys.readouterr().err


def test_a_sweep_of_every_metric_writes_its_steps(tmp_path, capsys):
    stored_range(tmp_path)
    assert main(command(tmp_path, "sweep", "0.4.30", "0.4.34")) == 0
    text = (tmp_path / "reports" / "sweep-async_dispatch.md").read_text()
    assert "- eager.wall_ns: 0.4.31 → 0.4.33: slower" in text
    assert "0.4.30 → 0.4.31" not in text
    assert "by every metric and the claim" in text


def test_the_probes_measure_in_the_processes_asked_for_five_by_default(tmp_path):
    stored_range(tmp_path)
    by_default = checked_range_args(
        build_parser().parse_args(command(tmp_path, "bisect", "0.4.30", "0.4.34", "--claim"))
    )
    asked = checked_range_args(
        build_parser().parse_args(command(tmp_path, "sweep", "0.4.30", "0.4.34", "--processes", "7"))
    )
    assert (by_default.processes, asked.processes) == (5, 7)
    assert prober_for(asked, plan_for(asked)).processes == 7


def test_stored_results_of_fewer_processes_than_asked_are_not_reused(tmp_path, capsys):
    stored_range(tmp_path)  # 5 processes each; the plan's venvs cannot be installed
    assert main(command(tmp_path, "bisect", "0.4.30", "0.4.34", "--metric", "eager.wall_ns", "--processes", "10")) == 1
    out = capsys.readouterr().out
    assert "stored result reused" not in out and "could not be installed" in out


def test_fewer_processes_than_a_verdict_needs_are_refused(tmp_path, capsys):
    stored_range(tmp_path)
    assert main(command(tmp_path, "sweep", "0.4.30", "0.4.34", "--processes", "2")) == 2
    assert capsys.readouterr().err.strip() == (
        "harness: error: --processes 2: no verdict is possible with fewer than 3 processes a release"
    )


def nox_session(name, *posargs):
    return subprocess.run(
        [sys.executable, "-m", "nox", "-s", name, "--", *posargs],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.releases
def test_a_real_bisect_over_three_releases_installs_measures_and_then_reuses(tmp_path):
    """jax 0.4.31 dispatches synchronously on CPU, 0.4.33 asynchronously (0.4.32 is yanked)."""
    posargs = [
        "async_dispatch", "--metric", "eager.dispatch_ns", "--good", "0.4.30", "--bad", "0.4.33", "--size", "N=256",
        "--repeats", "9", "--max-seconds", "2", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "out"),
    ]  # fmt: skip
    done = nox_session("bisect", *posargs)
    assert done.returncode == 0, done.stderr[-4000:]
    data = json.loads((tmp_path / "out" / "bisect-async_dispatch.json").read_text())
    assert (data["last_good"], data["first_bad"]) == ("0.4.31", "0.4.33"), data["answer"]
    assert [p["release"] for p in data["probes"]] == ["0.4.30", "0.4.33", "0.4.31"]
    assert data["probes"][1]["vs_good"]["verdict"] == "faster", "async dispatch returns sooner"
    stored = {path.parent.parent.name for path in (tmp_path / "results").rglob("*.json")}
    assert stored == {"jax-0.4.30", "jax-0.4.31", "jax-0.4.33"}

    again = nox_session("bisect", *posargs)
    assert again.returncode == 0, again.stderr[-4000:]
    assert again.stdout.count("stored result reused") == 3 and "Answer: first bad 0.4.33" in again.stdout


@pytest.mark.releases
@pytest.mark.parametrize(
    ("good", "bad", "message"),
    [
        ("0.4.32", "0.4.33", "jax 0.4.32 is not an installable release on the package index"),
        ("0.4.31", "9.9", "jax 9.9 is not an installable release on the package index"),
    ],
)
def test_nox_bisect_refuses_a_release_the_index_does_not_offer(good, bad, message):
    done = nox_session("bisect", "async_dispatch", "--claim", "--good", good, "--bad", bad)
    assert done.returncode == 2
    ours = [line for line in done.stderr.splitlines() if not line.startswith("nox >")]
    assert len(ours) == 1 and message in ours[0], done.stderr
