"""The search: bisection with skipped releases, its probe count, and the sweep that sees every
step."""

from pathlib import Path

import pytest

from harness.analysis.significance import Shape, Thresholds, Verdict
from harness.metric_names import Criterion, parse_metric_name
from harness.steps.bisection import bisect, expected_probes, sweep
from harness.steps.judge import FIX, Judge, Judgement, ReleaseVerdict
from harness.steps.probes import Probe
from harness.store.results import StoredResult
from tests.conftest import FakeReleases, derive, real_result

# jax 0.4.26–0.4.35 as the index lists them: 0.4.32 is yanked.
RANGE = ["0.4.26", "0.4.27", "0.4.28", "0.4.29", "0.4.30", "0.4.31", "0.4.33", "0.4.34", "0.4.35"]
WALL = parse_metric_name("eager.wall_ns")


class ScriptedJudge:
    """A judge whose verdicts are given: bad from ``first_bad`` on, some releases set aside."""

    def __init__(self, releases, first_bad, set_aside=None):
        self.releases = releases
        self.first_bad = first_bad
        self.set_aside = set_aside or {}
        self.probed = []

    def __call__(self, release):
        self.probed.append(release)
        if release in self.set_aside:
            return Judgement(release, self.set_aside[release], "scripted")
        index, change = self.releases.index(release), self.releases.index(self.first_bad)
        return Judgement(
            release, ReleaseVerdict.BAD if index >= change else ReleaseVerdict.GOOD, "scripted"
        )


@pytest.mark.parametrize("first_bad", RANGE[1:])
def test_a_single_change_is_found_wherever_it_is_within_log2_n_plus_2_probes(first_bad):
    judge = ScriptedJudge(RANGE, first_bad)
    found = bisect(RANGE, judge)
    assert found.first_bad == first_bad
    assert found.last_good == RANGE[RANGE.index(first_bad) - 1]
    assert len(found.probes) <= expected_probes(len(RANGE)) == 6
    assert judge.probed[:2] == [RANGE[0], RANGE[-1]], "both endpoints first"
    assert len(set(judge.probed)) == len(judge.probed), "no release is probed twice"


def test_the_first_probe_between_the_endpoints_is_the_middle_one():
    judge = ScriptedJudge(RANGE, "0.4.33")
    bisect(RANGE, judge)
    assert judge.probed == ["0.4.26", "0.4.35", "0.4.30", "0.4.33", "0.4.31"]


def test_a_skipped_release_is_stepped_around_and_named_in_the_answer():
    judge = ScriptedJudge(
        RANGE,
        "0.4.33",
        set_aside={"0.4.31": ReleaseVerdict.SKIPPED, "0.4.30": ReleaseVerdict.AMBIGUOUS},
    )
    found = bisect(RANGE, judge)
    assert (found.last_good, found.first_bad) == ("0.4.29", "0.4.33")
    assert found.between() == ["0.4.30", "0.4.31"]
    aside = [j.release for j in found.probes if j.verdict not in ("good", "bad")]
    assert sorted(aside) == ["0.4.30", "0.4.31"]
    assert found.answer() == (
        "first bad 0.4.33, last good 0.4.29; 0.4.30, 0.4.31 between them could not be judged, "
        "so the change is in one of 0.4.30, 0.4.31, 0.4.33"
    )


def test_a_skipped_release_next_to_the_change_does_not_move_the_answer():
    judge = ScriptedJudge(RANGE, "0.4.34", set_aside={"0.4.31": ReleaseVerdict.SKIPPED})
    found = bisect(RANGE, judge)
    assert (found.last_good, found.first_bad, found.between()) == ("0.4.33", "0.4.34", [])


def test_no_change_between_the_endpoints_stops_after_two_probes():
    judge = ScriptedJudge(RANGE, "0.4.35", set_aside={"0.4.35": ReleaseVerdict.AMBIGUOUS})
    found = bisect(RANGE, judge)
    assert not found.found and len(found.probes) == 2
    assert found.answer().startswith("no answer: the bad endpoint 0.4.35 is not bad (inconclusive")


def test_a_good_endpoint_that_cannot_run_stops_at_once():
    found = bisect(
        RANGE, ScriptedJudge(RANGE, "0.4.33", set_aside={"0.4.26": ReleaseVerdict.SKIPPED})
    )
    assert (
        not found.found
        and len(found.probes) == 1
        and "good endpoint 0.4.26 cannot be judged" in found.stopped
    )


