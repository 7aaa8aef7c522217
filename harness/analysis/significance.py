"""Is B faster or slower than A?  The verdict's vocabulary, the thresholds, the comparison's record,
each shape's interface, and the pieces of the rule every comparison shares: the no-change band and
the factor (docs/statistics.md).  Pure Python.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from harness.metric_names import MetricKey
from harness.stats import Summary
from harness.units import format_ns, format_ratio


class Verdict(StrEnum):
    """What a comparison of B against A says (lower is better), never confused: *changed* (FASTER,
    SLOWER, CHANGED), *unchanged* (positive evidence of no change), *undecided* (more measurement
    could still decide)."""

    FASTER = "faster"
    SLOWER = "slower"
    # A value, a presence or an ending that differs: no direction a ratio could give it.
    CHANGED = "changed"
    UNCHANGED = "unchanged"
    UNDECIDED = "undecided"


# The verdicts that say a metric moved: a cost's change either way, a change of any other shape.
MOVED = (Verdict.FASTER, Verdict.SLOWER, Verdict.CHANGED)
# Each change the other way round: a higher-is-better metric's verdict, a step undone, a trial that
# reverses; a value changed back is changed again.
OPPOSITE = {
    Verdict.SLOWER: Verdict.FASTER,
    Verdict.FASTER: Verdict.SLOWER,
    Verdict.CHANGED: Verdict.CHANGED,
}


WELCH_LOG_MEDIANS = "Welch's t on log process medians"
# The why's kinds in the order an exact metric (a value, a presence, a constant cost) asks them:
# whether an old default brings it back takes two processes a side, then what was compiled.
EXACT_FIRST = ("defaults", "compiled", "flags", "library", "reproducer")


@dataclass(frozen=True, eq=False, repr=False)
class Shape:
    """What kind of observation a metric is, known when it is first read: one object per shape
    (``harness.analysis.shapes``) owning what the shape means everywhere: when a metric is of it,
    its comparison and test, whether a ratio judges it, its words, which side is worse, each side as
    a page shows it, the why's kinds."""

    name: str
    test: str  # the rule that judges it, as a page names it
    ratio: bool = False  # judged by a ratio of figures: a factor, an interval, what load moves
    counted: str = ""  # what each process is counted for: "printed", "died"
    fewer_is_worse: bool = False  # a counted shape's worse way: fewer printed, more died
    # The why's kinds (``harness.explain.kinds``) by name, in the order asked: what settles the
    # shape first (asked however much of the budget is left), so that a why cut short still has it.
    why: tuple[str, ...] = EXACT_FIRST
    settles: str = "defaults"
    # The objects, each with its comparison: ``harness.analysis.shapes``.
    COST: ClassVar[Shape]
    VALUE: ClassVar[Shape]
    PRESENCE: ClassVar[Shape]
    ENDING: ClassVar[Shape]
    CLAIM: ClassVar[Shape]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Shape.{self.name.upper()}"

    def __reduce__(self) -> tuple[object, tuple[object, str]]:
        return getattr, (Shape, self.name.upper())  # one object per shape, copied or pickled

    def fits(self, key: MetricKey | None, a: Any, b: Any, thresholds: Thresholds) -> bool:
        """Whether a metric whose two sides are ``a`` and ``b`` is of this shape (``shape_of``)."""
        return False

    def compare(
        self, a: Any, b: Any, thresholds: Thresholds, key: MetricKey | None = None
    ) -> Comparison:
        """B against A by this shape's rule."""
        raise NotImplementedError(self.name)

    def said(self, comparison: Comparison) -> str:
        """The verdict in words: what each side showed."""
        return comparison.flags[-1] if comparison.flags else str(comparison.verdict)

    def worse(self, comparison: Comparison) -> bool:
        """Whether B is the worse side: slower, a value changed (a program's output is not expected
        to move), a metric gone from processes that printed it, more processes dying."""
        return comparison.verdict is Verdict.CHANGED

    def leans_worse(self, comparison: Comparison) -> bool:
        """Whether B's counts lean the worse way, decided or not; False without counts."""
        return False

    def shown(self, comparison: Comparison) -> tuple[str, str]:
        """Each side's figure as a page shows it."""
        a, b = comparison.baseline.median, comparison.candidate.median
        return comparison.format(a), comparison.format(b)


def common_shape(shapes: Iterable[Shape | None]) -> Shape:
    """The shape several metrics share; a cost (whose why asks the most) where they differ, or where
    one is not known."""
    found = set(shapes)
    return (found.pop() if len(found) == 1 else None) or Shape.COST


