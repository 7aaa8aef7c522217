"""Library or JAX: where any package of a script's venv changed version along with jax (a declared
library, a dependency, one of jax's such as numpy), the step measured again with those held.

The step's two sides and a middle one (the newer jax with the moved packages at the older versions,
else the older jax with the newer's) are measured together until each part of each metric is
decided, the whole step among them (so the older side is measured as long as the step's rank guard
needs), a metric no longer looked at once its step is shared out (``by_share``). A metric that comes
with the libraries, jax's own part not moved, is answered: jax's own kinds are not asked for it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.analysis.metrics import compare_metric, compare_results, process_samples
from harness.analysis.significance import MOVED, Comparison, Thresholds, Verdict
from harness.analysis.spending import ALL
from harness.analysis.statuses import StatusSummary, like_ends, summarise
from harness.explain.tried import crashing_side
from harness.install.commit_venvs import is_commit_label
from harness.measure.sides import Side
from harness.measure.stopping import SettledCell
from harness.metric_names import MetricKey
from harness.steps.evidence import Found, Step, StepSides
from harness.store.results import StoredResult
from harness.store.schema import ProcessRun

JAX, LIBRARIES, BOTH, APART = "jax", "libraries", "both", "not told apart"
MIDDLE_PROCESSES = 3  # of an ending's middle side: a crash in every process shows in three


@dataclass(frozen=True)
class Parts:
    """One metric of the step split at the middle side: the whole, jax's part and the libraries'."""

    whole: Comparison | None
    jax: Comparison | None
    libraries: Comparison | None
    # ``jax`` or ``libraries`` where the step is shared out (``by_share``); "": by the verdicts.
    by_share: str = ""

    def comes_with(self) -> str:
        """``jax``, ``libraries``, ``both`` or ``not told apart``: which moved as the whole did."""
        if self.by_share:
            return self.by_share
        jax, libraries = (p.verdict if p is not None else None for p in (self.jax, self.libraries))
        whole = self.whole.verdict if self.whole is not None else None
        if whole not in MOVED:
            # The whole step not shown moved in this run (too few processes for its rank guard):
            # one part moved and the other shown unchanged tell it on their own.
            if jax in MOVED and libraries is Verdict.UNCHANGED:
                return JAX
            return LIBRARIES if libraries in MOVED and jax is Verdict.UNCHANGED else APART
        if jax == whole and libraries == whole:
            return BOTH
        return JAX if jax == whole else LIBRARIES if libraries == whole else APART


@dataclass(frozen=True)
class HeldAnswer:
    """The step measured with its moved libraries held: the middle side, each metric's parts."""

    before: str
    after: str
    moved: Mapping[str, tuple[str, str]]  # name → (before's version, after's)
    middle: str = ""  # the middle side's label ("": none could be had)
    jax_of_middle: str = ""  # the jax release the middle side runs: the newer's, or the older's
    parts: Mapping[MetricKey, Parts] = field(default_factory=dict)
    problem: str = ""  # why the step could not be split
    # A status step's: how the middle side's processes ended, and which part the crash comes with.
    middle_ended: str = ""
    status_comes_with: str = ""
    crashing: str = ""  # the release whose processes die
    kind: str = "library"

    def answered(self) -> tuple[MetricKey, ...]:
        """The metrics whose change comes with the libraries, jax's own part not moved (none of a
        status step: it has no parts, ``settles`` says it)."""
        return tuple(
            metric
            for metric, each in self.parts.items()
            if each.comes_with() == LIBRARIES
            and (each.jax is None or each.jax.verdict not in MOVED)
        )

    @property
    def settles(self) -> bool:
        if self.status_comes_with:
            return self.status_comes_with == LIBRARIES
        return bool(self.parts) and len(self.answered()) == len(self.parts)

    def held(self) -> dict[str, str]:
        newer_jax = self.jax_of_middle == self.after
        return {name: old if newer_jax else new for name, (old, new) in self.moved.items()}

    def data(self) -> dict[str, Any]:
        def said(found: Comparison | None) -> dict[str, Any] | None:
            if found is None:
                return None
            return {"verdict": found.verdict, "ratio": found.cost.ratio if found.cost else None}

        return {
            **{name: getattr(self, name) for name in ("kind", "before", "after")},
            "moved": {name: list(versions) for name, versions in self.moved.items()},
            "middle": self.middle,
            "jax_of_middle": self.jax_of_middle,
            "held": self.held() if self.middle else {},
            "metrics": {
                metric.metric_name: {
                    "comes_with": parts.comes_with(),
                    "by_share": bool(parts.by_share),
                    "whole": said(parts.whole),
                    "jax": said(parts.jax),
                    "libraries": said(parts.libraries),
                }
                for metric, parts in self.parts.items()
            },
            "status": {"comes_with": self.status_comes_with, "middle_ended": self.middle_ended}
            if self.status_comes_with
            else None,
            "problem": self.problem,
        }