def test_expected_probes():
    assert [expected_probes(n) for n in (2, 3, 4, 9, 16, 17)] == [3, 4, 4, 6, 6, 7]


def test_bisect_with_the_real_judge_over_fake_releases_with_a_skip():
    scales = dict.fromkeys(RANGE[:6], 1.0) | dict.fromkeys(RANGE[6:], 3.0) | {"0.4.30": None}
    fake = FakeReleases(scales)
    found = bisect(RANGE, Judge(fake, RANGE[0], RANGE[-1], Criterion.of(WALL), Thresholds()))
    assert (found.last_good, found.first_bad) == ("0.4.31", "0.4.33")
    assert [j.verdict for j in found.probes] == [
        ReleaseVerdict.GOOD,
        ReleaseVerdict.BAD,
        ReleaseVerdict.SKIPPED,
        ReleaseVerdict.GOOD,
        ReleaseVerdict.GOOD,
        ReleaseVerdict.BAD,
    ]
    assert fake.calls == [
        (r, False) for r in ("0.4.26", "0.4.35", "0.4.30", "0.4.29", "0.4.31", "0.4.33")
    ]


def test_a_sweep_reports_every_step_of_a_series_that_goes_up_and_back_down():
    releases = ["r0", "r1", "r2", "r3", "r4", "r5"]
    fake = FakeReleases(
        {"r0": 1, "r1": 1, "r2": 3, "r3": 3, "r4": None, "r5": 1}, holds={"r2": False, "r3": False}
    )
    found = sweep(releases, fake, metrics=[WALL], with_claim=True, thresholds=Thresholds())
    assert [m.release for m in found.not_ok()] == ["r4"]
    steps = [(s.criterion.name, s.before, s.after, s.said) for s in found.steps]
    assert steps == [
        ("eager.wall_ns", "r1", "r2", Verdict.SLOWER),
        ("claim", "r1", "r2", "holds → does not hold"),
        ("eager.wall_ns", "r3", "r5", Verdict.FASTER),
        ("claim", "r3", "r5", "does not hold → holds"),
    ]
    flip = found.steps[1].comparison
    assert flip.shape is Shape.CLAIM and flip.worse and not found.steps[3].comparison.worse, (
        "the claim's flip carries its counts, worse where it stops holding"
    )
    assert flip.counts is not None and flip.counts[1][0] == 0
    assert found.stepped_more_than_once() == ["claim", "eager.wall_ns"], "a bisect finds one"
    assert found.comparisons[(parse_metric_name("eager.wall_ns"), "r1")].verdict == "undecided", (
        "the same processes: no step, no proof"
    )
    # Bisecting the same range sees no change at all: the endpoints agree.
    assert not bisect(releases, Judge(fake, "r0", "r5", Criterion.of(WALL), Thresholds())).found


def test_a_sweep_without_a_metric_compares_every_metric_the_results_have():
    found = sweep(
        ["a", "b"],
        FakeReleases({"a": 1, "b": 3}),
        metrics=None,
        with_claim=True,
        thresholds=Thresholds(),
    )
    timings = [
        "eager.wall_ns",
        "eager.dispatch_ns",
        "jit.wall_ns",
        "jit.dispatch_ns",
        "jit.lower_ns",
        "jit.compile_ns",
    ]
    assert [k.metric_name for k in found.metrics] == [*timings, "process.peak_rss_bytes"]
    stepped = {s.criterion.name for s in found.steps}
    # Over processes each process's median is one draw: one compile timing in each of five processes
    # a side reaches a verdict like the sampled programs do, so every timing steps at three times
    # the time (the memory, which the fake leaves as it was, does not).
    assert stepped == set(timings)


def test_a_metric_measured_in_too_few_processes_never_makes_a_step():
    def measure(release, again):
        data = derive(
            real_result("async_dispatch-0.12.0.1"), release=release, scale={"a": 1, "b": 3}[release]
        )
        for process in data["processes"][2:]:  # only two processes a side compiled
            process["compiled"] = {}
        return Probe(
            release,
            StoredResult.from_document(Path(f"{data['id']}.json"), data),
            "fake measurement",
        )

    found = sweep(["a", "b"], measure, metrics=None, with_claim=False, thresholds=Thresholds())
    stepped = {s.criterion.name for s in found.steps}
    assert {"eager.wall_ns", "jit.wall_ns"} <= stepped
    assert "jit.compile_ns" not in stepped, "two processes a side can never reach a verdict"
    compiled = found.comparisons[(parse_metric_name("jit.compile_ns"), "b")]
    assert compiled.verdict == Verdict.UNDECIDED and compiled.cost.ratio > 2.9
    assert "too few processes (2 and 2) for a verdict" in compiled.flags


