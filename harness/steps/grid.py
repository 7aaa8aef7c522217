"""A triage's first round that spends where the changes are: the range's ends and every k-th
release (k = ⌊√n⌋: about √n where nothing changed, about log₂ k more a change), then, round by
round, only between measured neighbours that differ, halved down to consecutive releases; a range
with fewer than ``MIN_GRID`` releases between grid points is measured whole.

The cheapest exact evidence first: given a ``glance`` (a prober of ``glance_processes``), a grid's
releases are glanced at first.  Neighbours differ where what every process shows alike does (a
value, a presence, an ending, the claim, the compiled programs' facts: exact from two), or where a
varying cost's ratio passes both the factor and what the spread between processes, pooled over the
range, could show by chance (``cost_bound``), or is a change whose interval still reaches past that
(``reaches_past``); the edges of what runs are halved towards too.  Only then are the ends of
consecutive releases whose costs differ measured at the full count, and a cost's step is listed only
between two such, past that bound (``listed``).  Without a glance every release is measured at the
full count, by the same rule; so is every release once the gaps that differ hold most of those not
yet measured (``dense``: halving would cost more than measuring each). A step and its fix between
neighbours alike in all of that is not seen: the answer says so (docs/releases.md has why √n).

Whichever way the first round went, a confirmed cost step is *small* where its ratio stays within
what another run's first round would list nine times in ten (``twice_safe_bounds``): two runs from
results folders of their own name the same steps past it, and may differ within it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise

from harness.analysis.metrics import MetricKey, hlo_facts, metric_samples
from harness.analysis.power import detectable_ratio, pooled_spreads
from harness.analysis.shapes import MIN_ALIKE
from harness.analysis.significance import Comparison, Thresholds, Verdict
from harness.analysis.statuses import ran
from harness.analysis.t_test import t_quantile
from harness.claim_rule import MIN_CLAIM_PROCESSES
from harness.steps.bisection import ReleaseStep, SweepOutcome, judged, measured_together, next_probe
from harness.steps.probes import Probe, ProbeRelease

MIN_GRID = 3
Gap = tuple[int, int]  # two measured neighbours, by index in the range


def glance_processes(with_claim: bool) -> int:
    """The processes of a glance: what all of them show alike is a fact of the release from two;
    the claim is settled from three (``claim_rule``)."""
    return max(MIN_ALIKE, MIN_CLAIM_PROCESSES) if with_claim else MIN_ALIKE


def grid(count: int) -> list[int]:
    """The indices of a range of ``count`` releases measured first: every k-th and the newest."""
    step = math.isqrt(count)
    return list(range(count)) if step < MIN_GRID else sorted({*range(0, count, step), count - 1})


def grid_sweep(
    releases: Sequence[str],
    measure: ProbeRelease,
    *,
    metrics: Sequence[MetricKey] | None,
    with_claim: bool,
    thresholds: Thresholds,
    progress: Callable[[str], None] = lambda line: None,
    name: str = "triage",
    screen: bool = True,
    glance: ProbeRelease | None = None,
) -> SweepOutcome:
    """The grid, then each round's releases between neighbours that differ, until none do; the
    steps between consecutive measured releases, as ``sweep`` lists them (``screen``: its)."""
    measured: dict[int, Probe] = {}
    full: set[int] = set()  # measured with ``measure``: the screen's own count
    wanted = grid(len(releases))
    # a range measured whole is measured at the full count: a glance there would save little
    if glance is None or len(wanted) == len(releases):
        glance = measure
    glancing = True
    while True:
        what = "refining where neighbours differ" if measured else "the ends and a grid"
        if glance is not measure:
            what = f"{what}, glanced at" if glancing else "where costs differ, in full"
        progress(f"[{name}] {what}: {len(wanted)} release(s) of {len(releases)}, measured together")
        probing = glance if glancing else measure
        probes = measured_together([releases[i] for i in wanted], probing, progress, name)
        measured.update(zip(wanted, probes, strict=True))
        full |= set(wanted) if probing is measure else set()
        in_order = [measured[i] for i in sorted(measured)]
        found = judged(releases, in_order, metrics, with_claim, thresholds, screen=screen)
        exact, costs = glanced(found, measured, thresholds)
        gaps = {gap for gap, _ in costs}
        picks = {next_probe(before, after, set(measured)) for before, after in exact | gaps}
        wanted = sorted(pick for pick in picks if pick is not None)
        if glancing and glance is not measure and dense(exact | gaps, len(releases), measured):
            progress(f"[{name}] neighbours differ across most of the range: every release in full")
            glance, wanted = measure, sorted(set(range(len(releases))) - full)
        glancing = bool(wanted)
        wanted = wanted or sorted({i for gap in gaps for i in gap} - full)
        if not wanted:
            return listed(found, costs, full)


def dense(gaps: set[Gap], count: int, measured: dict[int, Probe]) -> bool:
    """Whether the gaps that differ hold most of the releases not yet measured: halving them would
    glance at nearly every release and then measure most again in full, more than measuring each
    once (a script whose memory or phases move at nearly every release)."""
    inside = sum(after - before - 1 for before, after in gaps)
    return inside * 2 > count - len(measured)


def glanced(
    found: SweepOutcome, measured: dict[int, Probe], thresholds: Thresholds
) -> tuple[set[Gap], set[tuple[Gap, MetricKey]]]:
    """The gaps between measured neighbours whose exact evidence differs (an exact step, compiled
    facts, the edges of what runs), and each gap with a cost that differs there (``cost_bound``)."""
    index = {release: i for i, release in enumerate(found.releases)}
    exact = {(index[s.before], index[s.after]) for s in found.steps if is_exact(s.comparison)}
    exact |= edges(measured)
    costs = set()
    ok = found.ok()
    series = [metric_samples(probe.result) for probe in ok if probe.result is not None]
    spreads = pooled_spreads(series)
    for (before, after), (a, b) in zip(pairwise(ok), pairwise(series), strict=True):
        gap = (index[before.release], index[after.release])
        assert before.result is not None and after.result is not None
        if hlo_facts(before.result) != hlo_facts(after.result):
            exact.add(gap)
        for key in found.metrics:
            compared = found.comparisons.get((key, after.release))
            if compared is None or is_exact(compared):
                continue
            sides = (len(a.of(key).processes), len(b.of(key).processes))
            bound = cost_bound(spreads.get(key, 0.0), len(series), sides, thresholds)
            past = compared.past(dataclasses.replace(thresholds, factor=bound))
            if past or reaches_past(compared, bound):
                costs.add((gap, key))
    return exact, costs


def cost_bound(spread: float, groups: int, sides: tuple[int, int], thresholds: Thresholds) -> float:
    """The ratio of two releases' costs past which they differ: the factor, and what the spread of
    log process medians within the range's releases (``spread``, pooled over ``groups``) could show
    between ``sides`` processes by chance at the screen's level."""
    if not spread > 0 or min(sides) < 1:
        return thresholds.factor
    t = t_quantile(1 - thresholds.alpha / 2, max(groups, 1))
    return max(thresholds.factor, math.exp(t * spread * math.sqrt(1 / sides[0] + 1 / sides[1])))


