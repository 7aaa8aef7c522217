"""Triage: a range's releases screened, every step found, each step confirmed, one answer per
change.  A first round screens the range: its ends and a grid, then only between neighbours that
differ (``grid.grid_sweep``), or every release in one interleaved run (``bisection.sweep``,
``--every-release``); each step between consecutive releases that ran ok is listed, regressions
and fixes alike. A step can be the noise of one run, so each is measured again: the two releases
around it, interleaved, until the step's metrics are decided (``ConfirmPairs``), and a step stands
only when the second measurement shows the same change on its own. The measuring comes through
callables, so the logic is tested with fake ones.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from harness.analysis.claims import compare_claims, flip_chance
from harness.analysis.metrics import MetricKey, compare_metric, metric_samples
from harness.analysis.significance import Comparison, Thresholds, Verdict
from harness.analysis.statuses import change_between, compare_endings, measured, summarise
from harness.metric_names import Criterion
from harness.steps.bisection import ReleaseStep, SweepOutcome, sweep
from harness.steps.confirm import ConfirmPairs
from harness.steps.grid import grid_sweep, small_within, twice_safe_bounds
from harness.steps.probes import Pair, Probe, ProbeRelease

# The first round screens: a step is a candidate at this level (or the strict one, if looser;
# without the rank guard, which 5 processes a side pass only when wholly apart), and only the
# confirmation, measured until decided at the strict level, answers.
SCREEN_ALPHA = 0.01


def screening(thresholds: Thresholds) -> Thresholds:
    """The first round's screen: at least ``SCREEN_ALPHA``'s level, no rank guard."""
    alpha = max(SCREEN_ALPHA, thresholds.alpha)
    return dataclasses.replace(thresholds, alpha=alpha, rank_guard=False)


@dataclass(frozen=True)
class Confirmation:
    """One step of the first round and what measuring its two releases again showed."""

    step: ReleaseStep
    before: Probe  # the older release, measured again
    after: Probe
    comparison: Comparison | None  # of the metric, on the second measurement
    confirmed: bool
    reason: str
    # A claim's flip: at most the chance it's confirmed where releases act alike (``flip_chance``).
    flip_error: float | None = None
    # Not measured again: a cost whose first-round interval stays within this twice-safe bound.
    small_bound: float | None = None

    @property
    def undecided(self) -> bool:
        """Measured again, and the statistics could tell neither the change nor its absence."""
        compared = self.comparison
        return not self.confirmed and compared is not None and compared.verdict == Verdict.UNDECIDED

    @property
    def outcome(self) -> str:
        """Confirmed, undecided, small (not measured again) or not confirmed."""
        if self.confirmed:
            return "confirmed"
        if self.undecided:
            return "undecided"
        return "small, not measured again" if self.small_bound else "not confirmed"

    @property
    def regression(self) -> bool:
        """Slower, the claim stopped holding, the processes stopped running ok, a value changed or a
        metric went missing; otherwise a fix (faster, the claim holds again, they run again) or a
        metric newly printed."""
        compared = self.comparison or self.step.comparison
        return self.step.way is Verdict.SLOWER if compared.shape.ratio else compared.worse


@dataclass
class TriageOutcome:
    first_round: SweepOutcome
    confirmations: list[Confirmation] = field(default_factory=list)

    def changes(self) -> list[Confirmation]:
        return [c for c in self.confirmations if c.confirmed]

    def undecided(self) -> list[Confirmation]:
        return [c for c in self.confirmations if c.undecided]

    def faults(self) -> list[tuple[str, str]]:
        """Each release of the first round some of whose processes were killed from outside, and the
        sentence saying so (``StatusSummary.fault``): never a change, never "no change" either."""
        return [
            (probe.release, fault)
            for probe in self.first_round.measurements
            if probe.ends is not None and (fault := probe.ends.fault())
        ]

    def skipped_between(self, step: ReleaseStep) -> list[str]:
        """Releases between a step's two that did not run ok: the change may lie in any of them."""
        releases = self.first_round.releases
        return releases[releases.index(step.before) + 1 : releases.index(step.after)]

    def ordered(self) -> list[tuple[Confirmation, bool]]:
        """Each confirmed change and whether it undoes an earlier regression of its metric (a fix),
        oldest first; a change in jax's import (JAX's cost) after those in what the script does."""
        found = []
        undone: set[Criterion] = set()  # with a confirmed regression so far
        for change in self.changes():
            found.append((change, change.step.criterion in undone))
            if change.regression:
                undone.add(change.step.criterion)
            else:
                undone.discard(change.step.criterion)
        return sorted(found, key=lambda pair: _is_jax_import(pair[0].step.criterion.metric))


def _is_jax_import(key: MetricKey | None) -> bool:
    return key is not None and key.is_jax_import


def _ok(probe: Probe) -> str | None:
    """Why a re-measured release cannot confirm anything, or None."""
    if probe.result is None:
        return f"jax {probe.release}: {probe.note}"
    if not measured(probe.result):
        return f"jax {probe.release}: status {probe.result.result.status}"
    return None


