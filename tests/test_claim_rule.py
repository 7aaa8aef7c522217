"""The one rule that settles a claim over processes: at least 80 % of at least ``min_processes``
agree."""

from harness.claim_rule import DOES_NOT_HOLD, HOLDS, MIN_CLAIM_PROCESSES, UNSETTLED, settle_claim


def test_a_claim_settles_when_enough_of_enough_processes_agree():
    assert MIN_CLAIM_PROCESSES == 3
    assert settle_claim([True] * 4 + [False]).outcome == HOLDS, "4 of 5 is 80 %"
    assert settle_claim([False] * 3).outcome == DOES_NOT_HOLD
    assert settle_claim([True, True, False]).outcome == UNSETTLED, "2 of 3 is short of 80 %"
    assert settle_claim([True, True]).outcome == UNSETTLED, "too few processes"


def test_fewer_processes_may_settle_a_claim_where_the_caller_asks_for_fewer():
    assert settle_claim([True], min_processes=1).outcome == HOLDS
    assert settle_claim([True, False], min_processes=1).outcome == UNSETTLED
    assert settle_claim([False] * 4, min_processes=1).text() == "does not hold in 4 of 4 processes"
