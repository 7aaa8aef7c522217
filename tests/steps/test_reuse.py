"""Which stored results of a cell count (this machine's, in an environment like the release's now,
accepted) and which are reused (enough processes), looked at again under the folder lock."""

from harness.catalogue import discovery
from harness.install.environments import Environments
from harness.measure.cells import PlannedRun
from harness.measure.sides import Side
from harness.steps.reuse import ReusePolicy, first_round, is_confirmation, spent_a_smaller_budget
from harness.store.results import read_result, write_result
from tests.conftest import REPO, derive, real_result

REAL = real_result("async_dispatch-0.12.0.1")
MACHINE = REAL["host"]["machine"]["id"]
ASYNC_DISPATCH = discovery.discover(REPO / "cases")["async_dispatch"]
UNTIL_DECIDED = {"processes": 5, "decide": "changes", "max_processes": 10}


def policy(tmp_path, **more) -> ReusePolicy:
    cell = (tmp_path, ASYNC_DISPATCH, {"N": 1000}, "cpu", MACHINE)
    return ReusePolicy(*cell, Environments(ASYNC_DISPATCH, None), 5, **more)


def stored(tmp_path, **changes):
    return read_result(write_result(tmp_path, derive(REAL, **changes)))


def test_only_this_machine_s_results_count_and_only_enough_processes_are_reused(tmp_path):
    other = dict(REAL["host"], machine={**REAL["host"]["machine"], "id": "elsewhere"})
    stored(tmp_path, release="0.4.30", host=other, id="elsewhere")
    assert policy(tmp_path).stored("0.4.30") is None, "timings from another machine do not compare"
    few = stored(tmp_path, release="0.4.31", processes=3)
    assert policy(tmp_path).stored("0.4.31") == few
    assert policy(tmp_path).reusable("0.4.31") is None, "measured anew in the planned processes"
    assert policy(tmp_path).stored("0.4.31", also=lambda r: False) is None


def test_what_is_taken_under_the_folder_lock_is_kept_so_the_caller_does_not_call_it_measured(
    tmp_path,
):
    found = stored(tmp_path, release="0.4.31")
    reused: set[str] = set()
    take = policy(tmp_path).under_lock(reused)
    item: PlannedRun = None  # type: ignore[assignment]  # what is reused is the release's, whatever the cell
    assert take(item, Side("0.4.30", "cpu")) is None and reused == set()
    assert take(item, Side("0.4.31", "cpu")) == found and reused == {"0.4.31"}


def test_a_first_round_counts_neither_a_confirmation_nor_a_result_measured_until_decided(tmp_path):
    first = stored(tmp_path, release="0.4.30", processes=5)
    deciding = stored(
        tmp_path, release="0.4.30", processes=5, id="deciding", settings=UNTIL_DECIDED
    )
    assert first_round(5)(first) and not is_confirmation(first, 5)
    assert not first_round(5)(deciding) and is_confirmation(deciding, 5)
    doubled = stored(tmp_path, release="0.4.30", processes=10, id="doubled")
    assert not first_round(5)(doubled) and is_confirmation(doubled, 5), "an older confirmation"


def test_a_result_that_spent_all_of_a_smaller_budget_is_measured_again_with_the_larger(tmp_path):
    spent = stored(tmp_path, release="0.4.30", processes=10, settings=UNTIL_DECIDED)
    assert spent_a_smaller_budget(spent, 20) and not spent_a_smaller_budget(spent, 10)
    assert not spent_a_smaller_budget(spent, None), "no budget asked: nothing to raise"
    assert policy(tmp_path, max_processes=20).stored("0.4.30") is None
    assert policy(tmp_path, max_processes=10).stored("0.4.30") is not None