def confirm(step: ReleaseStep, before: Probe, after: Probe, thresholds: Thresholds) -> Confirmation:
    """The step measured again: a metric's comparison, the endings', or the claim's flip, whose
    error bounds its processes with a verdict on each release in each round (``flip_chance``)."""
    if step.criterion.ending:
        return confirm_status(step, before, after, thresholds)
    if problem := _ok(before) or _ok(after):
        return Confirmation(step, before, after, None, False, f"not measured again: {problem}")
    assert before.result is not None and after.result is not None
    if step.criterion.is_claim:
        again = compare_claims(before.result, after.result)
        error = flip_chance(step.comparison.processes, again.processes)
        same = again.sides == step.comparison.sides
        confirmed = same and error <= thresholds.alpha
        how = "the same flip" if same else f"{again.said} instead"
        if same and not confirmed:
            how += f", but so few processes flip twice in {error:.2g} of runs where nothing changed"
        return Confirmation(step, before, after, None, confirmed, f"measured again: {how}", error)
    metric = step.key
    a, b = metric_samples(before.result).of(metric), metric_samples(after.result).of(metric)
    comparison = compare_metric(a, b, thresholds, metric)
    confirmed = comparison.verdict == step.way
    how = f"{comparison.said} again" if confirmed else f"{comparison.said} this time"
    how += f" ({min(comparison.processes)} processes a side)"
    return Confirmation(step, before, after, comparison, confirmed, f"measured again: {how}")


def confirm_status(
    step: ReleaseStep, before: Probe, after: Probe, thresholds: Thresholds
) -> Confirmation:
    """A status step stands when the two releases, measured again, show a step the same way: every
    process of one ok, every one of the other dead (however each died), or a new ending in some
    processes whose counts decide it (undecided where they do not)."""
    if before.result is None or after.result is None:
        missing = before if before.result is None else after
        why = f"not measured again: jax {missing.release}: {missing.note}"
        return Confirmation(step, before, after, None, False, why)
    was, then = summarise(before.result), summarise(after.result)
    comparison = compare_endings(was, then, thresholds)
    assert step.ending is not None, "a status step has its ends"
    same = step.ending.same_way(change_between(was, then, thresholds))
    how = "the same step" if same else "no such step this time"
    if not same and comparison.verdict is Verdict.UNDECIDED:
        how = "undecided this time"
    ends = f"jax {step.before} {was.words()}; jax {step.after} {then.words()}"
    return Confirmation(step, before, after, comparison, same, f"measured again: {how} ({ends})")


def triage(
    releases: Sequence[str],
    measure: ProbeRelease,
    confirm_pairs: ConfirmPairs,
    *,
    metrics: Sequence[MetricKey] | None,
    with_claim: bool,
    thresholds: Thresholds,
    progress: Callable[[str], None] = lambda line: None,
    every_release: bool = True,
    glance: ProbeRelease | None = None,
    confirm_small: bool = True,
) -> TriageOutcome:
    """Screen ``releases`` with ``measure``, then confirm every step at once (``confirm_pairs``).
    ``every_release``: each measured (a watch's few; ``--every-release``), else a grid refined where
    neighbours differ (``grid.grid_sweep``; ``glance``: glanced at first, in fewer processes).
    Without ``confirm_small``, a cost whose first-round interval stays within its twice-safe bound
    (``grid.small_within``) is not measured again: confirmed, it would still be a step another
    run may not name (a range's; a watch's two releases confirm every candidate)."""
    screen = screening(thresholds)
    if every_release:
        progress(f"[triage] first round: {len(releases)} releases, measured together")
    search = sweep if every_release else functools.partial(grid_sweep, glance=glance)
    screened = functools.partial(search, metrics=metrics, with_claim=with_claim, thresholds=screen)
    first = screened(releases, measure, progress=progress, name="triage", screen=True)
    found = TriageOutcome(first)
    if not first.steps:
        progress("[triage] no step in the first round: nothing to confirm")
        return found
    small: dict[int, float] = {}  # by id: the steps not measured again, with their bound
    if not confirm_small:
        bounds = twice_safe_bounds(first, screen)
        small = {
            id(step): bound
            for step in first.steps
            if (bound := small_within(step.comparison, bounds, whole=True))
        }
    # Each pair with what its steps moved, to decide: their metrics, and ``status`` for how the
    # processes end (the claim is decided by its flip, not measured until decided).
    pairs: dict[Pair, tuple[Criterion, ...]] = {}
    for step in [step for step in first.steps if id(step) not in small]:
        moved = pairs.setdefault((step.before, step.after), ())
        if not step.criterion.is_claim and step.criterion not in moved:
            pairs[step.before, step.after] = (*moved, step.criterion)
    left = f", {len(small)} small left as they are" if small else ""
    progress(
        f"[triage] {len(first.steps)} candidate step(s){left}, between {len(pairs)} pair(s) of "
        "releases: measuring them again, until decided"
    )
    again = confirm_pairs(pairs) if pairs else {}
    probes = {probe.release: probe for probe in first.measurements}
    for number, step in enumerate(first.steps, start=1):
        if (bound := small.get(id(step))) is not None:
            why = f"its first round allows no change past ×{bound:.3g}"
            ends = probes[step.before], probes[step.after]
            confirmation = Confirmation(step, *ends, None, False, why, small_bound=bound)
        else:
            before, after = again[(step.before, step.after)]
            confirmation = confirm(step, before, after, thresholds)
        found.confirmations.append(confirmation)
        said = f"{step.criterion.name} {step.before} → {step.after}: {confirmation.outcome}"
        progress(f"[triage] ({number}/{len(first.steps)}) {said} ({confirmation.reason})")
    return found
