"""Judging a release against the two endpoints: by the statistics of a metric, or by the claim."""

from pathlib import Path

import pytest

from harness.analysis.significance import Thresholds, Verdict
from harness.errors import UsageError
from harness.metric_names import ENDING, Criterion, MetricKey, parse_metric_name
from harness.steps.judge import Judge, ReleaseVerdict
from harness.steps.probes import Probe
from harness.store.results import StoredResult
from tests.conftest import SEGFAULT, FakeReleases, derive, real_result

WALL = parse_metric_name("eager.wall_ns")
DEFAULTS = Thresholds()


def judged(fake: FakeReleases, metric: MetricKey | None = WALL, thresholds: Thresholds = DEFAULTS):
    """Judge every release of ``fake`` in order (endpoints first, as the bisection does)."""
    releases = fake.releases
    judge = Judge(fake, releases[0], releases[-1], Criterion.of(metric), thresholds)
    order = [releases[0], releases[-1], *releases[1:-1]]
    return judge, {release: judge(release) for release in order}


def test_a_release_like_either_endpoint_is_judged_by_it():
    judge, verdicts = judged(FakeReleases({"a": 1, "b": 1, "c": 3, "d": 3}))
    assert judge.direction == Verdict.SLOWER
    assert [verdicts[r].verdict for r in "abcd"] == [
        ReleaseVerdict.GOOD,
        ReleaseVerdict.GOOD,
        ReleaseVerdict.BAD,
        ReleaseVerdict.BAD,
    ]
    assert (
        verdicts["c"].vs_good.verdict == Verdict.SLOWER
        and verdicts["c"].vs_bad.verdict == "undecided"
    )
    assert verdicts["b"].vs_bad.verdict == Verdict.FASTER
    assert all(not again for _, again in judge.measure.calls), "clear verdicts need no second look"


def test_the_direction_of_the_change_comes_from_the_endpoints():
    judge, verdicts = judged(FakeReleases({"a": 3, "b": 1, "c": 1}))
    assert judge.direction == Verdict.FASTER
    assert (
        verdicts["b"].verdict == ReleaseVerdict.BAD and verdicts["c"].verdict == ReleaseVerdict.BAD
    )


def test_a_release_unlike_both_endpoints_is_measured_again_then_inconclusive():
    fake = FakeReleases({"a": 1, "b": 1.8, "c": 4})
    _, verdicts = judged(fake)
    assert verdicts["b"].verdict == ReleaseVerdict.AMBIGUOUS
    assert (
        "unlike both endpoints" in verdicts["b"].reason
        and "twice the samples" in verdicts["b"].reason
    )
    assert fake.calls.count(("b", True)) == 1


def test_a_second_look_can_settle_it():
    fake = FakeReleases({"a": 1, "b": 1.8, "c": 4}, again={"b": 4})
    _, verdicts = judged(fake)
    assert verdicts["b"].verdict == ReleaseVerdict.BAD
    assert (
        "on a second look with twice the samples, the first being ambiguous: significantly unlike "
        "both" in (verdicts["b"].reason)
    )


def test_endpoints_shown_unchanged_leave_nothing_to_find_and_undecided_ones_say_what_would_decide():
    # The same samples on both: ×1 with a 99 % interval of about ×0.87–×1.16, inside a ×1.2 band,
    # not a ×1.05 one.
    _, verdicts = judged(FakeReleases({"a": 1, "b": 1}), thresholds=Thresholds(factor=1.2))
    assert (
        verdicts["b"].verdict == ReleaseVerdict.AMBIGUOUS
        and "no change to find" in verdicts["b"].reason
    )
    assert verdicts["b"].vs_good.verdict == Verdict.UNCHANGED
    _, verdicts = judged(FakeReleases({"a": 1, "b": 1}))
    assert (
        verdicts["b"].vs_good.verdict == Verdict.UNDECIDED
        and "no change to find" not in verdicts["b"].reason
    )
    assert (
        "undecided against the good endpoint" in verdicts["b"].reason
        and "more processes" in verdicts["b"].reason
    )


def test_releases_without_a_usable_result_are_skipped():
    _, verdicts = judged(FakeReleases({"a": 1, "b": None, "c": "failed", "d": 3}))
    assert (
        verdicts["b"].verdict == ReleaseVerdict.SKIPPED
        and "could not be installed" in verdicts["b"].reason
    )
    assert (
        verdicts["c"].verdict == ReleaseVerdict.SKIPPED
        and verdicts["c"].reason == "status failed: RuntimeError: fake"
    )


