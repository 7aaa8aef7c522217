"""A triage's sentences: each confirmed change in its metric's own terms, and the chance that any is
a false alarm.  "slower ×N since V (last good U)", "fixed in W (×M faster)", "claim stops holding in
V", "holds again from W"."""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.significance import Thresholds
from harness.analysis.statuses import error_line, innermost_frame
from harness.steps.probes import Probe
from harness.steps.triage import Confirmation, TriageOutcome, screening


def answered(found: TriageOutcome) -> list[tuple[str, Confirmation]]:
    return [
        (answer(change, fix=fix, between=found.skipped_between(change.step)), change)
        for change, fix in found.ordered()
    ]


def answers(found: TriageOutcome) -> list[str]:
    return [text for text, _ in answered(found)]


def family_error(found: TriageOutcome, thresholds: Thresholds) -> str:
    """The chance that any confirmed change or flip of the claim is a false alarm, bounded."""
    tested = sum(c.comparison is not None for c in found.confirmations)
    flips = [c.flip_error for c in found.confirmations if c.flip_error is not None]
    if not tested and not flips:
        return ""
    parts, bound = [], tested * thresholds.alpha + sum(flips)
    if tested:
        parts.append(
            f"{tested} candidate step(s) of a metric were measured again, each confirmed only at "
            f"level {thresholds.alpha:g} (spent over its looks)"
        )
    if flips:
        parts.append(
            f"{len(flips)} flip(s) of the claim were measured again, each confirmed only by the "
            "same flip, which releases that behave alike show twice in a row at most "
            f"{max(flips):.2g} of the time"
        )
    terms = [f"{tested} × {thresholds.alpha:g}"] if tested else []
    terms += [f"{flip:.2g}" for flip in flips]
    return (
        f"{'; '.join(parts)}: the chance that any confirmed change is a false alarm is at most "
        f"{' + '.join(terms)} = {min(1.0, bound):.2g}. The first round, at level "
        f"{screening(thresholds).alpha:g}, only chose what to measure again."
    )


def _factor(ratio: float) -> str:
    return f"×{ratio:.0f}" if ratio >= 100 else f"×{ratio:.3g}"


def answer(change: Confirmation, *, fix: bool, between: Sequence[str] = ()) -> str:
    """ "slower ×N since V (last good U)", "fixed in W (×M faster)" (``fix``: it undoes an earlier
    regression, else "faster ×M since W"), "claim stops holding in V", "claim holds again from
    W"."""
    step = change.step
    if step.criterion.is_claim:
        if change.regression:
            text = f"claim stops holding in {step.after} (last held in {step.before})"
        elif fix:
            text = f"claim holds again from {step.after} (last failed in {step.before})"
        else:
            text = f"claim holds from {step.after} (last failed in {step.before})"
    elif step.criterion.ending:
        text = status_answer(change)
    else:
        assert change.comparison is not None
        text = _timing_answer(change, fix=fix)
    if between:
        text += (
            f"; {', '.join(between)} between them did not run, so the change is in one of them or "
            f"{step.after}"
        )
    return text


def status_answer(change: Confirmation) -> str:
    """ "status: crashes since V: SIGSEGV (exit 139) in 5 of 5 processes; U ok in 5 of 5", or
    "status: runs again since W: ok in 5 of 5; U timed out at 60 s in 2 of 2"."""
    step = change.step
    dead, fine = dead_side(change).ends, (change.before if change.regression else change.after).ends
    assert dead is not None and fine is not None
    error = error_line(dead.first) if dead.first is not None else ""
    said = f" ({error})" if error else ""
    if change.regression:
        return (
            f"status: {step.verb} since {step.after}: {dead.words()}{said}; {step.before} "
            f"{fine.words()}"
        )
    return (
        f"status: runs again since {step.after}: {fine.words()}; {step.before} {dead.words()}{said}"
    )


def dead_side(change: Confirmation) -> Probe:
    return change.after if change.regression else change.before


def death_line(change: Confirmation) -> str:
    """Where the first process of a step's dead side died, if one did: how, its innermost frame."""
    dead = dead_side(change)
    ends = dead.ends
    if ends is None or ends.first is None:
        return ""
    said = "; ".join(filter(None, (innermost_frame(ends.first.stack), error_line(ends.first))))
    first = f"; first process: {said}" if said else ""
    return f"where jax {dead.release} died: {ends.words()}{first}"


def _timing_answer(change: Confirmation, *, fix: bool) -> str:
    """Slower/faster for a duration, higher/lower (worse/better) for a script's own number; the
    import of jax named as JAX's own cost, never as the script's."""
    step, comparison = change.step, change.comparison
    assert comparison is not None
    if comparison.counts is not None:  # a presence (an ending is the status answer's)
        (k_a, n_a), (k_b, n_b) = comparison.counts
        return (
            f"{step.criterion.name}: printed on {step.before} in {k_a} of {n_a}, "
            f"{'missing' if change.regression else 'printed'} on {step.after} in "
            f"{n_b - k_b if change.regression else k_b} of {n_b}"
        )
    key, cost = step.key, comparison.cost
    before, after = comparison.baseline.median, comparison.candidate.median
    figures = f"{key.format(before)} → {key.format(after)}"
    own = " (JAX's own import, not the script's code)" if key.is_jax_import else ""
    name = f"{step.criterion.name}{own}"
    if cost is None or (comparison.constant and 0 in (before, after)):
        # From zero or to zero: no ratio means anything, the values say it all.
        return f"{name}: {comparison.said} since {step.after} (last {step.before})"
    ratio = cost.ratio
    # the script's own unit: which way is better is the user's (--higher-is-better)
    if not key.is_duration:
        moved = f"higher {_factor(ratio)}" if ratio >= 1 else f"lower {_factor(1 / ratio)}"
        how = "worse" if change.regression else "better"
        return f"{name}: {moved} ({how}) since {step.after} (last {step.before}; {figures})"
    if fix and not change.regression:
        faster = f"{_factor(1 / ratio)} faster"
        return f"{name}: fixed in {step.after} ({faster}; last slow {step.before}; {figures})"
    moved, last = (
        (f"slower {_factor(ratio)}", "last good")
        if change.regression
        else (f"faster {_factor(1 / ratio)}", "last slower")
    )
    return f"{name}: {moved} since {step.after} ({last} {step.before}; {figures})"
