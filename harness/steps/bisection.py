"""Find the release that changed it: bisection over an ordered run of releases, and a full sweep.

``bisect`` judges the two endpoints first, then halves the range between the last good and the
first bad release until they are neighbours, as ``git bisect`` does; a release that cannot be judged
is set aside like ``git bisect skip`` (the answer names those left between the two). Bisection
assumes one change; ``sweep`` measures every release and lists each step between neighbours, so a
second change (or one undone) shows up. Both measure through callables, tested with fake ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass, field
from itertools import pairwise

from harness.analysis.claims import compare_claims
from harness.analysis.metrics import MetricKey, compare_metric, metric_samples, union_keys
from harness.analysis.significance import OPPOSITE, Comparison, Thresholds, Verdict
from harness.analysis.statuses import (
    Ending,
    change_between,
    compare_endings,
    measured,
    ran,
    summarise,
)
from harness.metric_names import ENDING, Criterion, Judged
from harness.steps.judge import FIX, REGRESSION, Judgement, ReleaseVerdict, Terms
from harness.steps.probes import Probe, ProbeRelease
from harness.store.schema import RunStatus

JudgeRelease = Callable[[str], Judgement]


def expected_probes(releases: int) -> int:
    """⌈log2 n⌉ + 2: both endpoints, then halving the n - 1 gaps between n releases."""
    return math.ceil(math.log2(releases)) + 2 if releases > 1 else releases


@dataclass
class BisectOutcome:
    releases: list[str]  # the whole range, good endpoint first
    probes: list[Judgement] = field(default_factory=list)  # in the order probed
    last_good: str | None = None
    first_bad: str | None = None
    stopped: str = ""  # why there is no answer
    # first_bad is the first release with the new behaviour, in these terms
    terms: Terms = REGRESSION

    @property
    def found(self) -> bool:
        return self.first_bad is not None

    @property
    def no_change(self) -> bool:
        """Both endpoints ran and agree: a change introduced and undone between them hides here."""
        if not self._endpoints_ambiguous():
            return False
        compared = self.probes[1].vs_good
        return compared is None or compared.verdict == Verdict.UNCHANGED

    @property
    def undecided(self) -> bool:
        """Both endpoints ran, and their comparison is neither a change nor evidence of none."""
        return self._endpoints_ambiguous() and not self.no_change

    def _endpoints_ambiguous(self) -> bool:
        verdicts = [probe.verdict for probe in self.probes]
        return not self.found and verdicts == [ReleaseVerdict.GOOD, ReleaseVerdict.AMBIGUOUS]

    def between(self) -> list[str]:
        """Releases between the last good and the first bad one: where else it may lie."""
        if self.last_good is None or self.first_bad is None:
            return []
        index = self.releases.index
        return self.releases[index(self.last_good) + 1 : index(self.first_bad)]

    def answer(self) -> str:
        if not self.found:
            return f"no answer: {self.stopped}"
        text = f"first {self.terms.new} {self.first_bad}, last {self.terms.old} {self.last_good}"
        if self.terms == FIX:
            text = f"fixed in {self.first_bad} (last broken {self.last_good})"
        if between := self.between():
            text += (
                f"; {', '.join(between)} between them could not be judged, so the change is in one "
                f"of {', '.join([*between, str(self.first_bad)])}"
            )
        return text


def next_probe(good: int, bad: int, set_aside: Set[int] = frozenset()) -> int | None:
    """The release nearest the middle between ``good`` and ``bad``, not set aside; None: none."""
    candidates = [i for i in range(good + 1, bad) if i not in set_aside]
    middle = (good + bad) / 2
    return min(candidates, key=lambda i: (abs(i - middle), i)) if candidates else None


def bisect(
    releases: Sequence[str],
    judge: JudgeRelease,
    terms: Terms = REGRESSION,
    ahead: Callable[[list[str]], None] = lambda releases: None,
) -> BisectOutcome:
    """``ahead`` is told, before each probe, the releases the next probe may need (good or bad),
    to prepare them while this one is measured."""
    found = BisectOutcome(list(releases), terms=terms)
    if len(releases) < 2:
        found.stopped = "a bisection needs two releases"
        return found

    def probe(index: int, good: int, bad: int) -> Judgement:
        following = (next_probe(index, bad, set_aside), next_probe(good, index, set_aside))
        ahead([releases[i] for i in following if i is not None])
        judged = judge(releases[index])
        found.probes.append(judged)
        return judged

    set_aside: set[int] = set()
    good, bad = 0, len(releases) - 1
    ends = (
        (good, ReleaseVerdict.GOOD, terms.old, "cannot be judged"),
        (bad, ReleaseVerdict.BAD, terms.new, f"is not {terms.new}"),
    )
    for at, wanted, word, said in ends:
        if (end := probe(at, good, bad)).verdict != wanted:
            why = f"{end.verdict}: {end.reason}"
            found.stopped = f"the {word} endpoint {releases[at]} {said} ({why})"
            return found
    while (index := next_probe(good, bad, set_aside)) is not None:
        if (verdict := probe(index, good, bad).verdict) == ReleaseVerdict.GOOD:
            good = index
        elif verdict == ReleaseVerdict.BAD:
            bad = index
        else:
            set_aside.add(index)
    found.last_good, found.first_bad = releases[good], releases[bad]
    return found


@dataclass(frozen=True)
class ReleaseStep:
    """A significant change of one metric, the claim or how the processes ended between
    consecutive releases: its comparison, which a page words by its shape."""

    criterion: Criterion
    before: str
    after: str
    comparison: Comparison  # the metric's, the claim's counts (``compare_claims``), the endings'
    # Which way it moved: slower or faster for a cost (past the factor, where it is a screen's
    # candidate its comparison has not decided), changed for the other shapes.
    way: Verdict = Verdict.CHANGED
    # A status step's ends and what its dead side does (``ok → SIGSEGV (exit 139)``, ``crashes``).
    ending: Ending | None = None

    @property
    def verb(self) -> str:  # what a status step's dead side does: ``crashes``, ``hangs`` …
        return self.ending.verb if self.ending is not None else ""

    @property
    def said(self) -> str:
        """The step in words: ``slower``, ``holds → does not hold``, ``ok → SIGSEGV (exit 139)``."""
        if self.ending is not None:
            return self.ending
        return self.comparison.said if self.criterion.is_claim else str(self.way)

    @property
    def key(self) -> MetricKey:
        assert self.criterion.metric is not None, f"a {self.criterion.name} step has no metric"
        return self.criterion.metric


@dataclass
class SweepOutcome:
    releases: list[str]
    measurements: list[Probe]
    metrics: list[MetricKey]
    with_claim: bool
    # (metric, release) → that release against the previous release that ran ok
    comparisons: dict[tuple[MetricKey, str], Comparison] = field(default_factory=dict)
    steps: list[ReleaseStep] = field(default_factory=list)

    def ok(self) -> list[Probe]:
        """The releases some of whose processes finished ok: each metric's evidence."""
        return [m for m in self.measurements if measured(m.result)]

    def not_ok(self) -> list[Probe]:
        ended = [(m, m.result.result.status if m.result else None) for m in self.measurements]
        return [m for m, status in ended if status is not RunStatus.OK]

    def stepped_more_than_once(self) -> list[str]:
        names = [step.criterion.name for step in self.steps]
        return sorted({name for name in names if names.count(name) > 1})

    def unmeasured(self) -> bool:
        """Fewer than two releases measured and no step: no evidence of no change."""
        return len(self.ok()) < 2 and not self.steps


