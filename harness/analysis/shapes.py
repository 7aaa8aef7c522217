"""Each shape of metric, one object owning when a metric is of it (``fits``) and its comparison
(``compare``): ``shape_of`` asks ``SHAPES`` in order, and the first that fits compares.

What every process of each side shows alike (a value, printed in all or none, dead in all or none)
is known exactly, as a number that never varied is: at least two processes a side, no test.  A
difference in some processes only is judged on its counts by Fisher's exact test at the level, and
measured more until decided like any step: 0 of 10 against 1 of 10 is undecided, 0 of 20 against 10
of 20 is decided.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from typing import Any

from harness.analysis.processes import compare_processes, process_medians
from harness.analysis.significance import (
    MOVED,
    OPPOSITE,
    WELCH_LOG_MEDIANS,
    Comparison,
    Shape,
    SideSpread,
    Thresholds,
    Verdict,
    format_margin,
)
from harness.analysis.spending import at_level, judged_on
from harness.metric_names import JSON, MetricKey
from harness.stats import Summary, summarize
from harness.store.bounds import MAX_MAGNITUDE
from harness.store.schema import Result

SEPARATE_UNDER_LOAD = (
    "separate runs, one measured under load: no verdict"
    " (measure both in one run, or on a quiet machine)"
)
FISHER = "Fisher's exact test of counts"
Processes = Sequence[Sequence[float]]
Printed = Sequence[tuple[str, ...]]  # what each process printed of a value, as written
Key = MetricKey | None
Counts = tuple[int, int]  # (processes that printed it, or died; processes)
# Processes a side before what all of them show alike is a fact of the release (as for a status
# step, ``statuses.MIN_STATUS_PROCESSES``).
MIN_ALIKE = 2


@dataclass
class ProcessSamples:
    """One metric of one result: each finished process's raw samples, how many ran under load."""

    processes: list[list[float]] = field(default_factory=list)
    loaded: int = 0
    # The stored cell they come from: whether two were measured in one run.
    source: Result | None = field(default=None, compare=False)
    # The processes of that cell that finished ok: a metric printed by fewer is missing from the
    # rest (0: not known, as for samples made by hand).
    ran: int = 0
    # A script's own metric: what each process printed, as written (``ProcessRun.printed``, else
    # its figure's text), by which a value is compared; empty for any other metric.
    printed: list[tuple[str, ...]] = field(default_factory=list)

    def first(self, count: int) -> ProcessSamples:
        """The first ``count`` processes (in order run); of those under load, at most as many."""
        return ProcessSamples(
            self.processes[:count],
            min(self.loaded, count),
            self.source,
            min(self.ran, count),
            self.printed[:count],
        )

    @property
    def missing(self) -> bool:
        """Whether some processes that finished ok did not give it."""
        return len(self.processes) < self.ran

    @property
    def summary(self) -> Summary:
        """Its process medians summarised: the median is the figure, quartiles the spread."""
        return summarize(process_medians(self.processes))

    @property
    def figure(self) -> float:
        """The result's figure: the median of its process medians (what comparisons compare)."""
        return self.summary.median

    def shown(self, key: MetricKey) -> str:
        """Its figure as a page shows it: a value as printed where its figure cannot say it
        (``"converged"``, ``true``, ``NaN``), else in the metric's unit."""
        return as_printed(self.printed) or key.format(self.figure)


def shape_of(
    key: MetricKey | None, a: ProcessSamples, b: ProcessSamples, thresholds: Thresholds
) -> Shape:
    """A metric's shape: the first of ``SHAPES`` that fits it (a cost fits any)."""
    return next(shape for shape in SHAPES if shape.fits(key, a, b, thresholds))


