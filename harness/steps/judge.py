"""Is a release good or bad?  Judged by the statistics against the two endpoints, never one timing
(docs/releases.md, "Bisect and sweep", has the rule in full).

With a metric the endpoints must differ significantly, and that difference's direction is the
change sought; a release between them is judged by its comparisons with both (``between``), in one
interleaved run with them where the prober can (``measure_with_endpoints``), so the load of the
moment falls on all three alike; an ambiguous one is measured once more with twice the samples, then
is inconclusive, which the search skips.  With ``--claim`` the case's own verdict decides; with
``--status`` the counts of processes that died (``by_ending``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any

from harness.analysis.claims import DOES_NOT_HOLD, HOLDS, outcome
from harness.analysis.metrics import ProcessSamples, compare_metric, metric_samples
from harness.analysis.significance import (
    OPPOSITE,
    Comparison,
    Thresholds,
    Verdict,
    what_would_decide,
)
from harness.analysis.statuses import StatusSummary, compare_endings, ends_of, ran, summarise
from harness.errors import UsageError
from harness.metric_names import Criterion, MetricKey
from harness.steps.probes import Probe, ProbeRelease
from harness.store.results import StoredResult
from harness.store.schema import RunStatus
from harness.units import format_p


class ReleaseVerdict(StrEnum):
    """What a bisection learns of a probed release."""

    GOOD = "good"
    BAD = "bad"
    SKIPPED = "skipped"  # no result to judge: not installable, or the run did not finish ok
    AMBIGUOUS = "inconclusive"  # ran, but the statistics say neither good nor bad


@dataclass(frozen=True)
class Terms:
    """What a bisect calls its old and new behaviour, like ``git bisect --term-old/--term-new``."""

    old: str = "good"
    new: str = "bad"

    def word(self, verdict: ReleaseVerdict) -> str:
        """A verdict in these terms: good is the old behaviour, bad the new."""
        words = {ReleaseVerdict.GOOD: self.old, ReleaseVerdict.BAD: self.new}
        return words.get(verdict, str(verdict))


REGRESSION = Terms()
# ``bisect --broken V --fixed W``: the old behaviour is the broken one
FIX = Terms("broken", "fixed")


@dataclass(frozen=True)
class Judgement:
    release: str
    verdict: ReleaseVerdict
    reason: str
    note: str = ""  # where the result came from
    result: StoredResult | None = None
    vs_good: Comparison | None = None  # this release's samples against the good endpoint's
    vs_bad: Comparison | None = None
    claim: str | None = None  # the claim outcome, with --claim

    @classmethod
    def of(cls, probe: Probe, verdict: ReleaseVerdict, reason: str, **more: Any) -> Judgement:
        """A verdict on ``probe``'s release, its note and its result."""
        return cls(probe.release, verdict, reason, probe.note, probe.result, **more)

    @cached_property
    def ends(self) -> StatusSummary | None:
        """How its processes ended, summed once for every page that says it."""
        return ends_of(self.result)


def metric_names(result: StoredResult) -> list[str]:
    return [key.metric_name for key in metric_samples(result)]


def _usable(measurement: Probe) -> str | None:
    """Why a measurement cannot be judged, or None."""
    if (result := measurement.result) is None:
        return measurement.note
    status, detail = result.result.status, result.result.detail
    if status is RunStatus.NOT_INSTALLABLE:  # its detail says so, with the resolver's reason
        return detail
    if status is not RunStatus.OK:
        last = detail.strip().splitlines()
        return f"status {status}" + (f": {last[-1][:160]}" if last else "")
    return None


def _describe(comparison: Comparison) -> str:
    return f"{comparison.ratio_cell or 'n/a'}, p={format_p(comparison.p_value)}, {comparison.said}"


