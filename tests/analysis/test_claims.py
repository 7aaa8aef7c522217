import pytest

from harness.analysis.claims import (
    DIFFERS,
    DOES_NOT_HOLD,
    HOLDS,
    UNSETTLED,
    ClaimVerdict,
    claim_evidence,
    claim_rows,
    compare_claims,
    mark,
    outcome,
    ranges_text,
    settle_claim,
)
from harness.analysis.significance import Verdict
from harness.store.results import StoredResult
from tests.conftest import FIXTURES, derive, in_processes, real_result, set_claim

ORDER = ["0.4.26", "0.4.30", "0.4.31", "0.4.33", "0.5.3", "0.10.2", "0.12.0.1"]


def test_consecutive_releases_with_one_outcome_make_one_range():
    outcomes = (
        {r: DOES_NOT_HOLD for r in ORDER[:3]}
        | {r: HOLDS for r in ORDER[3:6]}
        | {"0.12.0.1": "failed"}
    )
    assert (
        ranges_text(outcomes, ORDER)
        == "holds on 0.4.33–0.10.2; does not hold on 0.4.26–0.4.31; failed on 0.12.0.1"
    )


def test_a_release_without_a_result_breaks_a_range():
    outcomes = {
        "0.4.26": HOLDS,
        "0.4.30": HOLDS,
        "0.4.33": HOLDS,
        "0.5.3": DOES_NOT_HOLD,
        "0.12.0.1": HOLDS,
    }
    assert ranges_text(outcomes, ORDER) == (
        "holds on 0.4.26–0.4.30, 0.4.33, 0.12.0.1; does not hold on 0.5.3"
    )


def test_nothing_run_says_so():
    assert ranges_text({}, ORDER) == "no runs"


def test_outcome_of_a_run():
    data = real_result("async_dispatch-0.12.0.1")
    path = FIXTURES / "results" / "async_dispatch-0.12.0.1.json"
    assert outcome(StoredResult.from_document(path, data)) == HOLDS, (
        "the claim holds in all 5 processes"
    )
    assert (
        outcome(StoredResult.from_document(path, set_claim(derive(data), False))) == DOES_NOT_HOLD
    )
    assert outcome(StoredResult.from_document(path, {**data, "status": "timeout"})) == "timeout"
    assert [mark(HOLDS), mark(DOES_NOT_HOLD), mark("crashed"), mark(None)] == [
        "✓",
        "✗",
        "crashed",
        "–",
    ]


def test_claims_are_judged_per_backend_and_machines_share_a_cell():
    base = real_result("async_dispatch-0.12.0.1")
    path = FIXTURES / "results" / "async_dispatch-0.12.0.1.json"

    def run(machine, holds, backend="cpu"):
        data = set_claim(derive(base, host={**base["host"], "machine": {"id": machine}}), holds)
        for process in data["processes"]:
            process["jax"] = {**process["jax"], "backend": backend}
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
    assert outcome(split) == UNSETTLED and claim_evidence(split).startswith(
        "unsettled: holds in 2 of 3 processes"
    )
    assert outcome(run(["ok", "crashed"], [False, True])) == "crashed", (
        "a cell that did not finish has no verdict"
    )
    only = run(["ok"], [False])
    assert outcome(only) == UNSETTLED, "one process settles nothing"
    assert claim_evidence(only) == "unsettled: one process (does not hold there); e.g. process 0", (
        "its verdict kept"
    )


def test_a_claim_s_flip_is_a_counted_comparison_judged_by_its_settling_rule():
    """Held in k of n processes a side, words its outcomes: a flip is a change (worse when it
    stops holding), a side unsettled leaves it undecided however the counts lean."""
    data = real_result("async_dispatch-0.12.0.1")
    path = FIXTURES / "results" / "async_dispatch-0.12.0.1.json"

    def run(holds):
        return StoredResult.from_document(path, in_processes(data, ["ok"] * len(holds), holds))

    held, failed = run([True] * 5), run([True] + [False] * 4)
    stops = compare_claims(held, failed)
    assert (stops.verdict, stops.counts, stops.said) == (
        Verdict.CHANGED,
        ((5, 5), (1, 5)),
        "holds → does not hold",
    )
    assert stops.worse and not compare_claims(failed, held).worse
    assert stops.cost is None and stops.shown == ("5 of 5", "1 of 5")
    assert compare_claims(held, run([True] * 4)).verdict is Verdict.UNCHANGED
    split = compare_claims(held, run([True, True, False, False, False]))
    assert split.verdict is Verdict.UNDECIDED, "3 of 5 against: unsettled, no flip"


# --- claim verdicts over processes ---


@pytest.mark.parametrize(
    ("verdicts", "outcome_text", "agree", "text"),
    [
        ([True] * 5, HOLDS, 5, "holds in 5 of 5 processes"),
        ([True, True, True, True, False], HOLDS, 4, "holds in 4 of 5 processes"),  # ⌈0.8 · 5⌉ = 4
        ([False, True, False, False, False], DOES_NOT_HOLD, 4, "does not hold in 4 of 5 processes"),
        ([True, True, True, False, False], UNSETTLED, 3, "unsettled: holds in 3 of 5 processes"),
        ([True] * 3, HOLDS, 3, "holds in 3 of 3 processes"),
        # ⌈0.8 · 3⌉ = 3
        ([True, True, False], UNSETTLED, 2, "unsettled: holds in 2 of 3 processes"),
        ([True] * 8 + [False] * 2, HOLDS, 8, "holds in 8 of 10 processes"),
        ([True] * 7 + [False] * 3, UNSETTLED, 7, "unsettled: holds in 7 of 10 processes"),
        ([True, True], UNSETTLED, 2, "unsettled: holds in 2 of 2 processes"),  # fewer than three
        (
            [True, False, True, False],
            UNSETTLED,
            2,
            "unsettled: holds in 2 of 4 processes, not in the others",
        ),
        ([False], UNSETTLED, 1, "unsettled: one process (does not hold there)"),
        ([], UNSETTLED, 0, "unsettled: no process gave a verdict"),
    ],
)
def test_a_claim_settles_only_when_most_of_enough_processes_agree(
    verdicts, outcome_text, agree, text
):
    settled = settle_claim(verdicts)
    assert (settled.outcome, settled.agree, settled.of) == (outcome_text, agree, len(verdicts))
    assert settled.text() == text


def test_unsettled_is_never_a_tick_or_a_cross_but_can_show_its_hint():
    one = settle_claim([True])
    assert one == ClaimVerdict(UNSETTLED, 1, 1, True)
    assert settle_claim([False]).hint is False
    assert settle_claim([True, False]).hint is None, "an even split leans nowhere"
    assert mark(UNSETTLED) == "?" and mark(settle_claim([True] * 5).outcome) == "✓"


def test_the_rule_can_be_stricter():
    assert settle_claim([True] * 4 + [False], share=1.0).outcome == UNSETTLED
    assert settle_claim([True] * 2, min_processes=2).outcome == HOLDS


def test_unsettled_releases_get_a_range_of_their_own():
    outcomes = {
        "0.4.26": DOES_NOT_HOLD,
        "0.4.30": UNSETTLED,
        "0.4.31": UNSETTLED,
        "0.4.33": HOLDS,
        "0.5.3": "failed",
    }
    assert ranges_text(outcomes, ORDER) == (
        "holds on 0.4.33; does not hold on 0.4.26; unsettled on 0.4.30–0.4.31; failed on 0.5.3"
    )
