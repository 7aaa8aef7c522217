"""The seam every kind of evidence about a step goes through: why the step between two sides moved.

A *kind* (``harness.explain.kinds``, in the order asked) gathers for one ``Step`` (two sides, older
first: releases, or a commit and its neighbour) with ``StepSides`` (a side made ready, one more
process of it, sides measured together until decided) and returns data, a ``Found``;
``harness.render.why`` words it. Triage, bisect and ``bisect --commits`` all ask through ``gather``.
A kind that answers some metrics (``Answers``) leaves the kinds after it the rest. A kind left out
(the time budget ran out, its folder cannot be written) is said (``Skipped``) with the command that
asks it; each answer is handed on as it comes (``kept``), so a why stopped part way keeps it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import statistics
import tempfile
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from harness.analysis.metrics import compare_results, metric_samples
from harness.analysis.significance import Shape, Thresholds, common_shape
from harness.analysis.spending import CHANGES
from harness.errors import UsageError
from harness.measure.locks import ASIDE, Aside
from harness.measure.sides import Side
from harness.measure.stopping import SettledCell
from harness.metric_names import Criterion, MetricKey
from harness.steps.probes import Pair, Probe, ReleaseProber
from harness.store.files import output_folder
from harness.store.results import StoredResult

HELD_LABEL = 64  # the longest label of a side with pins held, spelled out
# The why's default budget, as a share of the command's own measuring: under half, since a kind's
# first round is measured whole once started, so that the why adds at most about half again.
DEFAULT_SHARE = 0.4
KEPT_FOR_SETTLING = 0.5  # the share of it the kinds before the settling one leave for it
T = TypeVar("T")


@dataclass(frozen=True)
class Step:
    """A step to explain: its sides' labels, the metrics it moved, what the kinds need to know."""

    before: str
    after: str
    # What moved: each metric, or how the processes end (none: only the claim flipped).
    criteria: tuple[Criterion, ...]
    platform: str  # the profile's hardware (``pins.hardware``): cpu, gpu or tpu
    thresholds: Thresholds
    out: Path  # the folder the answer's page is written to
    # the page's name without suffix: a kind keeps its files in ``<stem>-<kind>/`` beside it
    stem: str
    jax_repo: Path | None = None  # a jax clone at hand, for the commits that turned a default
    script: str = ""  # a plain script's file name ("": a case)
    # A plain script's packages that moved, declared or not: name → (before's, after's) version.
    libraries: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # which of ``libraries`` the script declares (the rest moved with them)
    declared: tuple[str, ...] = ()

    # Below releases: the releases whose defaults are compared (a commit step's own two sides may
    # share jax's Python, or its jaxlib); None: the step's own sides.
    defaults_between: Pair | None = None
    # Each metric's shape (``StepSides.shaped``); one not known is a cost.
    shapes: Mapping[MetricKey, Shape] = field(default_factory=dict)
    # The costs constant in every process of both sides (a buffer's bytes): exact as a value is, so
    # a screen's few processes settle a trial of them.
    constant: frozenset[MetricKey] = frozenset()

    @property
    def metrics(self) -> tuple[MetricKey, ...]:
        return tuple(c.figures for c in self.criteria if c.figures is not None)

    @property
    def shape(self) -> Shape:
        """Orders its kinds: the shape its metrics share, a cost where they are of several."""
        if self.ending:
            return Shape.ENDING
        return common_shape(self.shapes.get(metric) for metric in self.metrics)

    def shape_of(self, metric: MetricKey) -> Shape:
        return common_shape([self.shapes.get(metric)])

    @property
    def costs(self) -> tuple[MetricKey, ...]:
        return tuple(m for m in self.metrics if self.shape_of(m).ratio)

    @property
    def exact(self) -> tuple[MetricKey, ...]:
        """What equality settles: values, presences and the constant costs."""
        return tuple(m for m in self.metrics if m not in self.costs or m in self.constant)

    @property
    def varying(self) -> tuple[MetricKey, ...]:
        return tuple(m for m in self.costs if m not in self.constant)

    def narrowed(self, metrics: Collection[MetricKey]) -> Step:
        kept = tuple(c for c in self.criteria if c.figures is None or c.figures in metrics)
        return dataclasses.replace(self, criteria=kept)

    @property
    def ending(self) -> bool:
        """A step of how the processes end (``process.end``): judged on its counts, not a number."""
        return any(c.ending for c in self.criteria)

    @property
    def changed(self) -> bool:
        return any(c.explained for c in self.criteria)

    @property
    def pair(self) -> Pair:
        return (self.before, self.after)

    def kept(self, suffix: str) -> str:
        """The folder, relative to the page, where a kind keeps its files."""
        return f"{self.stem}-{suffix}"

    def folder(self, suffix: str, *parts: str) -> Path:
        """``kept(suffix)/parts``, made; ``CannotKeep`` where a level is a link or not a folder."""
        try:
            return output_folder(self.out, self.kept(suffix), *parts)
        except (UsageError, OSError) as exc:
            raise CannotKeep(str(exc)) from None


