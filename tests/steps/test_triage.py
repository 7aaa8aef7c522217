"""The triage's logic with fake measurements: every step found, each confirmed by measuring again,
one answer each."""

import pytest

from harness.analysis.significance import Thresholds, Verdict
from harness.metric_names import ENDING, Criterion, parse_metric_name
from harness.render.triage_words import answers
from harness.steps.triage import triage
from tests.conftest import SEGFAULT, TERMINATED, FakeReleases

WALL = parse_metric_name("eager.wall_ns")
RELEASES = ["r0", "r1", "r2", "r3", "r4", "r5"]


class FakeConfirmer:
    """Stands in for ``PairConfirmer``: the pairs' releases measured again by a fake prober; every
    call logged."""

    def __init__(self, again: FakeReleases) -> None:
        self.again = again
        self.calls: list[list[tuple[str, str]]] = []

    def __call__(self, pairs):
        self.calls.append(list(pairs))
        self.metrics = dict(pairs)
        return {(a, b): (self.again(a, True), self.again(b, True)) for a, b in pairs}


def run(scales, *, again=None, holds=None, metrics=(WALL,), with_claim=False):
    first = FakeReleases(scales, holds=holds)
    confirmer = FakeConfirmer(FakeReleases(again or scales, holds=holds))
    metrics = list(metrics) if metrics is not None else None
    found = triage(
        list(scales),
        first,
        confirmer,
        metrics=metrics,
        with_claim=with_claim,
        thresholds=Thresholds(),
    )
    return found, first, confirmer


def test_a_regression_and_its_fix_are_both_confirmed_and_answered():
    found, _, confirmer = run(dict(zip(RELEASES, [1, 1, 3, 3, 1, 1], strict=True)))
    assert confirmer.calls == [[("r1", "r2"), ("r3", "r4")]], (
        "every pair measured again in one call"
    )
    assert [(c.step.before, c.step.after, c.confirmed) for c in found.confirmations] == [
        ("r1", "r2", True),
        ("r3", "r4", True),
    ]
    slower, fixed = answers(found)
    assert slower.startswith("eager.wall_ns: slower ×3 since r2 (last good r1; ")
    assert fixed.startswith("eager.wall_ns: fixed in r4 (×3 faster; last slow r3; ")


def test_a_step_that_does_not_hold_on_measuring_again_is_not_an_answer():
    scales = {"a": 1, "b": 3, "c": 3}
    found, _, _ = run(scales, again={"a": 1, "b": 1, "c": 3})
    [confirmation] = found.confirmations
    assert not confirmation.confirmed
    assert confirmation.reason == "measured again: within ±7.5% this time (10 processes a side)"
    assert (
        confirmation.comparison is not None and confirmation.comparison.verdict == Verdict.UNDECIDED
    )
    assert found.changes() == [] and answers(found) == []


def test_a_speed_up_without_an_earlier_slowdown_reads_faster_not_fixed():
    found, _, _ = run({"a": 3, "b": 1})
    [only] = answers(found)
    assert only.startswith("eager.wall_ns: faster ×3 since b (last slower a; ")


def test_the_claim_stopping_and_holding_again():
    scales = dict.fromkeys(RELEASES, 1)
    found, _, _ = run(scales, holds={"r2": False, "r3": False}, metrics=[], with_claim=True)
    assert [c.step.criterion.name for c in found.confirmations] == ["claim", "claim"]
    assert answers(found) == [
        "claim stops holding in r2 (last held in r1)",
        "claim holds again from r4 (last failed in r3)",
    ]


def test_a_release_that_did_not_run_is_named_with_the_change():
    found, _, _ = run({"a": 1, "b": None, "c": 3})
    [only] = answers(found)
    assert only.endswith("; b between them did not run, so the change is in one of them or c")


def test_a_release_that_cannot_be_measured_again_leaves_its_step_unconfirmed():
    found, _, _ = run({"a": 1, "b": 3}, again={"a": 1, "b": None})
    [confirmation] = found.confirmations
    assert not confirmation.confirmed
    assert confirmation.reason == "not measured again: jax b: could not be installed: fake"


def test_without_a_step_nothing_is_measured_again():
    found, first, confirmer = run({"a": 1, "b": 1, "c": 1})
    assert confirmer.calls == [] and found.confirmations == []
    assert first.calls == [(r, False) for r in ("a", "b", "c")]


@pytest.mark.parametrize("metrics", [None, [WALL]])
def test_every_metric_or_one(metrics):
    found, _, _ = run({"a": 1, "b": 3}, metrics=metrics)
    stepped = {c.step.criterion.name for c in found.changes()}
    assert ("eager.wall_ns" in stepped) and (len(stepped) > 1) == (metrics is None)


class ScriptReleases(FakeReleases):
    """A plain script's results: each process's own numbers and phases, scaled per release (every
    process a little apart, as real ones are).  ``moves`` says which figures follow the release's
    scale."""

    def __init__(self, scales, moves=("json.items_per_s",)):
        super().__init__(scales)
        self.moves = moves

    def __call__(self, release, again=False):
        from harness.steps.probes import Probe
        from harness.store.results import StoredResult

        probe = super().__call__(release, again)
        data = probe.result.result.to_json()
        scale = self.scales[release]
        for i, process in enumerate(data["processes"]):
            # around 1: the median is the scale's
            jitter = 1 + 0.01 * (i - (len(data["processes"]) - 1) / 2)
            items = 1000 / (scale if "json.items_per_s" in self.moves else 1)
            imports = 2e9 * (scale if "process.import_ns" in self.moves else 1)
            process["figures"] = {
                "json.items_per_s": items * jitter,
                "process.import_ns": imports * jitter,
            }
        return Probe(release, StoredResult.from_document(probe.result.path, data), probe.note)


