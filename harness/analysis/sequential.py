"""Which comparisons of sides measured together are still open: what the runner asks before another look.

The design and its levels are ``harness.analysis.spending``'s."""

from __future__ import annotations

import math
from collections.abc import Sequence

from harness.analysis.metrics import process_samples
from harness.analysis.processes import compare_processes
from harness.analysis.significance import DEFAULT_THRESHOLDS, Comparison, Thresholds, Verdict
from harness.analysis.spending import ALL, at_level
from harness.store.schema import ProcessRun, RunStatus, Settings
from harness.units import format_p, format_ratio


def is_open(comparison: Comparison, mode: str, thresholds: Thresholds) -> bool:
    """Whether more processes could still decide what this comparison has not."""
    if comparison.verdict != Verdict.UNDECIDED:
        return False
    if mode == ALL:
        return True
    ratio = comparison.ratio
    return not math.isnan(ratio) and (ratio >= thresholds.factor or ratio <= 1 / thresholds.factor)


def open_comparisons(
    pairs: Sequence[tuple[Sequence[ProcessRun], Sequence[ProcessRun]]],
    settings: Settings,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
) -> list[str]:
    """The comparisons between each pair's sides (A, B: processes in the order they ran) that another look
    could still decide, described; empty when every one is decided (or ``settings`` is not sequential)."""
    mode = settings.decide
    if mode is None:
        return []
    wanted = set(settings.decide_metrics or ())
    found = []
    for number, (a_runs, b_runs) in enumerate(pairs, start=1):
        a = process_samples([p for p in a_runs if p.status is RunStatus.OK])
        b = process_samples([p for p in b_runs if p.status is RunStatus.OK])
        fewest = min(len(a_runs), len(b_runs))
        level = at_level(thresholds, settings, fewest)
        for key in a.keys() & b.keys():
            if wanted and key.metric_name not in wanted:
                continue
            try:
                comparison = compare_processes(a[key].processes, b[key].processes, level)
            except ValueError:  # a side without samples: nothing more rounds could add to
                continue
            if is_open(comparison, mode, level):
                found.append(
                    f"pair {number} {key.metric_name} {format_ratio(comparison.ratio)}, "
                    f"p={format_p(comparison.p_value)} (needs < {level.alpha:.2g})"
                )
    return sorted(found)