def test_a_fix_is_answered_as_a_fix_in_its_own_terms():
    # From a broken release to a fixed one: the old behaviour is the broken one, the new the fixed.
    judge = ScriptedJudge(RANGE, "0.4.33")
    found = bisect(RANGE, judge, FIX)
    assert (found.last_good, found.first_bad) == ("0.4.31", "0.4.33")
    assert found.answer() == "fixed in 0.4.33 (last broken 0.4.31)"
    assert FIX.word(ReleaseVerdict.GOOD) == "broken" and FIX.word(ReleaseVerdict.BAD) == "fixed"
    assert FIX.word(ReleaseVerdict.SKIPPED) == "skipped"


def test_endpoints_that_agree_are_told_apart_from_an_endpoint_that_cannot_run():
    agree = bisect(
        RANGE, ScriptedJudge(RANGE, "0.4.35", set_aside={"0.4.35": ReleaseVerdict.AMBIGUOUS}), FIX
    )
    assert agree.no_change and agree.stopped.startswith("the fixed endpoint 0.4.35 is not fixed")
    broken = bisect(
        RANGE, ScriptedJudge(RANGE, "0.4.35", set_aside={"0.4.35": ReleaseVerdict.SKIPPED})
    )
    assert not broken.no_change
    found = bisect(RANGE, ScriptedJudge(RANGE, "0.4.33"))
    assert not found.no_change


def test_the_real_judge_reasons_in_the_terms_of_a_fix():
    fake = FakeReleases({"a": 3, "b": 3, "c": 1})
    found = bisect(
        ["a", "b", "c"], Judge(fake, "a", "c", Criterion.of(WALL), Thresholds(), FIX), FIX
    )
    assert found.answer() == "fixed in c (last broken b)"
    assert found.probes[0].reason == "the broken endpoint"
    assert found.probes[1].reason.startswith("faster than the broken endpoint")
    assert "against broken" in found.probes[2].reason and "against fixed" in found.probes[2].reason


def test_undecided_endpoints_are_never_called_agreeing_and_exit_3():
    from harness.commands.bisect import bisect_exit

    judge = Judge(FakeReleases({"a": 1, "b": 1}), "a", "b", Criterion.of(WALL), Thresholds())
    judge("a")
    undecided = judge("b")  # the same samples, the interval wider than the ×1.05 band
    assert undecided.vs_good.verdict == Verdict.UNDECIDED

    class Endpoints(ScriptedJudge):
        def __call__(self, release):
            return undecided if release == RANGE[-1] else super().__call__(release)

    found = bisect(RANGE, Endpoints(RANGE, RANGE[-1]))
    assert found.undecided and not found.no_change and bisect_exit(found) == 3
    assert "undecided against the good endpoint" in found.stopped
    agree = bisect(
        RANGE, ScriptedJudge(RANGE, "0.4.35", set_aside={"0.4.35": ReleaseVerdict.AMBIGUOUS})
    )
    assert agree.no_change and not agree.undecided and bisect_exit(agree) == 1


@pytest.mark.parametrize("first_bad", RANGE[1:])
def test_each_probe_s_release_was_told_ahead_before_the_probe_before_it(first_bad):
    """Its venv is installed while the probe before it is measured (``ready.Ahead``)."""
    judge = ScriptedJudge(RANGE, first_bad)
    told: list[list[str]] = []
    probed_when_told: list[int] = []

    def ahead(releases):
        told.append(releases)
        probed_when_told.append(len(judge.probed))

    bisect(RANGE, judge, ahead=ahead)
    assert len(told) == len(judge.probed), "told before every probe"
    for number, release in enumerate(judge.probed[2:], start=2):
        # told before probe ``number - 1`` began: while the one before it was measured
        assert release in told[number - 1] and probed_when_told[number - 1] == number - 1
    assert all(len(releases) <= 2 for releases in told), "the next probe's, if good or if bad"