class Cost(Shape):
    """A time, a byte count, a count where less is better: a ratio and its test."""

    def fits(self, key: MetricKey | None, a: object, b: object, thresholds: Thresholds) -> bool:
        return True

    def compare(
        self, a: ProcessSamples, b: ProcessSamples, thresholds: Thresholds, key: Key = None
    ) -> Comparison:
        """B against A over processes (``compare_processes``); lower is better but for a metric
        named higher-is-better.  Sides from separate invocations are allowed the thresholds'
        ``invocation_spread``, and give no verdict where either has processes measured under load
        (moved whole runs' figures by up to ×2.2: docs/statistics.md, "Separate runs"); sides
        measured until decided are judged at the look they reached (``spending``)."""
        if key is not None and (fell := compare_signs(a.processes, b.processes, key)) is not None:
            return fell
        source, other = a.source, b.source
        separate = source is not None and other is not None and separate_invocations(source, other)
        spread = thresholds.invocation_spread if separate else 0.0
        # measured until decided: as the look that decided them saw them
        if not separate and source is not None:
            common = judged_on(source.settings, (len(a.processes), len(b.processes)))
            if common is not None:
                a, b = a.first(common), b.first(common)
                thresholds = at_level(thresholds, source.settings, common)
        found = compare_processes(
            a.processes,
            b.processes,
            thresholds,
            loaded=(a.loaded, b.loaded),
            invocation_spread=spread,
            interval=bool(thresholds.resamples),
        )
        found = replace(found, metric=key)
        if key is not None and key.metric_name in thresholds.higher_is_better:
            found = replace(found, verdict=OPPOSITE.get(found.verdict, found.verdict))
        # A number that did not vary is what it is whatever the load: load hides only a spread.
        if found.constant or not (separate and (a.loaded or b.loaded)):
            return found
        verdict = Verdict.UNDECIDED if found.verdict in MOVED else found.verdict
        return replace(found, verdict=verdict, flags=(*found.flags, SEPARATE_UNDER_LOAD))

    def said(self, comparison: Comparison) -> str:
        """Slower or faster for a duration, higher or lower for a size or a script's number; no
        change with the margin the data support: "unchanged (within ±3%)", or an undecided "within
        ±9%" (a band wider than the factor's: no change shown, and none beyond it).  A number that
        does not vary is said as such: "the same in all 6 processes", "changed from 12 to 14 in
        every process"."""
        verdict = comparison.verdict
        if comparison.constant:
            a, b = comparison.baseline.median, comparison.candidate.median
            same = verdict is Verdict.UNCHANGED and a == b
            return _constant_said(comparison, *comparison.shown, same=same)
        if verdict in (Verdict.UNCHANGED, Verdict.UNDECIDED):
            within = format_margin(comparison.cost.margin if comparison.cost else math.nan)
            if verdict is Verdict.UNCHANGED:
                return f"unchanged ({within})" if within else str(verdict)
            return within or str(verdict)
        return comparison.direction

    def worse(self, comparison: Comparison) -> bool:
        return comparison.verdict is Verdict.SLOWER


