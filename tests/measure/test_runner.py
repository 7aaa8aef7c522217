"""Runner isolation: whatever a case does, it is recorded and the sweep goes on, in both isolation modes."""

import dataclasses
import signal

import pytest

from harness.catalogue import discovery
from harness.catalogue.sizes import Budget, PlannedPoint
from harness.measure.runner import PlannedRun, Recorder, Settings, classify, run_all
from harness.store.results import load_results
from tests.conftest import FIXTURES

QUICK = Settings(timeout_s=5, warmup=1, repeats=5, min_repeats=2, max_seconds=1)


@pytest.fixture(scope="module", params=["fork", "spawn"])
def sweep(tmp_path_factory, request):
    tmp_path = tmp_path_factory.mktemp("sweep")
    settings = dataclasses.replace(QUICK, isolation=request.param)
    found = discovery.discover(FIXTURES / "cases")
    order = ["raises", "hangs", "segfaults", "oom", "unsupported", "steady"]
    plan = [PlannedRun(found[name], PlannedPoint(found[name].anchors[0], "anchor")) for name in order]
    lines: list[str] = []
    outcomes = run_all(plan, Recorder(tmp_path, "test", settings, seed=7, budget=Budget(), progress=lines.append))
    return order, outcomes, lines, tmp_path


def test_every_failure_mode_is_recorded_and_the_sweep_goes_on(sweep):
    order, outcomes, _, results_dir = sweep
    statuses = dict(zip(order, (o.status for o, _ in outcomes), strict=True))
    assert statuses == {
        "raises": "failed",
        "hangs": "timeout",
        "segfaults": "crashed",
        "oom": "crashed",
        "unsupported": "skipped",
        "steady": "ok",
    }
    stored, problems = load_results(results_dir)
    assert problems == [] and len(stored) == 6


def test_details_say_what_happened(sweep):
    order, outcomes, _, _ = sweep
    detail = {name: o.detail for name, (o, _) in zip(order, outcomes, strict=True)}
    assert "deliberate failure at K=1" in detail["raises"]
    assert "RuntimeError" in detail["raises"]
    assert "no result within 5 s" in detail["hangs"]
    assert "SIGSEGV" in detail["segfaults"]
    assert "SIGKILL" in detail["oom"] and "out of memory" in detail["oom"]
    assert "needs a feature no release has" in detail["unsupported"]


def test_ok_run_keeps_raw_samples_and_the_verdict(sweep):
    _, outcomes, _, _ = sweep
    ok, path = outcomes[-1]
    program = ok.payload["programs"]["sum"]
    assert len(program["samples"]) >= 2
    assert all(s["wall_ns"] >= s["marks_ns"][-1] for s in program["samples"])
    claim = ok.payload["claim"]
    assert (claim["holds"], claim["evidence"]) == (True, "dispatch never exceeds wall")
    assert claim.get("backend") == ok.payload.get("jax", {}).get("backend"), "judged on the backend the run had"
    assert path.exists()


def test_progress_names_release_case_and_what_is_left(sweep):
    _, _, lines, _ = sweep
    assert any("(1/6) raises" in line and "· test]" in line for line in lines)
    assert any("(6/6) steady" in line and "0 left" in line for line in lines)


@pytest.mark.parametrize(
    ("returncode", "payload", "status"),
    [
        (-signal.SIGKILL, None, "crashed"),
        (-signal.SIGABRT, None, "crashed"),
        (1, None, "failed"),
        (0, None, "failed"),
        (0, {"status": "skipped", "detail": "why"}, "skipped"),
        (0, {"status": "ok", "programs": {}}, "ok"),
    ],
)
def test_classify(returncode, payload, status):
    assert classify(returncode, payload, "line 1\nlast line").status == status


def test_sigkill_mentions_memory():
    assert "OOM" in classify(-signal.SIGKILL, None, "").detail


def test_a_point_over_budget_is_refused_without_starting_a_process(fixture_cases, tmp_path):
    steady = discovery.discover(fixture_cases)["steady"]
    budget = Budget({"bytes": 1000.0})
    [point] = steady.plan("quick", {}, seed=1, budget=budget)
    assert point.refusal and "over budget" in point.refusal
    outcome, _ = Recorder(tmp_path, "t", QUICK, seed=1, budget=budget, progress=print).run(PlannedRun(steady, point))
    assert outcome.status == "skipped" and "refused before allocation" in outcome.detail
    assert outcome.duration_s == 0.0, "no child process was started"
    stored = load_results(tmp_path)[0][0].result
    assert stored.cost_estimate == {"bytes": 28000.0, "flops": 1000.0}
    assert stored.budget == {"bytes": 1000.0} and stored.seed == 1
    assert stored.processes == (), "no case process ran"
