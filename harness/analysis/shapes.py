"""The one comparison of each shape of metric but a cost (a cost's is ``processes``).

- a *value* (what the program computes or reports: a loss, a draw, a checksum, a count) is judged
  by equality per process: the same in every process, changed from X to Y in every process, or
  varying within a side (no change can be said of it);
- a *presence*: printed in k of the n processes that ran ok on each side;
- an *ending*: how many processes died, of how many (``harness.analysis.statuses`` names how).

What every process of each side shows alike (a value, printed in all or none, dead in all or none)
is known exactly, as a number that never varied is: at least two processes a side, no test.  A
difference in some processes only is judged on its counts by Fisher's exact test at the level, and
measured more until decided like any step: 0 of 10 against 1 of 10 is undecided, 0 of 20 against
10 of 20 is decided.

How a metric's shape is known: declared (``Thresholds.values``, ``Thresholds.costs``), else a
figure the harness measures, a script's number named for a unit (``_ms``, ``_bytes``) or one where
higher is better is a cost; a script's number that is constant within each side, or ever zero or
negative (never a ratio's operand), is a value; any other is a cost.  A script's number that is
ever negative is a value even where declared a cost or named for a unit: a ratio of it means
nothing (``×-1`` for a sign that flipped).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from harness.analysis.processes import process_medians
from harness.analysis.significance import Comparison, Shape, SideSpread, Thresholds, Verdict
from harness.metric_names import JSON, MetricKey
from harness.stats import Summary, summarize

Processes = Sequence[Sequence[float]]
Counts = tuple[int, int]  # (processes that printed it, or died; processes)
# Processes a side before what all of them show alike is a fact of the release (as for a status
# step, ``statuses.MIN_STATUS_PROCESSES``).
MIN_ALIKE = 2


def shape_of(key: MetricKey, a: Processes, b: Processes, thresholds: Thresholds) -> Shape:
    """A metric's shape, as declared, else inferred from its name and both sides' figures."""
    name = key.metric_name
    figures = [value for side in (a, b) for samples in side for value in samples]
    if name in thresholds.values:
        return Shape.VALUE
    if key.name != JSON:
        return Shape.COST
    if any(value < 0 for value in figures):
        return Shape.VALUE  # a script's negative number, declared a cost or not: no ratio of it
    if name in thresholds.costs or name in thresholds.higher_is_better:
        return Shape.COST
    if key.is_duration or key.kind.endswith("_bytes"):
        return Shape.COST
    if any(value <= 0 for value in figures):
        return Shape.VALUE
    alike = all(_values(side) is not None for side in (a, b))
    return Shape.VALUE if alike and min(len(a), len(b)) >= MIN_ALIKE else Shape.COST


def _values(processes: Processes) -> float | None:
    """The one value every sample of every process shows; None where they differ or are none."""
    found = {value for samples in processes for value in samples}
    return next(iter(found)) if len(found) == 1 else None


def compare_values(a: Processes, b: Processes, key: MetricKey) -> Comparison:
    """A value on both sides: the same in every process, changed in every process, or not one value
    on a side (varies: no change can be said, the processes disagree among themselves)."""
    base, cand = summarize(process_medians(a)), summarize(process_medians(b))
    was, now = _values(a), _values(b)
    counts = (len(a), len(b))
    flags: tuple[str, ...] = ()
    if was is None or now is None:
        varied = [
            f"{len({v for p in side for v in p})} values on {name}"
            for name, side, one in (("A", a, was), ("B", b, now))
            if one is None
        ]
        verdict, flags = Verdict.UNDECIDED, (f"varies within a side: {', '.join(varied)}",)
    elif min(counts) < MIN_ALIKE:
        verdict = Verdict.UNDECIDED
        flags = (f"too few processes ({counts[0]} and {counts[1]}) for a verdict",)
    else:
        verdict = Verdict.UNCHANGED if was == now else Verdict.CHANGED
    return _comparison(Shape.VALUE, verdict, (base, cand), counts, key, flags=flags)


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
    share = (summarize([k_a / n_a if n_a else 0.0]), summarize([k_b / n_b if n_b else 0.0]))
    found = _comparison(shape, verdict, share, (n_a, n_b), key, flags=flags, p_value=p_value)
    return replace(found, counts=(a, b), level=thresholds.alpha)


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
        math.nan,
        math.nan,
        math.nan,
        p_value,
        verdict,
        flags,
        SideSpread(n_a, n_a, math.nan, 0.0),
        SideSpread(n_b, n_b, math.nan, 0.0),
        test="equality per process" if shape is Shape.VALUE else "Fisher's exact test of counts",
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
