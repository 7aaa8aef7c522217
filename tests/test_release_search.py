"""The bisect and sweep commands over releases whose results are already stored: nothing is installed."""

import json

from harness.cli import main
from harness.results import write_result
from harness.venvs import ReleaseEnv, write_plan

from .conftest import derive, real_result

RELEASES = ["0.4.30", "0.4.31", "0.4.33", "0.4.34"]
SCALES = {"0.4.30": 1, "0.4.31": 1, "0.4.33": 3, "0.4.34": 3}


def stored_range(tmp_path):
    """A plan whose venvs do not exist, and a stored result for every release (at N=1000, profile cpu)."""
    plan = tmp_path / "plan.json"
    missing_python = str(tmp_path / "no-such-python")
    write_plan(plan, [ReleaseEnv(r, r, missing_python, ("jax==" + r,), tmp_path / f"venv-{r}") for r in RELEASES])
    data = real_result("async_dispatch-0.12.0.1")
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