class CannotKeep(UsageError):
    """A kind's folder beside the page cannot be written: that kind is not asked."""


class Found(Protocol):
    """What one kind found for a step: data, which ``harness.render.why`` puts into words."""

    @property
    def kind(self) -> str: ...

    @property
    def settles(self) -> bool: ...  # the kinds after it are not asked

    def data(self) -> dict[str, Any]: ...


@runtime_checkable
class Answers(Protocol):
    """A ``Found`` that answers some of the step's metrics: the kinds after it get the rest."""

    def answered(self) -> tuple[MetricKey, ...]: ...


class Evidence(Protocol):
    """A kind of evidence: asked for each step it is ``wanted`` for, in the registry's order."""

    name: str

    def wanted(self, step: Step, found: tuple[Found, ...]) -> bool: ...

    def gather(self, step: Step, sides: StepSides, found: tuple[Found, ...]) -> Found: ...


@dataclass(frozen=True)
class Skipped:
    name: str
    reason: str
    settles: bool = False
    command: str = ""  # the one command that asks it ("": none to give)

    @property
    def kind(self) -> str:
        return self.name

    def data(self) -> dict[str, Any]:
        return {"kind": self.name, "skipped": self.reason, "command": self.command}


class OverBudget(Exception):
    """What a kind would measure first does not fit in what is left of the why's budget."""