class Value(Shape):
    """What the program computes or reports: equal in every process, or not."""

    def fits(
        self, key: MetricKey | None, a: ProcessSamples, b: ProcessSamples, thresholds: Thresholds
    ) -> bool:
        """Declared a value (``Thresholds.values``); never a figure the harness measures, nor a
        script's number declared a cost, named for a unit (``temp_mb``, ``flops``) or where higher
        is better, unless negative (``×-1`` for a sign that flipped means nothing) and not fallen to
        zero or below from above it in every process (``compare_signs``); else anything printed that
        is not a number in range (a string, a flag, null, NaN), constant on a side, or ever zero or
        negative (never a ratio's operand)."""
        if key is None or key.name != JSON or key.metric_name in thresholds.values:
            return key is not None and key.metric_name in thresholds.values
        sides, printed = (a.processes, b.processes), (a.printed, b.printed)
        figures = [value for side in sides for samples in side for value in samples]
        if not all(_in_range(text) for side in printed for texts in side for text in texts):
            return True  # a string, a flag, null, NaN, an infinity: no ratio of it
        name = key.metric_name
        if name in thresholds.costs or name in thresholds.higher_is_better or key.named_for_unit:
            # a cost even where it never varies; a negative one is no ratio's operand, but a time
            # fallen to zero or below in every process is a change (``compare_signs``)
            return any(value < 0 for value in figures) and compare_signs(*sides, key) is None
        if any(value <= 0 for value in figures):
            return True
        alike = [
            _one(_written(side, texts)) is not None
            for side, texts in zip(sides, printed, strict=True)
        ]
        return any(alike) and min(map(len, sides)) >= MIN_ALIKE

    def compare(
        self, a: ProcessSamples, b: ProcessSamples, thresholds: Thresholds, key: Key = None
    ) -> Comparison:
        assert key is not None  # a value is only ever known by its name
        return compare_values(a.processes, b.processes, key, (a.printed, b.printed))

    def said(self, comparison: Comparison) -> str:
        if comparison.counts is None and comparison.flags:
            return comparison.flags[-1]
        a, b = comparison.baseline.median, comparison.candidate.median
        was, now = _told_apart(*(comparison.sides or (repr(a), repr(b))))
        return _constant_said(comparison, was, now, same=comparison.verdict is Verdict.UNCHANGED)

    def shown(self, comparison: Comparison) -> tuple[str, str]:
        return comparison.sides or super().shown(comparison)


class Counted(Shape):
    """Counted in k of the n processes (a presence: printed in those that ran ok; an ending: died),
    judged on the counts by Fisher's exact test."""

    def said(self, comparison: Comparison) -> str:
        if comparison.counts is None:
            return super().said(comparison)
        (k_a, n_a), (k_b, n_b) = comparison.counts
        said = f"{self.counted} in {k_a} of {n_a} processes on A, {k_b} of {n_b} on B"
        if comparison.sides is not None:
            said = " → ".join(comparison.sides)
        if comparison.verdict is Verdict.CHANGED or math.isnan(comparison.p_value):
            return said
        return f"{said} ({comparison.verdict}, Fisher p={comparison.p_value:.2g})"

    def shown(self, comparison: Comparison) -> tuple[str, str]:
        """``3 of 10``: of how many processes each side's were counted."""
        if comparison.counts is None:
            return super().shown(comparison)
        (k_a, n_a), (k_b, n_b) = comparison.counts
        return f"{k_a} of {n_a}", f"{k_b} of {n_b}"

    def worse(self, comparison: Comparison) -> bool:
        changed = comparison.verdict is Verdict.CHANGED
        return changed and (comparison.counts is None or self.leans_worse(comparison))

    def leans_worse(self, comparison: Comparison) -> bool:
        if comparison.counts is None:
            return False
        (k_a, n_a), (k_b, n_b) = comparison.counts
        return (k_b * n_a < k_a * n_b) if self.fewer_is_worse else (k_b * n_a > k_a * n_b)


class Presence(Counted):
    """A metric printed by some of the processes that finished ok and not by others."""

    def fits(self, key: MetricKey | None, a: ProcessSamples, b: ProcessSamples, _: object) -> bool:
        return a.missing or b.missing

    def compare(
        self, a: ProcessSamples, b: ProcessSamples, thresholds: Thresholds, key: Key = None
    ) -> Comparison:
        """Its counts first; where they decide no change, the figures of the processes that printed
        it, by their own shape."""
        one_side = a.missing != b.missing
        counts = (len(a.processes), a.ran), (len(b.processes), b.ran)
        presence = compare_counts(self, *counts, thresholds, key)
        if presence.verdict is Verdict.CHANGED or not (a.processes and b.processes):
            return presence
        a, b = a.first(len(a.processes)), b.first(len(b.processes))  # none missing now
        found = shape_of(key, a, b, thresholds).compare(a, b, thresholds, key)
        # Gone from some processes of one side only, its counts undecided: that the processes which
        # printed it moved no way is no evidence that nothing changed (never "unchanged").
        return presence if one_side and found.verdict not in MOVED else found


