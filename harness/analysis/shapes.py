"""The one comparison of each shape of metric but a cost (a cost's is ``processes``).

- a *value* (what the program computes or reports: a loss, a draw, a checksum, a string, a flag) is
  judged by equality per process, as printed (``12345678901234567`` is not ``…568``, ``NaN`` is
  ``NaN``): the same in every process, changed from X to Y in every process, one value on one side
  and several on the other (a change), or varying within both sides (no change can be said of it);
- a *presence*: printed in k of the n processes that ran ok on each side;
- an *ending*: how many processes died, of how many (``harness.analysis.statuses`` names how);
- a *claim*: held in k of the n processes that gave a verdict, judged by its own settling rule
  (``harness.analysis.claims.compare_claims``), built here as every count is (``counted``).

What every process of each side shows alike (a value, printed in all or none, dead in all or none)
is known exactly, as a number that never varied is: at least two processes a side, no test.  A
difference in some processes only is judged on its counts by Fisher's exact test at the level, and
measured more until decided like any step: 0 of 10 against 1 of 10 is undecided, 0 of 20 against
10 of 20 is decided.

How a metric's shape is known: declared (``Thresholds.values``, ``Thresholds.costs``), else a
figure the harness measures, a script's number named for a unit (``MetricKey.named_for_unit``:
``temp_mb``, ``compile_ms``, ``flops``) or one where higher is better is a cost, constant or not (a
constant cost keeps its ratio: ``processes``); anything printed that is not a number in range (a
string, a flag, null, NaN) is a value; a script's other number that is constant on a side, or ever
zero or negative (never a ratio's operand), is a value; any other is a cost.  A cost that is
negative is a value (``×-1`` for a sign that flipped means nothing), unless it fell to zero or
below in every process of one side from above it in every process of the other: a change
(``compare_signs``).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal, InvalidOperation

from harness.analysis.processes import process_medians
from harness.analysis.significance import Comparison, Shape, SideSpread, Thresholds, Verdict
from harness.metric_names import JSON, MetricKey
from harness.stats import Summary, summarize
from harness.store.bounds import MAX_MAGNITUDE

Processes = Sequence[Sequence[float]]
Printed = Sequence[tuple[str, ...]]  # what each process printed of a value, as written
Counts = tuple[int, int]  # (processes that printed it, or died; processes)
# Processes a side before what all of them show alike is a fact of the release (as for a status
# step, ``statuses.MIN_STATUS_PROCESSES``).
MIN_ALIKE = 2


def shape_of(
    key: MetricKey,
    a: Processes,
    b: Processes,
    thresholds: Thresholds,
    printed: tuple[Printed, Printed] = ((), ()),
) -> Shape:
    """A metric's shape, as declared, else inferred from its name, both sides' figures and what
    each process printed (``printed``: a script's values as written, ``ProcessSamples.printed``)."""
    name = key.metric_name
    figures = [value for side in (a, b) for samples in side for value in samples]
    if name in thresholds.values:
        return Shape.VALUE
    if key.name != JSON:
        return Shape.COST
    if not all(_in_range(text) for side in printed for texts in side for text in texts):
        return Shape.VALUE  # a string, a flag, null, NaN, an infinity: no ratio of it
    if name in thresholds.costs or name in thresholds.higher_is_better or key.named_for_unit:
        # a cost even where it never varies; a negative one is no ratio's operand, but a time
        # fallen to zero or below in every process is a change (``compare_signs``)
        negative = any(value < 0 for value in figures)
        return Shape.VALUE if negative and compare_signs(a, b, key) is None else Shape.COST
    if any(value <= 0 for value in figures):
        return Shape.VALUE
    alike = [
        _one(_written(side, texts)) is not None for side, texts in zip((a, b), printed, strict=True)
    ]
    return Shape.VALUE if any(alike) and min(len(a), len(b)) >= MIN_ALIKE else Shape.COST


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


def _one(side: list[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The values every process of a side printed alike; None where they differ or are none."""
    found = {tuple(_key(text) for text in texts) for texts in side}
    return side[0] if len(found) == 1 else None


def as_printed(printed: Printed) -> str | None:
    """A side's one value as written, where its figure cannot show it (a string, a flag, NaN, an
    integer past a float's 53 bits, several in one process); None where a figure can, or the
    processes printed it differently."""
    one = {tuple(_key(text) for text in texts) for texts in printed}
    if len(one) != 1:
        return None
    texts = printed[0]
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