@dataclass
class StepSides:
    """What a kind gathers with: the sides of a step's prober, made ready and measured as any is."""

    prober: ReleaseProber
    # Facts a kind reads once per run and reuses on every step (an interpreter's XLA flag list).
    memo: dict[str, Any] = field(default_factory=dict)
    budget: WhyBudget | None = None  # a kind's measuring until decided stops when it runs out
    # The kind that settles the step's shape is asked: measured where the whole budget covers it.
    settling: bool = False

    @property
    def progress(self) -> Callable[[str], None]:
        return self.prober.progress

    @property
    def processes(self) -> int:  # a side's in the prober's first round: a screen's
        return self.prober.processes

    def stored(self, release: str) -> StoredResult | None:
        # the newest stored result of ``release``'s cell: a triage's confirmation counted too
        counted = dataclasses.replace(self.prober.reuse, accept=None, max_processes=None)
        return counted.stored(release)

    def shaped(self, step: Step) -> Step:
        """``step`` with each metric's shape, as its two sides' stored results judge it."""
        before, after = (self.stored(release) for release in step.pair)
        printed = [metric_samples(end) if end is not None else {} for end in (before, after)]
        shapes, constant = {}, set()
        for metric in step.metrics:
            if (compared := compare_results(before, after, metric, step.thresholds)) is not None:
                shapes[metric] = compared.shape
                if compared.constant and compared.shape.ratio:
                    constant.add(metric)
            elif (metric in printed[0]) != (metric in printed[1]):
                shapes[metric] = Shape.PRESENCE  # a shape made here: printed on one side only
        return dataclasses.replace(step, shapes=shapes, constant=frozenset(constant))

    def bounded(self, seconds: float | None) -> float | None:
        left = self.budget.left() if self.budget is not None else None
        if left is None:
            return seconds
        return max(left, 0.0) if seconds is None else min(max(left, 0.0), seconds)

    def afford(self, step: Step, processes: int, what: str) -> None:
        """``OverBudget`` where ``processes`` processes, each the median of the step's stored ones,
        would not fit in what is left (the whole budget, for the settling kind): a first round or
        screen is measured whole, so it is not started."""
        left = self.budget.left() if self.budget is not None else None
        if self.settling and self.budget is not None:
            left = self.budget.seconds
        seconds = self._process_seconds(step)
        if left is None or seconds is None or processes * seconds <= left:
            return
        assert self.budget is not None and self.budget.seconds is not None
        raise OverBudget(
            f"the why's time budget ({self.budget.seconds:.0f} s) would not cover {what}: "
            f"{processes} processes, about {processes * seconds:.0f} s, with {max(left, 0):.0f} s "
            + ("in all" if self.settling else "left")
        )

    def _process_seconds(self, step: Step) -> float | None:
        if (key := f"process seconds {step.before} {step.after}") not in self.memo:
            stored = (self.stored(release) for release in step.pair)
            ran = [p for each in stored if each is not None for p in each.result.processes]
            durations = [process.duration_s for process in ran if process.duration_s > 0]
            self.memo[key] = statistics.median(durations) if durations else None
        return self.memo[key]

    def side(self, label: str) -> Side | str:
        prepared = self.prober.readiness.side(label)
        return prepared.note if isinstance(prepared, Probe) else prepared

    def held_side(self, release: str, pins: Sequence[str]) -> Side | str:
        """A side of ``release`` with ``pins`` held (``0.4.33+numpy.2.0.1``); or why none."""
        label = f"{release}+" + ".".join(pin.replace("==", ".") for pin in pins)
        if len(label) > HELD_LABEL:  # a name it is stored under: the first pin, the count, a digest
            digest = hashlib.sha256("\n".join(pins).encode()).hexdigest()[:8]
            first = pins[0].replace("==", ".")
            label = f"{release}+{first}.and.{len(pins) - 1}.more.{digest}"
        prober = self.prober
        assert prober.environments is not None
        # A prober of its own that knows the label: the step's prober stays as other kinds have it.
        envs = {**prober.envs, label: prober.envs.get(label, prober.envs[release])}
        environments = prober.environments.holding(label, tuple(pins))
        holding = dataclasses.replace(prober, envs=envs, environments=environments)
        return StepSides(holding, self.memo).side(label)

    def one_more_process(
        self, side: Side, flags: Sequence[str] = (), env: Mapping[str, str] | None = None
    ) -> str:
        """How one extra process of ``side`` (``extra_process``) ended."""
        stored = self.extra_process(side, flags, env)
        return str(stored.result.status) if stored is not None else "no result"

    def extra_process(
        self, side: Side, flags: Sequence[str] = (), env: Mapping[str, str] | None = None
    ) -> StoredResult | None:
        """One extra process of ``side`` with more ``XLA_FLAGS`` and variables, its result as stored
        in a folder since removed; None if none stored."""
        extra = " ".join(part for part in (side.environment().get("XLA_FLAGS", ""), *flags) if part)
        variables = {**side.env, **(env or {}), "XLA_FLAGS": extra}
        changed = dataclasses.replace(side, env=variables, compare_next=False)
        measurement = self.prober.measurement
        with tempfile.TemporaryDirectory(prefix="harness-extra-") as scratch:
            settings = measurement.settings_for(1, "off", 1)
            measured = measurement.sides([changed], settings, Path(scratch))
        return measured[0][1] if measured else None

    def together(
        self,
        sides: Sequence[Side],
        metrics: Sequence[MetricKey],
        decide: str = CHANGES,
        settled: SettledCell | None = None,
    ) -> dict[str, StoredResult | None]:
        """``sides`` measured in one interleaved run, then until ``metrics`` are decided (as
        ``decide`` says) or ``settled`` says so at a look; each side's stored result by label."""
        measurement = self.prober.measurement
        # the first round is measured whole; deciding stops at the budget
        if self.budget is not None:
            bound = self.bounded(measurement.time_budget)
            measurement = dataclasses.replace(measurement, time_budget=bound)
        settings = measurement.settings_for(self.prober.processes, decide, 2, metrics)
        measured = measurement.sides(list(sides), settings, settled=settled)
        return {side.label: stored for side, stored in measured}

    def screened(self, sides: Sequence[Side], processes: int) -> dict[str, StoredResult | None]:
        """``sides`` measured in one interleaved run, ``processes`` each, never more: a screen."""
        measurement = self.prober.measurement
        settings = measurement.settings_for(processes, "off", len(sides))
        return {side.label: stored for side, stored in measurement.sides(list(sides), settings)}


@dataclass(frozen=True)
class Spent:
    before: str
    after: str
    seconds: Mapping[str, float]
    settles: bool = False
    kind: str = "spent"
    # The kinds left unasked because the one before answered every metric, and the command to ask.
    unasked: tuple[str, ...] = ()
    command: str = ""

    def data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "before": self.before,
            "after": self.after,
            "asked": list(self.seconds),  # the kinds asked, in order
            "seconds": {name: round(spent, 1) for name, spent in self.seconds.items()},
            "unasked": list(self.unasked),
            "command": self.command,
        }