@dataclass(eq=False)
class Judge:
    """Judges releases one by one; the good endpoint first, then the bad one, then any other."""

    measure: ProbeRelease
    good: str
    bad: str
    criterion: Criterion
    thresholds: Thresholds
    terms: Terms = REGRESSION
    # "ok" or how every process died, once the good endpoint ran
    good_status: str | None = field(default=None, init=False)
    good_result: StoredResult | None = field(default=None, init=False)
    bad_result: StoredResult | None = field(default=None, init=False)
    # slower or faster, once the endpoints are known to differ
    direction: Verdict | None = field(default=None, init=False)

    @property
    def metric(self) -> MetricKey | None:
        return self.criterion.figures

    def _probe(
        self, release: str, again: bool
    ) -> tuple[Probe, StoredResult | None, StoredResult | None]:
        """The release's measurement, and the endpoints' results to judge it against."""
        alongside = getattr(self.measure, "measure_with_endpoints", None)
        if alongside is None or release in (self.good, self.bad) or self.bad_result is None:
            return self.measure(release, again), self.good_result, self.bad_result
        good, probe, bad = alongside(release, self.good, self.bad, again)
        return probe, self._endpoint(good, self.good_result), self._endpoint(bad, self.bad_result)

    def _endpoint(self, measured: Probe, first: StoredResult | None) -> StoredResult | None:
        """An endpoint measured alongside a release, or its first result if that can't be used."""
        if (result := measured.result) is None or _usable(measured) is not None:
            return first
        return result if self.metric is None or self.metric in metric_samples(result) else first

    def __call__(self, release: str) -> Judgement:
        if self.criterion.ending:
            return by_ending(self, release)
        measurement, good, bad = self._probe(release, False)
        problem, result = _usable(measurement), measurement.result
        if problem or result is None:
            return _skipped(measurement, problem or measurement.note)
        if release == self.good:
            return self._good_endpoint(measurement)
        if self.good_result is None:
            raise ValueError("the good endpoint must be judged before any other release")
        if self.metric is not None and self.metric not in metric_samples(result):
            return _skipped(measurement, f"its result has no {self.metric.metric_name}")
        if release == self.bad:
            return self._bad_endpoint(measurement)
        if self.bad_result is None:
            raise ValueError("the bad endpoint must be judged before the releases between them")
        if self.metric is None:
            return by_claim(measurement, self.good_result, self.terms)
        assert good is not None and bad is not None
        if (judged := self._by_metric(measurement, good, bad)).verdict != ReleaseVerdict.AMBIGUOUS:
            return judged
        again, good, bad = self._probe(release, True)
        if _usable(again) or good is None or bad is None:
            return judged
        if (second := self._by_metric(again, good, bad)).verdict == ReleaseVerdict.AMBIGUOUS:
            reason = f"{second.reason}; the same after measuring again with twice the samples"
        else:  # the first look stays in the evidence: it says how noisy this machine was
            ambiguous = "on a second look with twice the samples, the first being ambiguous"
            reason = f"{second.reason}; {ambiguous}: {judged.reason}"
        return dataclasses.replace(second, reason=reason)

    def samples(self, result: StoredResult) -> ProcessSamples:
        assert self.metric is not None
        series = metric_samples(result)
        if self.metric not in series:
            raise UsageError(
                f"unknown metric {self.metric.metric_name} for case {result.result.case}; its "
                f"metrics: {', '.join(metric_names(result)) or 'none'}"
            )
        return series[self.metric]

    def _good_endpoint(self, measurement: Probe) -> Judgement:
        result = measurement.result
        assert result is not None
        self.good_result = result
        if self.metric is not None:
            self.samples(result)  # an unknown metric is refused before anything else is measured
        claim = outcome(result) if self.metric is None else None
        if claim is not None and claim not in (HOLDS, DOES_NOT_HOLD):
            return _skipped(measurement, f"no claim verdict ({claim})")
        why = f"the {self.terms.old} endpoint"
        return Judgement.of(measurement, ReleaseVerdict.GOOD, why, claim=claim)

    def _bad_endpoint(self, measurement: Probe) -> Judgement:
        result = measurement.result
        assert result is not None and self.good_result is not None
        self.bad_result = result
        if self.metric is None:
            return bad_endpoint_by_claim(measurement, self.good_result, self.terms)
        change = self._versus(self.good_result, result)
        if change.verdict == Verdict.UNDECIDED and change.invocation_spread:
            # Separate runs' results (stored before, say): measured together again, until decided.
            self.good_result, self.bad_result = self._together_again(self.good_result, result)
            change = self._versus(self.good_result, self.bad_result)
        if change.verdict not in OPPOSITE:
            old, said = self.terms.old, _describe(change)
            if change.verdict == Verdict.UNCHANGED:
                band = "the interval inside the no-change band"
                why = f"unchanged from the {old} endpoint ({said}, {band}): no change to find"
            else:
                needs = what_would_decide(change, self.thresholds)
                why = f"undecided against the {old} endpoint ({said}): {needs}"
            return Judgement.of(measurement, ReleaseVerdict.AMBIGUOUS, why, vs_good=change)
        self.direction = change.verdict
        why = f"{change.said} than the {self.terms.old} endpoint ({_describe(change)})"
        return Judgement.of(measurement, ReleaseVerdict.BAD, why, vs_good=change)

    def _together_again(
        self, good: StoredResult, bad: StoredResult
    ) -> tuple[StoredResult, StoredResult]:
        """Both endpoints remeasured in one interleaved run if the prober can; else as they were."""
        if (together := getattr(self.measure, "measure_together", None)) is None:
            return good, bad
        together([self.good, self.bad], anew=True, decide="all")
        found = [self.measure(end, False) for end in (self.good, self.bad)]
        ran = [probe.result for probe in found if not _usable(probe) and probe.result is not None]
        return (ran[0], ran[1]) if len(ran) == 2 else (good, bad)

    def _by_metric(self, measurement: Probe, good: StoredResult, bad: StoredResult) -> Judgement:
        """Against the endpoints' results ``good`` and ``bad``; the change's direction is the first
        endpoints'."""
        assert measurement.result is not None and self.direction is not None
        vs_good, vs_bad = (self._versus(end, measurement.result) for end in (good, bad))
        return between(measurement, vs_good, vs_bad, self.direction, self.terms)

    def _versus(self, before: StoredResult, after: StoredResult) -> Comparison:
        samples = self.samples(before), self.samples(after)
        return compare_metric(*samples, self.thresholds, self.metric)


