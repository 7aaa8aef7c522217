"""A machine's noise floor (``calibrate``) as one sentence for a report."""

from __future__ import annotations

from harness.analysis.significance import DEFAULT_THRESHOLDS, DETECTION_POWER
from harness.render.text import inline
from harness.store.calibrations import CalibrationRun
from harness.units import format_ratio, short_machine, sizes_text


def noise_floor_sentence(run: CalibrationRun) -> str:
    """E.g. "Noise floor of machine 1a2b3c4d (calibrated 2026-06-01 with scan_sync M=2 N=600 on jax
    0.12.0.1): 1 of 24 metric comparisons between 3 pairs of separate runs of one release got a
    verdict (4.2%); raising N from 600 to 660 (measured interleaved with the unchanged case, 3 runs)
    was flagged slower in 18 of 24 metric comparisons, from ×1.08 up."."""
    # Every stored string goes in as text: a calibration file is input like a result.
    where = (
        f"Noise floor of machine {inline(short_machine(run.machine))} (calibrated "
        f"{inline(run.created_at[:10])} with {inline(run.case)} {inline(sizes_text(run.sizes))} on "
        f"jax {inline(run.release)})"
    )
    some_pairs = f"{run.pairs} pair{'s' if run.pairs != 1 else ''}"
    pairs = f"{some_pairs} of separate runs of one release"
    aa = f"no metric could be compared between {pairs}"
    if run.comparisons:
        aa = (
            f"{run.flagged} of {run.comparisons} metric comparisons between {pairs} got a verdict "
            f"({run.false_positive_rate:.1%})"
        )
    if run.detectable_ratio is not None:
        aa += (
            f"; at {run.processes} processes a side, the spread between processes here lets the "
            f"rule see changes from about {format_ratio(run.detectable_ratio)} "
            f"(in {DETECTION_POWER:.0%} of comparisons; median over metrics)"
        )
    if (spread := run.invocation_spread) is not None:
        aa += f"; the level of a whole run moved by {spread:.1%} between separate runs"
        # An estimate from a few pairs: only ever advice to allow more than the default, never less.
        default = DEFAULT_THRESHOLDS.invocation_spread
        advice = f"within compare's default {default:g}"
        if spread > default:
            advice = (
                f"more than compare's default {default:g}: pass `--invocation-spread {spread:.3f}`"
            )
        aa += (
            " under load (log standard deviation; separate runs under load get no verdict: "
            "calibrate again on a quiet machine)"
            if run.aa_loaded
            else f" (log standard deviation, from {some_pairs}; {advice})"
        )
    raised = f"raising {inline(run.raised)} from {run.raised_from} to {run.raised_to}"
    if run.slowdown_runs:
        runs = f"{run.slowdown_runs} run{'s' if run.slowdown_runs != 1 else ''}"
        raised += f" (measured interleaved with the unchanged case, {runs})"
    if run.slowdown_flagged and run.smallest_flagged_ratio is not None:
        share = f"{run.slowdown_flagged} of {run.slowdown_comparisons}"
        if run.slowdown_flagged == run.slowdown_comparisons:
            share = f"all {run.slowdown_comparisons}"
        smallest = format_ratio(run.smallest_flagged_ratio)
        seen = f"{raised} was flagged slower in {share} metric comparisons, from {smallest} up"
    elif run.largest_unflagged_ratio is not None:
        largest = format_ratio(run.largest_unflagged_ratio)
        seen = f"{raised} was not flagged (ratios up to {largest})"
    else:
        seen = f"{raised} could not be compared"
    count = f"{run.processes} process{'es' if run.processes != 1 else ''}"
    caveat = f" (runs of {count} a side: too few for any verdict, {run.min_processes} are needed)"
    return f"{where}: {aa}; {seen}{caveat if run.processes < run.min_processes else ''}."