def sweep(
    releases: Sequence[str],
    measure: ProbeRelease,
    *,
    metrics: Sequence[MetricKey] | None,
    with_claim: bool,
    thresholds: Thresholds,
    progress: Callable[[str], None] = lambda line: None,
    name: str = "sweep",
    screen: bool = False,
) -> SweepOutcome:
    """Every release measured (``metrics`` None: every metric the results have), and its steps.
    ``screen`` (a triage's first round): a step is also a ratio past the factor that results of
    separate runs leave undecided, a candidate to measure again, never a "no"."""
    measurements = measured_together(releases, measure, progress, name)
    return judged(releases, measurements, metrics, with_claim, thresholds, screen=screen)


def measured_together(
    releases: Sequence[str], measure: ProbeRelease, progress: Callable[[str], None], name: str
) -> list[Probe]:
    """Each of ``releases`` measured, in one interleaved run where the prober can (no looks: a
    triage decides its candidates afterwards), so neighbours are compared under the same load."""
    if (together := getattr(measure, "measure_together", None)) is not None:
        together(releases, decide="off")
    measurements = []
    for number, release in enumerate(releases, start=1):
        left = len(releases) - number
        progress(f"[{name}] ({number}/{len(releases)}) jax {release}, {left} left")
        measurements.append(measure(release, False))
    return measurements


def judged(
    releases: Sequence[str],
    measurements: Sequence[Probe],
    metrics: Sequence[MetricKey] | None,
    with_claim: bool,
    thresholds: Thresholds,
    *,
    screen: bool = False,
) -> SweepOutcome:
    found = SweepOutcome(list(releases), list(measurements), [], with_claim)
    ok = found.ok()
    series = [metric_samples(m.result) for m in ok if m.result is not None]
    found.metrics = list(metrics) if metrics is not None else union_keys(series)
    for (before, after), (a, b) in zip(pairwise(ok), pairwise(series), strict=True):
        ends = (before.release, after.release)
        for key in found.metrics:
            if key not in a and key not in b:
                continue
            was, now = a.of(key), b.of(key)
            comparison = compare_metric(was, now, thresholds, key)
            found.comparisons[(key, after.release)] = comparison
            way = comparison.verdict if comparison.verdict in OPPOSITE else None
            apart = comparison.verdict == Verdict.UNDECIDED and comparison.invocation_spread
            if way is None and screen and apart:  # measured apart: undecided past the factor
                way = comparison.past(thresholds)
                if way is not None and key.metric_name in thresholds.higher_is_better:
                    way = OPPOSITE[way]  # a higher figure is the better one: a rise is faster
            # a metric one side printed in every process that ran ok and the other in only some
            some = was.missing != now.missing and min(len(was.processes), len(now.processes)) > 0
            if way is None and screen and some:
                way = Verdict.CHANGED
            if way is not None:
                found.steps.append(ReleaseStep(Criterion.of(key), *ends, comparison, way))
        if with_claim and before.result is not None and after.result is not None:
            claimed = compare_claims(before.result, after.result)
            if claimed.verdict is Verdict.CHANGED:
                found.steps.append(ReleaseStep(Criterion(Judged.CLAIM), *ends, claimed))
    # how the processes end: between neighbours whose processes ran, ok or not
    for before, after in pairwise(m for m in measurements if ran(m.result)):
        assert before.result is not None and after.result is not None
        was_ended, ended = summarise(before.result), summarise(after.result)
        if (change := change_between(was_ended, ended, thresholds, screen=screen)) is not None:
            compared = compare_endings(was_ended, ended, thresholds)
            ends = (before.release, after.release)
            found.steps.append(ReleaseStep(Criterion.of(ENDING), *ends, compared, ending=change))
    return found