def by_ending(judge: Judge, release: str) -> Judgement:
    """``judge``'s verdict on ``release`` with ``--status``: good or bad by how its processes ended,
    judged on their counts of processes that died (``statuses.compare_endings``), as every ending
    is: like the good endpoint where it differs from the bad one and not from the good, and the
    other way round.  Every process ok against every one dead (however each died) is exact; a mix
    of some dead and some ok is judged by Fisher's exact test; a process killed from outside is a
    fault, set aside."""
    measurement = judge.measure(release, False)
    if (result := measurement.result) is None or not ran(result):
        return _skipped(measurement, _usable(measurement) or measurement.note)
    summary = summarise(result)
    words = summary.words()
    if summary.outside:
        why = f"{words}; {summary.fault()}"
        return Judgement.of(measurement, ReleaseVerdict.AMBIGUOUS, why)
    if release == judge.good:
        judge.good_result, judge.good_status = result, summary.alike or words
        why = f"the {judge.terms.old} endpoint: {words}"
        return Judgement.of(measurement, ReleaseVerdict.GOOD, why)
    if judge.good_result is None:
        raise ValueError("the good endpoint must be judged before any other release")
    vs_good = compare_endings(summarise(judge.good_result), summary, judge.thresholds)
    if release == judge.bad:
        judge.bad_result = result
        if vs_good.verdict is not Verdict.CHANGED:
            found = "no change of status to find"
            if vs_good.verdict is not Verdict.UNCHANGED:
                found = f"{vs_good.said}, undecided"
            why = f"{words}, against {judge.good_status} on the {judge.terms.old} endpoint: {found}"
            return Judgement.of(measurement, ReleaseVerdict.AMBIGUOUS, why)
        return Judgement.of(measurement, ReleaseVerdict.BAD, words, vs_good=vs_good)
    assert judge.bad_result is not None, "the bad endpoint is judged before any other release"
    vs_bad = compare_endings(summarise(judge.bad_result), summary, judge.thresholds)
    like_bad, like_good = (c.verdict is not Verdict.CHANGED for c in (vs_bad, vs_good))
    if like_bad == like_good:
        neither = "tell it from neither endpoint" if like_bad else "differ from both endpoints"
        why = f"{words}: its counts {neither} (against the {judge.terms.old} one "
        why += f"{vs_good.said}; against the {judge.terms.new} one {vs_bad.said})"
        return Judgement.of(measurement, ReleaseVerdict.AMBIGUOUS, why)
    verdict = ReleaseVerdict.BAD if like_bad else ReleaseVerdict.GOOD
    why = f"{words}, as on the {judge.terms.word(verdict)} endpoint"
    return Judgement.of(measurement, verdict, why, vs_good=vs_good, vs_bad=vs_bad)