@dataclass
class WhyBudget:
    """How long the why of a run may take (None: no bound), from its first question, its own work
    only (never a wait for a lock, nor an install); ``again``: the command that asks with more."""

    seconds: float | None = None
    again: str = ""
    # The command with a budget of so many seconds (``again``'s, fitted to what was left out).
    again_with: Callable[[float], str] | None = None
    by_default: bool = False  # ``seconds`` is the default: a share of the command's own measuring
    # what counts as the why's time: its own, from its first question (``left``)
    aside: Aside = field(default_factory=lambda: ASIDE)
    started: tuple[float, float] | None = None  # ``Aside.mark`` at the first question
    ceiling: float | None = None  # what a watch's --max-time leaves: the why is under the cap too
    # What the kinds asked before the settling one leave for it: a cost's library and reproducer
    # never spend what its changed defaults need.
    kept_for_settling: float = 0.0
    every_kind: bool = False  # every kind asked, also after one answered every metric of the step
    again_every: str = ""  # the command that asks them (said where an answered step left some)

    def at_most(self, seconds: float) -> None:
        """With no budget set: a share of ``seconds``, what the command's own measuring took; never
        past the ``ceiling``."""
        if self.seconds is None:
            self.seconds, self.by_default = max(seconds * DEFAULT_SHARE, 1.0), True
        if self.ceiling is not None:
            self.seconds = min(self.seconds, self.ceiling)

    def used(self) -> float:
        return self.aside.own_since(self.started) if self.started is not None else 0.0

    def ran_out(self, asked: int, left_out: int) -> tuple[str, str]:
        """Why a kind was not asked, and the command that asks the ``left_out`` kinds with a budget
        that covers them at the pace of the ``asked``."""
        used = self.used()
        share = f"{round(100 * DEFAULT_SHARE)} %"
        default = f", by default {share} of the command's own measuring" if self.by_default else ""
        kept = ""
        if self.kept_for_settling:
            kept = f", {self.kept_for_settling:.0f} s of it kept for the kind that settles the step"
        reason = f"the why's time budget ({self.seconds or 0:.0f} s{default}{kept}) ran out"
        wanted = used + (used / max(asked, 1)) * left_out
        return reason, self.again_with(wanted) if self.again_with else self.again

    def left(self) -> float | None:
        if self.seconds is None:
            return None
        if self.started is None:
            self.started = self.aside.mark()
        return self.seconds - self.used() - self.kept_for_settling


INTERRUPTED = "the why was stopped while this kind was asked"


def gather(
    kinds: Sequence[Evidence],
    step: Step,
    sides: StepSides,
    budget: WhyBudget | None = None,
    kept: Callable[[tuple[Found, ...]], None] = lambda found: None,
    settles: str = "",
) -> tuple[Found, ...]:
    """Every kind wanted for ``step``, asked in order with the metrics still open, until one settles
    the step, none is left open or the budget runs out; last, ``Spent``. The kind named ``settles``
    is asked however little of the budget is left. What was found is handed to ``kept`` after each
    kind, and when the why is stopped (``KeyboardInterrupt``)."""
    found: list[Found] = []
    seconds: dict[str, float] = {}
    asked = step
    if budget is not None:
        budget.left()  # its clock starts at the why's first question
    for number, kind in enumerate(kinds):
        if not kind.wanted(asked, tuple(found)):
            continue
        left_out = sum(each.wanted(asked, tuple(found)) for each in kinds[number:])
        settling = kind.name == settles
        if budget is not None:
            ahead = any(each.name == settles for each in kinds[number + 1 :])
            budget.kept_for_settling = (budget.seconds or 0) * KEPT_FOR_SETTLING if ahead else 0.0
        left = budget.left() if budget is not None else None
        if not settling and budget is not None and left is not None and left <= 0:
            reason, command = budget.ran_out(len(seconds), left_out)
            found.append(Skipped(kind.name, reason, command=command))
            continue
        # Every kind measures within what is left of the budget (tests hand in fakes of their own).
        bounded = sides
        if isinstance(sides, StepSides):
            bounded = dataclasses.replace(sides, budget=budget, settling=settling)
        started = time.monotonic()
        try:
            answer: Found = kind.gather(asked, bounded, tuple(found))
        except CannotKeep as exc:
            answer = Skipped(kind.name, f"its files cannot be kept beside the page: {exc}")
        except OverBudget as exc:
            command = budget.ran_out(len(seconds), left_out)[1] if budget else ""
            answer = Skipped(kind.name, str(exc), command=command)
        except KeyboardInterrupt:
            seconds[kind.name] = time.monotonic() - started
            found += [Skipped(kind.name, INTERRUPTED), Spent(step.before, step.after, seconds)]
            kept(tuple(found))
            raise
        seconds[kind.name] = time.monotonic() - started
        sides.progress(f"  {kind.name}: {seconds[kind.name]:.0f} s")
        found.append(answer)
        every = budget is not None and budget.every_kind
        if isinstance(answer, Answers) and not every:
            answered = set(answer.answered())
            asked = asked.narrowed([m for m in asked.metrics if m not in answered])
        kept((*found, Spent(step.before, step.after, seconds)))
        if not every and (answer.settles or (step.metrics and not asked.metrics)):
            unasked = tuple(each.name for each in kinds[number + 1 :] if each.wanted(step, ()))
            break
    else:
        unasked = ()
    if seconds:
        again = budget.again_every if budget is not None and unasked else ""
        found.append(Spent(step.before, step.after, seconds, unasked=unasked, command=again))
    return tuple(found)


def of_kind(found: Sequence[Found], kind: type[T]) -> T | None:
    return next((each for each in found if isinstance(each, kind)), None)
