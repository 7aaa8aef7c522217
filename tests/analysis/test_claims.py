from harness.analysis.claims import (
    DIFFERS,
    DOES_NOT_HOLD,
    HOLDS,
    UNSETTLED,
    claim_evidence,
    claim_rows,
    mark,
    outcome,
    ranges_text,
    release_ranges,
)
from harness.store.results import StoredResult
from tests.conftest import FIXTURES, derive, in_processes, real_result

ORDER = ["0.4.26", "0.4.30", "0.4.31", "0.4.33", "0.5.3", "0.10.2", "0.12.0.1"]


def test_consecutive_releases_with_one_outcome_make_one_range():
    outcomes = {r: DOES_NOT_HOLD for r in ORDER[:3]} | {r: HOLDS for r in ORDER[3:6]} | {"0.12.0.1": "failed"}
    assert release_ranges(outcomes, ORDER) == {
        DOES_NOT_HOLD: ["0.4.26–0.4.31"],
        HOLDS: ["0.4.33–0.10.2"],
        "failed": ["0.12.0.1"],
    }
    assert ranges_text(outcomes, ORDER) == "holds on 0.4.33–0.10.2; does not hold on 0.4.26–0.4.31; failed on 0.12.0.1"


def test_a_release_without_a_result_breaks_a_range():
    outcomes = {"0.4.26": HOLDS, "0.4.30": HOLDS, "0.4.33": HOLDS, "0.5.3": DOES_NOT_HOLD, "0.12.0.1": HOLDS}
    assert release_ranges(outcomes, ORDER) == {HOLDS: ["0.4.26–0.4.30", "0.4.33", "0.12.0.1"], DOES_NOT_HOLD: ["0.5.3"]}


def test_nothing_run_says_so():
    assert ranges_text({}, ORDER) == "no runs"


def test_outcome_of_a_run():
    data = real_result("async_dispatch-0.12.0.1")
    path = FIXTURES / "results" / "async_dispatch-0.12.0.1.json"
    assert outcome(StoredResult.from_document(path, data)) == HOLDS
    assert (
        outcome(StoredResult.from_document(path, {**data, "claim": {"holds": False, "evidence": ""}})) == DOES_NOT_HOLD
    )
    assert outcome(StoredResult.from_document(path, {**data, "status": "timeout"})) == "timeout"
    assert [mark(HOLDS), mark(DOES_NOT_HOLD), mark("crashed"), mark(None)] == ["✓", "✗", "crashed", "–"]


def test_claims_are_judged_per_backend_and_machines_share_a_cell():
    base = real_result("async_dispatch-0.12.0.1")
    path = FIXTURES / "results" / "async_dispatch-0.12.0.1.json"

    def run(machine, holds, backend="cpu"):
        data = derive(base, host={**base["host"], "machine": {"id": machine}}, claim={"holds": holds, "evidence": ""})
        data["jax"] = {**data["jax"], "backend": backend}
        return StoredResult.from_document(path, data)

    agreeing = claim_rows([run("a", True), run("b", True)])
    assert agreeing == {("async_dispatch", "cpu", "cpu", "N=1000"): {"0.12.0.1": HOLDS}}
    split = claim_rows([run("a", True), run("b", False), run("a", False, backend="gpu")])
    assert split == {
        ("async_dispatch", "cpu", "cpu", "N=1000"): {"0.12.0.1": DIFFERS},
        ("async_dispatch", "cpu", "gpu", "N=1000"): {"0.12.0.1": DOES_NOT_HOLD},
    }
    assert mark(DIFFERS) == DIFFERS


def test_the_processes_of_a_run_decide_its_outcome_together():
    data = real_result("async_dispatch-0.12.0.1")
    path = FIXTURES / "results" / "async_dispatch-0.12.0.1.json"

    def run(statuses, holds):
        return StoredResult.from_document(path, in_processes(data, statuses, holds))

    agreeing = run(["ok", "ok", "ok"], [True, True, True])
    assert outcome(agreeing) == HOLDS
    assert claim_evidence(agreeing) == "holds in 3 of 3 processes; e.g. process 0"
    split = run(["ok", "ok", "ok"], [True, False, True])
    assert outcome(split) == UNSETTLED and claim_evidence(split).startswith("holds in 2 of 3 processes")
    assert outcome(run(["ok", "crashed"], [False, True])) == "crashed", "a cell that did not finish has no verdict"
    only = run(["ok"], [False])
    assert outcome(only) == DOES_NOT_HOLD and claim_evidence(only) == "process 0", "one process: its own verdict"