def between(
    measurement: Probe, vs_good: Comparison, vs_bad: Comparison, direction: Verdict, terms: Terms
) -> Judgement:
    """A release between the endpoints, by its comparisons with each: bad where it moved away from
    the good one in the change's ``direction`` and not back towards it, good the other way round."""
    like_bad = vs_good.verdict == direction  # moved away from good the way bad did
    like_good = vs_bad.verdict == OPPOSITE[direction]  # moved away from bad back towards good
    old, new = terms.old, terms.new
    evidence = f"against {old} {_describe(vs_good)}; against {new} {_describe(vs_bad)}"
    if like_bad and not like_good:
        verdict = ReleaseVerdict.BAD
        reason = f"{direction} than the {old} endpoint, not back towards it ({evidence})"
    elif like_good and not like_bad:
        verdict = ReleaseVerdict.GOOD
        reason = f"unlike the {new} endpoint, not {direction} than the {old} one ({evidence})"
    elif like_bad:
        verdict = ReleaseVerdict.AMBIGUOUS
        reason = f"significantly unlike both endpoints: a partial or second change ({evidence})"
    else:
        verdict = ReleaseVerdict.AMBIGUOUS
        reason = f"not significantly unlike either endpoint ({evidence})"
    return Judgement.of(measurement, verdict, reason, vs_good=vs_good, vs_bad=vs_bad)


def bad_endpoint_by_claim(measurement: Probe, good: StoredResult, terms: Terms) -> Judgement:
    """The bad endpoint by the case's claim: bad where the claim's verdict is the good
    endpoint's other one."""
    assert measurement.result is not None
    before, after = outcome(good), outcome(measurement.result)
    if after not in (HOLDS, DOES_NOT_HOLD):
        return _skipped(measurement, f"no claim verdict ({after})")
    if after == before:
        why = f"the claim {after} here as on the {terms.old} endpoint: no change to find"
        return Judgement.of(measurement, ReleaseVerdict.AMBIGUOUS, why, claim=after)
    why = f"the claim {after} here, {before} on the {terms.old} endpoint"
    return Judgement.of(measurement, ReleaseVerdict.BAD, why, claim=after)


def by_claim(measurement: Probe, good: StoredResult, terms: Terms) -> Judgement:
    """A release between the endpoints by the case's claim: as the endpoint whose verdict it has."""
    assert measurement.result is not None
    if (found := outcome(measurement.result)) not in (HOLDS, DOES_NOT_HOLD):
        why = f"no claim verdict ({found})"
        return Judgement(measurement.release, ReleaseVerdict.SKIPPED, why, measurement.note)
    verdict = ReleaseVerdict.GOOD if found == outcome(good) else ReleaseVerdict.BAD
    why = f"the claim {found}, as on the {terms.word(verdict)} endpoint"
    return Judgement.of(measurement, verdict, why, claim=found)


def _skipped(measurement: Probe, why: str) -> Judgement:
    """A release left out of the search, and why: no usable result, or none of the metric."""
    return Judgement.of(measurement, ReleaseVerdict.SKIPPED, why)