def library_answered(found: Sequence[Found], metric: MetricKey) -> bool:
    held = next((each for each in found if isinstance(each, HeldAnswer)), None)
    return held is not None and metric in held.answered()


class HeldLibrary:
    """Asked first, for a plain script's step where any package of its venv but jax's own moved."""

    name = "library"

    def wanted(self, step: Step, found: tuple[Found, ...] = ()) -> bool:
        return (
            bool(step.script and step.libraries)
            and step.changed
            and not any(map(is_commit_label, step.pair))
            and "+" not in step.before + step.after  # a library's own releases: jax already held
        )

    def gather(self, step: Step, sides: StepSides, found: tuple[Found, ...] = ()) -> HeldAnswer:
        answer = HeldAnswer(step.before, step.after, dict(step.libraries))
        ends = [sides.side(label) for label in step.pair]
        for end in ends:
            if not isinstance(end, Side):
                return dataclasses.replace(answer, problem=end)
        before, after = (end for end in ends if isinstance(end, Side))
        had = _middle(step, sides)
        if isinstance(had, str):
            return dataclasses.replace(answer, problem=had)
        middle, jax_of_middle, moved = had
        answer = dataclasses.replace(
            answer, moved=moved, middle=middle.label, jax_of_middle=jax_of_middle
        )
        if step.ending:
            return by_ending(step, sides, middle, answer)
        # The step as triage confirmed it, read before this kind stores newer results of it.
        old, new = (sides.stored(label) for label in step.pair)
        confirmed = {key: compare_results(old, new, key, step.thresholds) for key in step.metrics}
        labels = (before.label, middle.label, after.label)
        settled = _shares_settled(step, labels, jax_of_middle, confirmed)
        # Until each part is decided either way ("changes" would close a part undecided for want of
        # a trend, which tells nothing), the whole step compared too.
        sides.afford(step, 3 * sides.processes, "its three sides' first look")
        sides.progress(
            "  library or jax: the three sides together, until each metric's step is shared out "
            "or its parts decided"
        )
        whole = dataclasses.replace(after, compare_with=before.label)
        measured = sides.together([before, middle, whole], step.metrics, ALL, settled)
        ours = [measured.get(label) for label in labels]
        parts = {
            key: _parts(ours, key, step, jax_of_middle, confirmed[key]) for key in step.metrics
        }
        return dataclasses.replace(answer, parts=parts)


def _shares_settled(
    step: Step,
    labels: tuple[str, str, str],
    jax_of_middle: str,
    confirmed: Mapping[MetricKey, Comparison | None],
) -> SettledCell | None:
    """The metrics whose step, at a look, is shared out (``by_share``) by the processes of
    ``labels`` (older, middle, newer) so far; None where none has a confirmed step.  Once one comes
    with jax every metric is settled: jax's own kinds will be asked anyway, worth more than the
    split of the rest."""
    wholes = {key: whole for key, whole in confirmed.items() if whole is not None}
    if not wholes:
        return None

    def settled(processes: dict[str, list[ProcessRun]]) -> set[MetricKey]:
        samples = [process_samples(processes.get(label, [])) for label in labels]
        shared = set()
        for key, whole in wholes.items():
            found = [each.get(key) for each in samples]
            if any(each is None or not each.processes for each in found):
                continue
            before, middle, after = (each for each in found if each is not None)
            first = compare_metric(before, middle, step.thresholds, key)
            second = compare_metric(middle, after, step.thresholds, key)
            jax, libraries = (first, second) if jax_of_middle == step.after else (second, first)
            found_share = by_share(whole, jax, libraries)
            if found_share == JAX:
                return set(wholes)
            if found_share:
                shared.add(key)
        return shared

    return settled


