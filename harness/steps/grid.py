"""A triage's first round that spends where the changes are: the range's ends and every k-th
release (k = ⌊√n⌋: about √n where nothing changed, about log₂ k more a change), then, round by
round, only between measured neighbours that differ, halved down to consecutive releases; a range
with fewer than ``MIN_GRID`` releases between grid points is measured whole.

Neighbours differ where the screen lists a step between them (``bisection.judged``), where a
comparison is undecided past the factor, or where their compiled programs' exact facts differ
(``metrics.hlo_facts``: where a step and its later fix between two grid points left the program
changed); the edges of what runs are halved towards too.  A step and its fix between neighbours
alike in all of that is not seen: the answer says so (docs/releases.md has why √n).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import pairwise

from harness.analysis.metrics import MetricKey, hlo_facts
from harness.analysis.significance import Thresholds, Verdict
from harness.analysis.statuses import ran
from harness.steps.bisection import SweepOutcome, judged, measured_together, next_probe
from harness.steps.probes import Probe, ProbeRelease

MIN_GRID = 3


def grid(count: int) -> list[int]:
    """The indices of a range of ``count`` releases measured first: every k-th and the newest."""
    step = math.isqrt(count)
    if step < MIN_GRID:
        return list(range(count))
    return sorted({*range(0, count, step), count - 1})


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
) -> SweepOutcome:
    """The grid, then each round's releases between neighbours that differ, until none do; the
    steps between consecutive measured releases, as ``sweep`` lists them (``screen``: its)."""
    measured: dict[int, Probe] = {}
    wanted = grid(len(releases))
    while True:
        what = "refining where neighbours differ" if measured else "the ends and a grid"
        progress(f"[{name}] {what}: {len(wanted)} release(s) of {len(releases)}, measured together")
        probes = measured_together([releases[i] for i in wanted], measure, progress, name)
        measured.update(zip(wanted, probes, strict=True))
        in_order = [measured[i] for i in sorted(measured)]
        found = judged(releases, in_order, metrics, with_claim, thresholds, screen=screen)
        wanted = refinements(found, measured, thresholds)
        if not wanted:
            return found


def refinements(
    found: SweepOutcome, measured: dict[int, Probe], thresholds: Thresholds
) -> list[int]:
    """The release nearest the middle of each gap between measured neighbours that differ."""
    index = {release: i for i, release in enumerate(found.releases)}
    gaps = {(index[step.before], index[step.after]) for step in found.steps}
    for before, after in pairwise(found.ok()):
        if apart(found, before, after, thresholds):
            gaps.add((index[before.release], index[after.release]))
    gaps |= edges(measured)
    picks = {next_probe(before, after, set(measured)) for before, after in gaps}
    return sorted(pick for pick in picks if pick is not None)


def apart(found: SweepOutcome, before: Probe, after: Probe, thresholds: Thresholds) -> bool:
    """Neighbours that ran ok, not yet told apart (undecided past the factor) or whose compiled
    programs' exact facts differ."""
    undecided = any(
        compared.verdict is Verdict.UNDECIDED and compared.past(thresholds)
        for (_, release), compared in found.comparisons.items()
        if release == after.release
    )
    assert before.result is not None and after.result is not None
    return undecided or hlo_facts(before.result) != hlo_facts(after.result)


def edges(measured: dict[int, Probe]) -> set[tuple[int, int]]:
    """Between the first release that ran and the nearest older one measured that did not, and the
    same at the newest end: where the range that runs begins and ends."""
    ran_at = [i for i in sorted(measured) if ran(measured[i].result)]
    if not ran_at:
        return set()
    older = [i for i in measured if i < ran_at[0]]
    newer = [i for i in measured if i > ran_at[-1]]
    found = {(max(older), ran_at[0])} if older else set()
    return found | ({(ran_at[-1], min(newer))} if newer else set())