class Endings(Counted):
    """How each process ended, of a ``statuses.StatusSummary`` a side: on the counts of processes
    that died; where every process of each side ended alike, how (``ok → SIGSEGV (exit 139)``, as
    the status step says it)."""

    def compare(
        self, a: Any, b: Any, thresholds: Thresholds, key: MetricKey | None = None
    ) -> Comparison:
        compared = compare_counts(self, a.dead_counts, b.dead_counts, thresholds, key)
        if a.alike is None or b.alike is None:
            return compared
        return replace(compared, sides=(a.alike, b.alike))


def _in_range(text: str) -> bool:
    """Whether a value as written is a number a result holds as a figure (or the mark of more)."""
    try:
        return text.startswith("…") or abs(float(text)) <= MAX_MAGNITUDE
    except ValueError:
        return False


def _key(text: str) -> object:
    """What a value as written is equal by: a number by its exact value (``1`` is ``1.0``, 2**60
    is not 2**60 + 1), anything else by its text (``NaN`` is ``NaN``)."""
    try:
        number = Decimal(text)
    except InvalidOperation:
        return text
    return text if number.is_nan() else number


def _written(processes: Processes, printed: Printed) -> list[tuple[str, ...]]:
    """Each process's values as written: as printed where known, else its figures' text."""
    if len(printed) == len(processes) and printed:
        return [tuple(texts) for texts in printed]
    return [tuple(dict.fromkeys(repr(value) for value in samples)) for samples in processes]


def _one(side: Printed) -> tuple[str, ...] | None:
    """The values every process of a side printed alike; None where they differ or are none."""
    found = {tuple(_key(text) for text in texts) for texts in side}
    return side[0] if len(found) == 1 else None


def as_printed(printed: Printed) -> str | None:
    """A side's one value as written, where its figure cannot show it (a string, a flag, NaN, an
    integer past a float's 53 bits, several in one process); None where a figure can, or the
    processes printed it differently."""
    texts = _one(printed)
    if texts is None:
        return None
    numbers = [text for text in texts if _in_range(text) and not text.startswith("…")]
    exact = all(abs(float(text)) < 2**53 or "." in text or "e" in text for text in numbers)
    return None if len(texts) == len(numbers) == 1 and exact else _shown(texts)


def _shown(texts: tuple[str, ...]) -> str:
    """A side's value in words: as written, several of one process said as such."""
    if len(texts) == 1:
        return texts[0]
    rest = texts[-1] if texts[-1].startswith("…") else "…"  # how many more, and their digest
    shown = ", ".join(texts[:3]) + (f", {rest}" if len(texts) > 3 else "")
    return f"{shown} (varies within a process)"


def compare_values(
    a: Processes, b: Processes, key: MetricKey, printed: tuple[Printed, Printed] = ((), ())
) -> Comparison:
    """A value on both sides, as written: the same in every process, changed in every process, one
    value on one side and several on the other (it became, or ceased to be, one value: a change), or
    several on both (no change can be said, the processes disagree among themselves)."""
    base, cand = summarize(process_medians(a)), summarize(process_medians(b))
    sides = _written(a, printed[0]), _written(b, printed[1])
    was, now = _one(sides[0]), _one(sides[1])
    counts = (len(a), len(b))
    flags: tuple[str, ...] = ()
    shown = None if was is None or now is None else (_shown(was), _shown(now))
    if min(counts) < MIN_ALIKE:
        verdict = Verdict.UNDECIDED
        flags = (f"too few processes ({counts[0]} and {counts[1]}) for a verdict",)
    elif was is not None and now is not None:
        verdict = Verdict.UNCHANGED if _one([was, now]) is not None else Verdict.CHANGED
    else:  # one value on one side and several on the other is a change; several on both is not
        a_said, b_said = (
            f"{len(set(side))} values in {len(side)}"
            if one is None
            else f"{_shown(one)} in every process"
            for one, side in ((was, sides[0]), (now, sides[1]))
        )
        said = f"{a_said} on A, {b_said} on B"
        verdict, flags = Verdict.UNDECIDED, (f"varies within a side: {said}",)
        if was is not None or now is not None:
            verdict = Verdict.CHANGED
            flags = (f"{said}: {'no longer one value' if now is None else 'now one value'}",)
    found = _comparison(Shape.VALUE, verdict, (base, cand), counts, key, flags=flags)
    return replace(found, sides=shown)