def reaches_past(compared: Comparison, bound: float) -> bool:
    """A change at the screen's level within ``bound`` whose test still allows one past it: it
    cannot yet be told from a step another run's first round lists (measured 2026-12-06: ×1.375
    at p 0.01 dropped in one run of 0.4.31 → 0.4.33, ×1.53 confirmed in the next), so its ends
    are measured in full and its confirmation decides."""
    changed = compared.verdict in (Verdict.SLOWER, Verdict.FASTER)
    return changed and compared.cost is not None and compared.cost.margin >= bound


def is_exact(compared: Comparison | None) -> bool:
    """A step's comparison of what every process shows alike: the claim, an ending, a value, a
    presence, a cost that never varies; not a varying cost's ratio."""
    return compared is None or not compared.shape.ratio or compared.constant


def listed(found: SweepOutcome, costs: set[tuple[Gap, MetricKey]], full: set[int]) -> SweepOutcome:
    """``found`` with a varying cost's step only where it differs past ``cost_bound`` (within what
    the range's process spread could show it is no candidate, however tight its two sides happened
    to be), between releases both measured at full count."""
    index = {release: i for i, release in enumerate(found.releases)}

    def kept(step: ReleaseStep) -> bool:
        gap = (index[step.before], index[step.after])
        return is_exact(step.comparison) or (set(gap) <= full and (gap, step.key) in costs)

    return dataclasses.replace(found, steps=[step for step in found.steps if kept(step)])


def edges(measured: dict[int, Probe]) -> set[tuple[int, int]]:
    """Between the first release that ran and the nearest older one measured that did not, and the
    same at the newest end: where the range that runs begins and ends."""
    if not (ran_at := [i for i in sorted(measured) if ran(measured[i].result)]):
        return set()
    older = [i for i in measured if i < ran_at[0]]
    newer = [i for i in measured if i > ran_at[-1]]
    found = {(max(older), ran_at[0])} if older else set()
    return found | ({(ran_at[-1], min(newer))} if newer else set())


def twice_safe_bounds(first: SweepOutcome, screen: Thresholds) -> dict[MetricKey, float]:
    """Per metric of a first round, the ratio another run's first round (``screen``'s level, as many
    processes a side as this one's releases ran at most) would list nine times in ten: at the
    spread of log process medians within its releases, and a release's level moving by
    ``invocation_spread`` from one run to the next, which no test inside one run sees (a script's
    peak memory: within 0.3 % in each run, 5 % apart between runs)."""
    ok = [probe.result for probe in first.ok() if probe.result is not None]
    processes = max((len(result.result.processes) for result in ok), default=0)
    spreads = pooled_spreads(metric_samples(result) for result in ok)
    between = screen.invocation_spread
    return {
        key: detectable_ratio(s, processes, screen, between=between) for key, s in spreads.items()
    }


def small_within(
    comparison: Comparison | None, bounds: Mapping[MetricKey, float], *, whole: bool = False
) -> float | None:
    """The bound (``twice_safe_bounds``) a varying cost's ratio stays within (``whole``: its whole
    interval too, so that measuring it again could confirm it small and nothing more), or None
    where it is past it or the comparison is exact (a value, a presence, an ending, the claim)."""
    if comparison is None or comparison.cost is None or comparison.metric is None:
        return None
    bound = bounds.get(comparison.metric)
    if bound is None or is_exact(comparison):
        return None
    cost = comparison.cost
    within = 1 / bound < cost.ratio < bound and (not whole or cost.margin < bound)
    return bound if within else None