@dataclass(frozen=True)
class Thresholds:
    # Minimum effect size: half asv's ×1.10.  The test over processes (with the spread between
    # invocations where the sides were measured apart) carries the burden of proof; a true ×1.10
    # change measures below ×1.10 about half the time: a gate at ×1.10 could not flag it reliably.
    factor: float = 1.05
    alpha: float = 0.002  # significance level of the test (as asv's for Mann–Whitney U)
    max_relative_iqr: float = 0.2  # above it a side is flagged noisy (within its processes)
    # below it, on either side, the process rule gives no faster/slower verdict
    min_processes: int = 3
    max_between_cv: float = 0.1  # above it a side's process medians are flagged as spread apart
    # Log standard deviation of a whole invocation's level, allowed for between separate invocations
    # (``--invocation-spread``; ``calibrate`` estimates a machine's): see docs/statistics.md,
    # "Separate runs".  0.10: A/A runs of the quick catalogue on a 2-core VM estimated 0.04–0.06 one
    # day and 0.10–0.12 the next.
    invocation_spread: float = 0.10
    confidence: float = 0.99  # of the bootstrap interval of the ratio
    # Metric names (a script's own numbers, ``json.items_per_s``) where a higher figure is better.
    higher_is_better: tuple[str, ...] = ()
    # Metric names declared a value (judged by equality per process) or a cost (by its ratio), where
    # inference from the figures cannot know (``harness.analysis.shapes``).
    values: tuple[str, ...] = ()
    costs: tuple[str, ...] = ()
    # Sides measured together must also pass Mann–Whitney's exact rank test at the level
    # (``rank_test``), which holds it whatever the noise; off for a triage's first round, which only
    # chooses what to measure again.
    rank_guard: bool = True
    resamples: int = 2000  # of a cost's bootstrap interval; 0: none (a look needs only the test)
    seed: int = 20261129


DEFAULT_THRESHOLDS = Thresholds()
# "reliably": the share of runs in which a change of the detectable ratio is flagged
DETECTION_POWER = 0.9


@dataclass(frozen=True)
class SideSpread:
    """How one side of a comparison was measured and how much it scatters."""

    processes: int
    samples: int  # over all its processes
    between: float  # coefficient of variation of the process medians; nan with one process
    within: float  # median over its processes of each process's IQR / median
    loaded: int = 0  # processes measured while other work loaded the machine


@dataclass(frozen=True)
class CostDetail:
    """What only a cost has, a shape judged by a ratio (``Shape.ratio``): the ratio, its interval,
    the margin of its test and the rank guard's p (``processes.compare_processes``)."""

    ratio: float  # candidate figure / baseline figure: above 1 is slower
    ci_low: float = math.nan  # the bootstrap interval of the ratio; nan where none was asked
    ci_high: float = math.nan
    # The change the data still allow, either way, as a factor: the far end of Welch's
    # ``confidence`` interval of the shift of log process medians (the change test's own estimator),
    # so 1.09 reads "within ±9 %"; *unchanged* is a margin inside the factor.  nan without a test
    # (fewer than two processes a side).
    margin: float = math.nan
    # Mann–Whitney's exact p on the process medians if measured together (the guard), else nan.
    rank_p: float = math.nan