def compare_signs(a: Processes, b: Processes, key: MetricKey) -> Comparison | None:
    """A time or a size fallen to zero or below in every process (a clock or a counter that broke),
    or risen from there: a change, said with its medians, though no ratio of it means anything;
    None where the sides are not so split (nor of ``MIN_ALIKE`` processes)."""
    medians = process_medians(a), process_medians(b)
    fell = [all(m <= 0 for m in side) - all(m > 0 for m in side) for side in medians]
    if min(map(len, medians)) < MIN_ALIKE or fell[0] * fell[1] != -1:
        return None
    was, now = (key.format(statistics.median(side)) for side in medians)
    how = f"at or below zero in every process on {'B' if fell[1] == 1 else 'A'}"
    said = f"changed from {was} to {now} (medians), {how}: no ratio"
    sides = summarize(medians[0]), summarize(medians[1])
    found = _comparison(Shape.VALUE, Verdict.CHANGED, sides, (len(a), len(b)), key, flags=(said,))
    return replace(found, test="signs per process")


def compare_counts(
    shape: Shape, a: Counts, b: Counts, thresholds: Thresholds, key: MetricKey | None = None
) -> Comparison:
    """A presence or an ending, on its counts: alike in every process of each side, a change when
    the sides differ and unchanged when not; in some processes only, Fisher's exact test at the
    thresholds' level decides a change, and nothing short of a side alike says "unchanged"."""
    (k_a, n_a), (k_b, n_b) = a, b
    whole = {k_a, n_a - k_a} & {0} and {k_b, n_b - k_b} & {0}  # every process alike on each side
    p_value = math.nan
    flags: tuple[str, ...] = ()
    if min(n_a, n_b) < MIN_ALIKE:
        verdict = Verdict.UNDECIDED
        flags = (f"too few processes ({n_a} and {n_b}) for a verdict",)
    elif whole:
        verdict = Verdict.UNCHANGED if k_a * n_b == k_b * n_a else Verdict.CHANGED
    else:
        p_value = fisher_p(a, b)
        verdict = Verdict.CHANGED if p_value < thresholds.alpha else Verdict.UNDECIDED
    found = counted(shape, verdict, (a, b), key, flags=flags, p_value=p_value)
    return replace(found, level=thresholds.alpha)


def counted(
    shape: Shape,
    verdict: Verdict,
    counts: tuple[Counts, Counts],
    key: MetricKey | None = None,
    *,
    flags: tuple[str, ...] = (),
    p_value: float = math.nan,
) -> Comparison:
    """A counted shape's comparison of k of n processes on each side, judged by its own rule."""
    (k_a, n_a), (k_b, n_b) = counts
    share = (summarize([k_a / n_a if n_a else 0.0]), summarize([k_b / n_b if n_b else 0.0]))
    found = _comparison(shape, verdict, share, (n_a, n_b), key, flags=flags, p_value=p_value)
    return replace(found, counts=counts)


def _comparison(
    shape: Shape,
    verdict: Verdict,
    sides: tuple[Summary, Summary],
    processes: tuple[int, int],
    key: MetricKey | None,
    *,
    flags: tuple[str, ...] = (),
    p_value: float = math.nan,
) -> Comparison:
    (base, cand), (n_a, n_b) = sides, processes
    return Comparison(
        base,
        cand,
        p_value,
        verdict,
        flags,
        SideSpread(n_a, n_a, math.nan, 0.0),
        SideSpread(n_b, n_b, math.nan, 0.0),
        test=shape.test,
        metric=key,
        constant=shape is Shape.VALUE,
        shape=shape,
    )