ITEMS, IMPORTS = parse_metric_name("json.items_per_s"), parse_metric_name("process.import_ns")


def script_triage(scales, moves, rule=None):
    return triage(
        list(scales),
        ScriptReleases(scales, moves),
        FakeConfirmer(ScriptReleases(scales, moves)),
        metrics=[ITEMS, IMPORTS],
        with_claim=False,
        thresholds=rule or Thresholds(),
    )


def test_a_scripts_own_number_is_answered_in_its_own_unit_and_direction():
    scales = {"a": 1, "b": 1, "c": 2, "d": 2}
    for higher, verdict, how in (
        (("json.items_per_s",), Verdict.SLOWER, "worse"),
        ((), Verdict.FASTER, "better"),
    ):
        found = script_triage(scales, ("json.items_per_s",), Thresholds(higher_is_better=higher))
        [change] = found.changes()
        assert (
            change.step.criterion.name == "json.items_per_s"
            and change.comparison.verdict == verdict
        )
        [text] = answers(found)
        assert text.startswith(
            f"json.items_per_s: lower ×2 ({how}) since c (last b; 1000 → 500)"
        ), text


def test_a_change_in_the_import_of_jax_is_named_as_jaxs_own_and_comes_after_the_scripts():
    found = script_triage({"a": 1, "b": 2, "c": 2}, ("json.items_per_s", "process.import_ns"))
    first, second = answers(found)
    assert first.startswith("json.items_per_s: lower ×2")
    assert second.startswith(
        "process.import_ns (JAX's own import, not the script's code): slower ×2 since b"
    )


def test_a_release_that_crashes_in_every_process_beside_one_that_runs_ok_is_a_confirmed_step():
    scales = {"r0": 1, "r1": 1, "r2": SEGFAULT, "r3": SEGFAULT, "r4": 1}
    found, _, confirmer = run(scales)
    assert not found.first_round.unmeasured()
    statuses = [c for c in found.confirmations if c.step.criterion.ending]
    assert [(c.step.before, c.step.after, c.step.said, c.confirmed) for c in statuses] == [
        ("r1", "r2", "ok → SIGSEGV (exit 139)", True),
        ("r3", "r4", "SIGSEGV (exit 139) → ok", True),
    ]
    assert confirmer.metrics[("r1", "r2")] == (Criterion.of(ENDING),), (
        "a status step decides how they end"
    )
    crash, again = [text for text in answers(found) if text.startswith("status")]
    assert crash == (
        "status: crashes since r2: SIGSEGV (exit 139) in 10 of 10 processes (Fatal Python error: "
        "Segmentation fault); r1 ok in 10 of 10 processes"
    )
    assert again.startswith("status: runs again since r4: ok in 10 of 10 processes; r3 SIGSEGV")


def test_a_status_step_that_is_not_seen_again_is_not_confirmed():
    found, _, _ = run({"a": 1, "b": SEGFAULT}, again={"a": 1, "b": 1})
    [step] = found.confirmations
    assert step.step.criterion.ending and not step.confirmed
    assert step.reason.startswith("measured again: no such step this time")
    assert answers(found) == []


def test_a_crash_in_one_process_of_many_is_measured_again_and_undecided_never_a_change():
    found, _, confirmer = run({"a": 1, "b": {**SEGFAULT, "processes": 1}})
    [step] = found.first_round.steps
    assert step.criterion.ending and step.said == "ok → SIGSEGV (exit 139)", (
        "a new ending, even in one process, is a candidate to measure again"
    )
    assert confirmer.metrics == {("a", "b"): (Criterion.of(ENDING),)}
    assert not found.first_round.unmeasured(), "the other processes of b were measured"
    [confirmation] = found.confirmations
    assert not confirmation.confirmed and confirmation.undecided, "1 of 10 against 0 of 10"
    assert answers(found) == []


def test_a_crash_in_half_of_ten_processes_is_left_undecided_with_its_counts():
    found, _, _ = run({"a": 1, "b": {**SEGFAULT, "processes": 5}})
    [confirmation] = found.confirmations
    assert confirmation.undecided and confirmation.comparison is not None
    assert confirmation.comparison.said == (
        "died in 0 of 10 processes on A, 5 of 10 on B (undecided, Fisher p=0.033)"
    )


def test_a_process_killed_from_outside_is_said_as_a_fault_never_a_step():
    found, _, _ = run({"a": 1, "b": {**TERMINATED, "processes": 1}, "c": TERMINATED})
    assert [s for s in found.first_round.steps if s.criterion.ending] == []
    faults = dict(found.faults())
    assert set(faults) == {"b", "c"}
    assert faults["b"].startswith("killed from outside in 1 of 10 processes")
    assert "not a change of the release, and no evidence of no change" in faults["b"]


def test_a_number_from_zero_in_every_process_is_answered_with_its_values_not_a_ratio():
    import dataclasses

    from harness.analysis.processes import compare_processes
    from harness.render.triage_words import answer
    from harness.steps.bisection import ReleaseStep
    from harness.steps.triage import Confirmation

    key = parse_metric_name("json.temp_mib")
    compared = dataclasses.replace(compare_processes([[0.0]] * 5, [[64.0]] * 5), metric=key)
    step = ReleaseStep(Criterion.of(key), "0.7.1", "0.7.2", compared, Verdict.SLOWER)
    change = Confirmation(step, None, None, compared, True, "measured again")  # type: ignore[arg-type]
    assert answer(change, fix=False) == (
        "json.temp_mib: changed from 0 to 64 in every process since 0.7.2 (last 0.7.1)"
    )