def test_an_unknown_metric_is_refused_with_the_known_names_before_anything_else_is_measured():
    fake = FakeReleases({"a": 1, "b": 3})
    judge = Judge(fake, "a", "b", Criterion.of(parse_metric_name("nope.wall_ns")), Thresholds())
    with pytest.raises(
        UsageError, match=r"unknown metric nope.wall_ns .* eager.wall_ns, eager.dispatch_ns"
    ):
        judge("a")
    assert fake.calls == [("a", False)]


def test_by_the_claim_a_release_shares_the_outcome_of_one_endpoint():
    fake = FakeReleases(
        {"a": 1, "b": 1, "c": 1, "d": 1}, holds={"a": False, "b": False, "c": True, "d": True}
    )
    _, verdicts = judged(fake, metric=None)
    assert [verdicts[r].verdict for r in "abcd"] == [
        ReleaseVerdict.GOOD,
        ReleaseVerdict.GOOD,
        ReleaseVerdict.BAD,
        ReleaseVerdict.BAD,
    ]
    assert (
        verdicts["c"].claim == "holds"
        and verdicts["c"].reason == "the claim holds, as on the bad endpoint"
    )


def test_by_the_claim_endpoints_with_the_same_outcome_leave_nothing_to_find():
    _, verdicts = judged(FakeReleases({"a": 1, "b": 3}), metric=None)
    assert (
        verdicts["b"].verdict == ReleaseVerdict.AMBIGUOUS
        and "no change to find" in verdicts["b"].reason
    )


def test_a_release_without_the_metric_is_skipped_not_refused():
    fake = FakeReleases({"a": 1, "b": 2, "c": 3})
    judge = Judge(fake, "a", "c", Criterion.of(WALL), Thresholds())
    judge("a"), judge("c")
    without_eager = derive(real_result("async_dispatch-0.12.0.1"), release="b", scale=2)
    # schema version 2: every process times its own programs
    for process in without_eager["processes"]:
        del process["programs"]["eager"]
    measured = Probe(
        "b", StoredResult.from_document(Path("b.json"), without_eager), "fake measurement"
    )
    judge.measure = lambda release, again: measured
    verdict = judge("b")
    assert (
        verdict.verdict == ReleaseVerdict.SKIPPED
        and verdict.reason == "its result has no eager.wall_ns"
    )


class AlongsideReleases(FakeReleases):
    """A fake prober that measures a release with both endpoints, whose figures differ from their
    first (``endpoints``: the endpoint scales measured alongside)."""

    def __init__(self, scales: dict, endpoints: dict) -> None:
        super().__init__(scales)
        self.endpoints = endpoints
        self.alongside: list[str] = []

    def measure_with_endpoints(self, release, good, bad, again=False):
        self.alongside.append(release)
        first = dict(self.scales)
        self.scales = {**first, **self.endpoints}
        try:
            return self(good, again), self(release, again), self(bad, again)
        finally:
            self.scales = first


def test_a_release_between_is_judged_against_the_endpoints_measured_with_it():
    # The first endpoints were 1 and 3; measured alongside the middle release, under other load,
    # they read 2 and 6: the middle release's 2 is like the good endpoint measured with it.
    fake = AlongsideReleases({"a": 1, "b": 2, "c": 3}, endpoints={"a": 2, "c": 6})
    judge, verdicts = judged(fake)
    assert fake.alongside == ["b"] and judge.direction == Verdict.SLOWER
    assert verdicts["b"].verdict == ReleaseVerdict.GOOD, verdicts["b"].reason
    _plain, first_only = judged(FakeReleases({"a": 1, "b": 2, "c": 3}))
    assert first_only["b"].verdict != ReleaseVerdict.GOOD, (
        "against the first endpoints it would not be"
    )