def fisher_p(a: Counts, b: Counts) -> float:
    """Fisher's exact two-sided p of k_a of n_a against k_b of n_b: the chance, were both sides one
    population, of a split of the k_a + k_b at most as likely as the one seen."""
    (k_a, n_a), (k_b, n_b) = a, b
    total, hits = n_a + n_b, k_a + k_b

    def chance(x: int) -> float:
        return math.comb(hits, x) * math.comb(total - hits, n_a - x) / math.comb(total, n_a)

    seen = chance(k_a)
    low, high = max(0, n_a - (total - hits)), min(hits, n_a)
    return min(1.0, sum(p for x in range(low, high + 1) if (p := chance(x)) <= seen * (1 + 1e-9)))


def separate_invocations(first: Result, second: Result) -> bool:
    """Whether two results come from separate invocations rather than one run that interleaved them.

    Results record their invocation; older ones are taken as interleaved when both name other sides
    and their time windows overlap."""
    if first.invocation and second.invocation:
        return first.invocation != second.invocation
    a, b = first.window_unix_ns, second.window_unix_ns
    if not (first.interleaved_with and second.interleaved_with) or a is None or b is None:
        return True
    return not (a[0] < b[1] and b[0] < a[1])


def _constant_said(comparison: Comparison, was: str, now: str, *, same: bool) -> str:
    """Numbers that never varied, in words: the same, or the one change every process saw (a cost's
    ratio and way are its page's and answer's to say beside it)."""
    if same:
        return f"the same in all {sum(comparison.processes)} processes"
    if now in ("NaN", "Infinity", "-Infinity"):
        return f"became {now} in every process (was {was})"
    return f"changed from {was} to {now} in every process"


def _told_apart(was: str, now: str) -> tuple[str, str]:
    """Two values as printed, a fraction in as many digits as tell the two apart (never "0.1 to
    0.1", nor 17 digits where 4 will do); an integer, a string, NaN as written."""
    try:
        a, b = float(was), float(now)
    except ValueError:
        return was, now
    if a == b or not math.isfinite(a - b) or any(re.fullmatch(r"-?\d+", t) for t in (was, now)):
        return was, now
    digits = next((d for d in range(4, 18) if f"{a:.{d}g}" != f"{b:.{d}g}"), 17)
    return f"{a:.{digits}g}", f"{b:.{digits}g}"


# A cost's why: whether it comes with a library, then whether jax alone shows it, then a workaround
# among the changed defaults, what was compiled, where the time went.  An ending's: the setting
# that makes the release that dies run (what a user wants first), what was compiled, the flags
# named like it.
Shape.COST = Cost(
    "cost", WELCH_LOG_MEDIANS, ratio=True,
    why=("library", "reproducer", "defaults", "compiled", "flags", "profile", "host"),
)  # fmt: skip
Shape.VALUE = Value("value", "equality per process")
Shape.PRESENCE = Presence("presence", FISHER, counted="printed", fewer_is_worse=True)
Shape.ENDING = Endings(
    "ending", FISHER, counted="died", settles="crash",
    why=("crash", "compiled", "crash flags", "library", "reproducer"),
)  # fmt: skip
# A claim held in k of the n processes that gave a verdict, judged by its settling rule in each run
# (``harness.claim_rule``): its flip is a change, each side's outcome its words.
Shape.CLAIM = Counted(
    "claim", "the claim settled on each side", counted="held", fewer_is_worse=True
)
# Every shape, in the order ``shape_of`` asks whether a metric fits: a cost, which fits any, last.
SHAPES = [Shape.PRESENCE, Shape.VALUE, Shape.ENDING, Shape.CLAIM, Shape.COST]