def by_ending(step: Step, sides: StepSides, middle: Side, answer: HeldAnswer) -> HeldAnswer:
    """An ending's step split at the middle side, run alone at a few processes, judged on its
    counts against each release's (``status_part``)."""
    stored = sides.prober.reuse.stored
    told = crashing_side(step, stored)
    if isinstance(told, str):
        return dataclasses.replace(answer, problem=told)
    crashing = told[0]
    sides.progress(f"  library or jax, by its ending: {middle.label}, {MIDDLE_PROCESSES} processes")
    result = sides.screened([middle], MIDDLE_PROCESSES).get(middle.label)
    if result is None:
        return dataclasses.replace(answer, problem="the middle side stored no result")
    ends = {label: summarise(found) for label in step.pair if (found := stored(label)) is not None}
    dead, running = ends[crashing], ends[step.before if crashing == step.after else step.after]
    summary = summarise(result)
    with_crashing_jax = answer.jax_of_middle == crashing
    comes_with = status_part(summary, (dead, running), step.thresholds, with_crashing_jax)
    return dataclasses.replace(
        answer, middle_ended=summary.words(), status_comes_with=comes_with, crashing=crashing
    )


def status_part(
    middle: StatusSummary,
    ends: tuple[StatusSummary, ...],
    rule: Thresholds,
    with_crashing_jax: bool,
) -> str:
    """Which part a crash comes with: the middle side like the release whose jax it runs, jax's;
    the other way, the libraries' (``ends``: the crashing one's counts, the running one's)."""
    like_dead, like_running = like_ends(middle, ends, rule)
    if like_dead == like_running:
        return APART
    return JAX if like_dead == with_crashing_jax else LIBRARIES


def _middle(step: Step, sides: StepSides) -> tuple[Side, str, dict[str, tuple[str, str]]] | str:
    """The middle side, the jax release it runs and the packages it holds; or why none.  Where no
    side holds every package that moved, the declared libraries alone (numpy, that jax itself
    requires, then counts in jax's part)."""
    every = dict(step.libraries)
    declared = {name: every[name] for name in step.declared if name in every}
    problems = []
    for moved in [every, *([declared] if declared and declared != every else [])]:
        # The newer jax with the older libraries first; where impossible with it, the other way.
        for release, which in ((step.after, 0), (step.before, 1)):
            pins = tuple(f"{name}=={versions[which]}" for name, versions in moved.items())
            sides.progress(f"  library or jax: jax {release} with {', '.join(pins)} held")
            held = sides.held_side(release, pins)
            if isinstance(held, Side):
                return held, release, moved
            problems.append(held)
    return "; ".join(problems)


def _parts(
    results: list[StoredResult | None],
    key: MetricKey,
    step: Step,
    jax_of_middle: str,
    confirmed: Comparison | None = None,
) -> Parts:
    before, middle, after = results
    thresholds = step.thresholds
    first = compare_results(before, middle, key, thresholds)
    second = compare_results(middle, after, key, thresholds)
    # The middle side runs the newer jax: the first part is jax's; else the first is the libraries'.
    jax, libraries = (first, second) if jax_of_middle == step.after else (second, first)
    if confirmed is None:  # the step as this run measured it
        return Parts(compare_results(before, after, key, thresholds), jax, libraries)
    return Parts(confirmed, jax, libraries, by_share(confirmed, jax, libraries))


def by_share(whole: Comparison, jax: Comparison | None, libraries: Comparison | None) -> str:
    """``jax`` or ``libraries`` where that part is beyond the square root of the step's ratio and
    the other's whole interval inside it, either way (a ×4 step: within ×0.5–×2); "": not yet."""
    step = whole.cost
    if whole.verdict not in MOVED or step is None or not 0 < step.ratio < math.inf:
        return ""
    half = math.sqrt(max(step.ratio, 1 / step.ratio))
    toward = step.ratio > 1  # the step's own direction
    for holds, other, name in ((jax, libraries, JAX), (libraries, jax, LIBRARIES)):
        if holds is None or holds.cost is None or other is None or other.cost is None:
            continue  # a part without a ratio (a value) holds no share of one
        beyond = holds.cost.ratio > half if toward else holds.cost.ratio < 1 / half
        part = other.cost  # its whole interval (a constant one: its ratio) inside ×1/half–×half
        inside = 1 / half < part.ratio < half if other.constant else part.margin < half  # NaN: no
        if beyond and inside:
            return name
    return ""