@dataclass(frozen=True)
class Comparison:
    """B against A.  ``baseline``/``candidate`` summarise what the test compared, each side's
    process medians (``processes.compare_processes``); their median is the side's figure."""

    baseline: Summary
    candidate: Summary
    p_value: float  # the test's (Welch's, Fisher's); nan where none was made
    verdict: Verdict
    flags: tuple[str, ...]  # reasons to distrust the numbers (noise, too few samples)
    # How each side was measured; None counts as one process.
    baseline_spread: SideSpread | None = None
    candidate_spread: SideSpread | None = None
    test: str = WELCH_LOG_MEDIANS
    # The log standard deviation of a whole invocation's level the test allowed for: 0 when the
    # sides were interleaved in one run, above 0 when they come from separate invocations.
    invocation_spread: float = 0.0
    # The level the test was held to: the thresholds' alpha, or a look's share of it where the sides
    # were measured until decided (``harness.analysis.spending``).
    level: float = math.nan
    # What is compared, whose unit every page shows its figures in (None: a duration in ns).
    metric: MetricKey | None = None
    # Every sample of every process gave one value on each side (a count, a size, a number printed
    # rounded): judged so, no spread being estimable from numbers that do not vary (``processes``).
    constant: bool = False
    # Asked what the comparison means (``said``, ``worse``, ``shown``: a page's words and cells): a
    # cost's by default (``processes``), set by ``harness.analysis.shapes``, which the package
    # imports first.
    shape: Shape = field(default_factory=lambda: Shape.COST)
    # A presence's or an ending's counts: (processes that printed it, or died; processes) on A, B.
    counts: tuple[tuple[int, int], tuple[int, int]] | None = None
    # An ending's sides in words where every process of each ended alike (``ok``, ``SIGSEGV (exit
    # 139)``), a value's as printed (``"converged"``, ``NaN``): what a page shows of it
    # (``statuses.compare_endings``, ``shapes.compare_values``).
    sides: tuple[str, str] | None = None
    # A cost's ratio, interval and margin; None for the shapes no ratio judges.
    cost: CostDetail | None = None

    @property
    def worse(self) -> bool:
        return self.shape.worse(self)

    @property
    def leans_worse(self) -> bool:
        return self.shape.leans_worse(self)

    def format(self, value: float) -> str:
        """A figure of the metric in its unit: a duration, a size, a script's number as printed."""
        return format_ns(value) if self.metric is None else self.metric.format(value)

    @property
    def shown(self) -> tuple[str, str]:
        return self.shape.shown(self)

    @property
    def said(self) -> str:
        return self.shape.said(self)

    @property
    def ratio_cell(self) -> str:
        """``×1.23`` where its shape is judged by a ratio; empty where none is."""
        return format_ratio(self.cost.ratio) if self.cost else ""

    @property
    def interval_cell(self) -> str:
        """``1.1–1.3``, a cost's interval of its ratio; n/a where none was made (or no ratio)."""
        if self.cost is None or math.isnan(self.cost.ci_low):
            return "n/a"
        return f"{self.cost.ci_low:.3g}–{self.cost.ci_high:.3g}"

    def past(self, thresholds: Thresholds) -> Verdict | None:
        """Which way a cost's ratio points past the factor; None inside the band or without one."""
        return past_factor(self.cost.ratio, thresholds) if self.cost else None

    @property
    def direction(self) -> str:
        """Which way a cost moved, in its metric's words, constant or not: slower or faster for a
        duration, higher or lower else."""
        if self.metric is None or self.metric.is_duration or self.cost is None:
            return str(self.verdict)
        return "higher" if self.cost.ratio >= 1 else "lower"

    @property
    def noisy(self) -> bool:
        return bool(self.flags)

    @property
    def spreads(self) -> tuple[SideSpread, SideSpread]:
        """How each side (A, B) was measured and scatters; a side not recorded is one process."""
        a, b = self.baseline, self.candidate
        return (
            self.baseline_spread or SideSpread(1, a.n, math.nan, a.relative_iqr),
            self.candidate_spread or SideSpread(1, b.n, math.nan, b.relative_iqr),
        )

    @property
    def processes(self) -> tuple[int, int]:
        a, b = self.spreads
        return a.processes, b.processes


def two_sided_z(p_value: float) -> float:
    """The normal z of two-sided p ``p_value`` (at most ~8: below 1e-15, 1 − p/2 is 1 in floats)."""
    return statistics.NormalDist().inv_cdf(1 - min(max(p_value, 1e-15), 1.0) / 2)


def format_margin(margin: float) -> str:
    """``within ±9 %`` for a margin of ×1.09; empty where there is none."""
    if not math.isfinite(margin) or margin < 1:
        return ""
    share = margin - 1
    return f"within ±{share:.0%}" if share >= 0.1 else f"within ±{share:.1%}"


def past_factor(ratio: float, thresholds: Thresholds) -> Verdict | None:
    """Which way a ratio points past the factor (above 1 is slower), or None inside the band/NaN."""
    if ratio >= thresholds.factor:
        return Verdict.SLOWER
    return Verdict.FASTER if ratio <= 1 / thresholds.factor else None


def what_would_decide(comparison: Comparison, thresholds: Thresholds) -> str:
    """Why a comparison is undecided, and what would decide it; empty when it is decided."""
    if comparison.verdict != Verdict.UNDECIDED:
        return ""
    a, b = comparison.processes
    if comparison.test == WELCH_LOG_MEDIANS and min(a, b) < thresholds.min_processes:
        return (
            f"{a} and {b} processes, fewer than the {thresholds.min_processes} a side a verdict "
            "needs"
        )
    margin = comparison.cost.margin if comparison.cost else math.nan
    if math.isnan(margin):
        return "no test of the process medians could be made"
    band = f"×{1 / thresholds.factor:.3g}–×{thresholds.factor:.3g}"
    return (
        f"the data allow a change of up to ×{margin:.3g} either way "
        f"({format_margin(margin)}, {thresholds.confidence:.0%} interval of the test), "
        f"beyond the no-change band {band}, and the test does not reject 'no change'; more "
        "processes of both sides, measured together, would narrow it"
    )