class SeparateRuns(FakeReleases):
    """A fake prober whose endpoints come from separate runs (as stored results reused), measured
    under load, until ``measure_together`` measures them in one run."""

    def __init__(self, scales: dict) -> None:
        super().__init__(scales)
        self.together: list[tuple[list[str], bool, str]] = []

    def measure_together(self, releases, *, anew=False, decide="changes"):
        self.together.append((list(releases), anew, decide))

    def __call__(self, release, again=False):
        data = derive(
            real_result("async_dispatch-0.12.0.1"), release=release, scale=self.scales[release]
        )
        if not self.together:
            data["invocation"] = f"run-of-{release}"
            for process in data["processes"]:
                process["load"] = {
                    **(process.get("load") or {}),
                    "other_cpu_cores": 0.9,
                    "loaded": True,
                }
        return Probe(release, StoredResult.from_document(Path(f"{release}.json"), data), "fake")


def test_endpoints_from_separate_runs_under_load_are_measured_again_together_not_given_up():
    fake = SeparateRuns({"a": 1, "b": 3})
    judge = Judge(fake, "a", "b", Criterion.of(WALL), Thresholds())
    judge("a")
    verdict = judge("b")
    assert fake.together == [(["a", "b"], True, "all")], (
        "both endpoints anew, in one run, until decided"
    )
    assert verdict.verdict == ReleaseVerdict.BAD and verdict.vs_good.verdict == Verdict.SLOWER


def status_bisect(scales, terms=None):
    from harness.steps.bisection import bisect
    from harness.steps.judge import FIX, REGRESSION

    releases = FakeReleases(scales)
    names = list(scales)
    terms = terms or REGRESSION
    judge = Judge(releases, names[0], names[-1], Criterion.of(ENDING), Thresholds(), terms)
    return bisect(names, judge, terms), releases, FIX


def test_by_status_the_first_release_that_stops_running_ok_is_found():
    found, releases, _ = status_bisect(
        {"a": 1, "b": 1.5, "c": 1, "d": SEGFAULT, "e": SEGFAULT, "f": SEGFAULT}
    )
    assert (found.last_good, found.first_bad) == ("c", "d")
    assert found.probes[1].reason == "SIGSEGV (exit 139) in 10 of 10 processes"
    assert "as on the bad endpoint" in next(p.reason for p in found.probes if p.release == "d")
    assert len(releases.calls) <= 5, "a bisection, not a sweep"


def test_by_status_a_fix_and_endpoints_alike_and_a_mix():
    from harness.steps.judge import FIX

    found, _, _ = status_bisect({"a": SEGFAULT, "b": SEGFAULT, "c": 1, "d": 1}, FIX)
    assert found.answer().startswith("fixed in c (last broken b)")
    alike, _, _ = status_bisect({"a": 1, "b": 1})
    assert not alike.found and alike.no_change
    assert "no change of status to find" in alike.stopped
    mixed, _, _ = status_bisect({"a": 1, "b": {**SEGFAULT, "processes": 3}, "c": SEGFAULT})
    assert (mixed.last_good, mixed.first_bad) == ("a", "c")
    [aside] = [
        j for j in mixed.probes if j.verdict not in (ReleaseVerdict.GOOD, ReleaseVerdict.BAD)
    ]
    assert aside.release == "b" and "its counts tell it from neither endpoint" in aside.reason
    assert "against the good one died in 0 of 10 processes on A, 3 of 10 on B" in aside.reason


# Every process dead, four ways (SIGSEGV, a ValueError, a time-out, SIGKILL).
MIXED = [
    SEGFAULT,
    {"status": "failed", "how": "raised", "last_lines": "ValueError: no", "processes": 7},
    {"status": "timeout", "how": "timeout", "processes": 4},
    {"status": "crashed", "how": "signal", "signal": "SIGKILL", "exit_status": 137, "processes": 2},
]


def test_by_status_processes_dead_each_their_own_way_are_bad_and_a_mix_is_judged_on_its_counts():
    found, _, _ = status_bisect({"a": 1, "b": 1, "c": MIXED, "d": MIXED})
    assert (found.last_good, found.first_bad) == ("b", "c"), found.stopped
    assert "as on the bad endpoint" in next(p.reason for p in found.probes if p.release == "c")
    mostly = {**SEGFAULT, "processes": 9}  # 9 of 10 dead: like the bad endpoint, by its counts
    counted, _, _ = status_bisect({"a": 1, "b": 1, "c": mostly, "d": SEGFAULT})
    assert (counted.last_good, counted.first_bad) == ("b", "c"), counted.stopped
    assert {j.verdict for j in counted.probes} <= {ReleaseVerdict.GOOD, ReleaseVerdict.BAD}
