"""Flags named like what XLA compiled anew, tried even though their defaults did not change.

A fusion kind or custom-call target on one release only (``kCustom(__xnn_fusion)``) may come from a
flag that kept its default while what it governs changed underneath it: the newer release's flags
carrying a word of that name (``xnn`` → ``xla_cpu_use_xnnpack``) are set to their other value and
judged as a changed default set back is, unless a changed default already brought the old number
back.  An ending asks them too (``CrashFlags``), where no changed default made the release that dies
run (docs/releases.md).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass

from harness.explain.defaults import XLA, Change, Option, changes, relevant
from harness.explain.dumps import CompiledAnswer, Module
from harness.explain.tried import (
    NAMED,
    CrashAnswer,
    CrashWorkaround,
    DefaultsAnswer,
    Trial,
    planned_trials,
    screen_and_measure,
    xla_flags,
)
from harness.measure.sides import Side
from harness.metric_names import MetricKey
from harness.steps.evidence import Found, Step, StepSides, of_kind

MAX_MATCHED = 4
# Words every such name has, which would match every flag.
GENERIC = {"fusion", "custom", "call", "cpu", "gpu", "xla", "kcustom", "kloop", "kinput", "koutput"}
WORD = re.compile(r"[a-z][a-z0-9]{2,}")
FLIPPED = {"true": "false", "false": "true"}


@dataclass(frozen=True)
class Candidate(Trial):
    """A flag whose default did not change, set on the newer release to its other value: judged as a
    default set back, since it asks the newer release to compile as the older one did."""

    @property
    def back(self) -> bool:
        return True


@dataclass(frozen=True)
class MatchedFlags(DefaultsAnswer):
    """The flags tried, and the compiled names they were matched by."""

    names: tuple[str, ...] = ()  # what XLA compiled on one release only: fusion kinds, call targets
    kind: str = "flags"
    subject: str = "flags named like what XLA compiled anew"


def one_sided_names(found: tuple[Found, ...]) -> tuple[str, ...]:
    """Fusion kinds and custom-call targets in one release's optimised programs only, as the
    compiled programs (``found`` among the step's answers, else none) tell them."""
    compiled = of_kind(found, CompiledAnswer)
    names: dict[str, None] = {}
    for change in compiled.changes if compiled is not None else []:
        if not change.same_after:
            names.update(dict.fromkeys(sorted(_names(change.old) ^ _names(change.new))))
    return tuple(names)


def _names(module: Module) -> set[str]:
    return {name for name, count in (module.fusion_kinds + module.custom_calls).items() if count}


def words_of(names: Sequence[str]) -> set[str]:
    """``kCustom(__xnn_fusion)`` → ``{"xnn"}``, ``__onednn$matmul`` → ``{"onednn", "matmul"}``."""
    return {word for name in names for word in WORD.findall(name.lower())} - GENERIC


def candidates(
    listing: dict[str, Option],
    words: set[str],
    platform: str,
    skip: set[str],
    *,
    emptied: bool = False,
) -> list[Change]:
    """The boolean flags whose names carry one of ``words``, on ``platform``, not already tried; or
    (``emptied``) the string ones, to be set empty: such a flag lists what it turns on
    (``xla_cpu_experimental_ynn_fusion_type``: the YNN fusions), and empty turns none on, whatever
    the release does when it is unset (jax#39257's workaround)."""
    found = [
        Change(name, XLA, option.default, option.default)
        for name, option in sorted(listing.items())
        if (option.type == "string" if emptied else option.default in FLIPPED)
        and name not in skip
        and any(word in name for word in words)
    ]
    return relevant(found, platform)[:MAX_MATCHED]


class FlagsNamedLikeTheProgram:
    """Asked after the compiled programs, where they differ by a name a flag may carry."""

    name = "flags"

    def wanted(self, step: Step, found: tuple[Found, ...] = ()) -> bool:
        return (
            bool(step.metrics)  # an ending's are ``CrashFlags``', judged on its counts
            and bool(without_workaround(step, found))
            and bool(one_sided_names(found))
        )

    def gather(self, step: Step, sides: StepSides, found: tuple[Found, ...] = ()) -> MatchedFlags:
        step = step.narrowed(without_workaround(step, found))
        names = one_sided_names(found)
        answer = MatchedFlags(
            *step.pair, [], metrics=step.metrics, thresholds=step.thresholds, names=names
        )
        before, after = (sides.side(label) for label in step.pair)
        if not isinstance(before, Side) or not isinstance(after, Side):
            return dataclasses.replace(answer, problem="the two sides could not both be made ready")
        listing = xla_flags(sides, after)
        if isinstance(listing, str):
            return dataclasses.replace(answer, problem=listing)
        defaults = of_kind(found, DefaultsAnswer)
        tried = {c.name for c in defaults.listed} if defaults is not None else set()
        matched = candidates(listing, words_of(names), step.platform, tried)
        planned: list[Trial] = [
            Candidate(change, step.after, FLIPPED[str(change.after)]) for change in matched
        ]
        if not planned:
            return answer
        sides.progress(
            f"  trying {len(planned)} flag(s) named like {', '.join(names)}: "
            + ", ".join(trial.words() for trial in planned)
        )
        return screen_and_measure(step, sides, (before, after), planned, answer)


def without_workaround(step: Step, found: tuple[Found, ...]) -> tuple[MetricKey, ...]:
    """The step's metrics whose old number no changed default brought back."""
    defaults = of_kind(found, DefaultsAnswer)
    if defaults is None:
        return step.metrics
    return tuple(metric for metric in step.metrics if not defaults.brings_back(metric))


class CrashFlags(CrashWorkaround):
    """An ending's flags named like what XLA compiled on one release only, each set on the crashing
    release in turn: asked after the compiled programs, where no changed default made it run."""

    name = "crash flags"
    named_only = True

    def wanted(self, step: Step, found: tuple[Found, ...] = ()) -> bool:
        crash = of_kind(found, CrashAnswer)
        no_workaround = crash is None or crash.workaround is None
        return step.ending and bool(one_sided_names(found)) and no_workaround

    def planned(
        self,
        step: Step,
        found: tuple[Found, ...],
        crashing: str,
        options: tuple[dict[str, Option], dict[str, Option]],
    ) -> tuple[list[tuple[Trial, str]], tuple[str, ...]]:
        """The crashing release's flags named so, the changed defaults (tried before) left out."""
        names = one_sided_names(found)
        words = words_of(names)
        tried = planned_trials(changes(*options), crashing, step.before, step.platform)
        skip = {trial.change.name for trial, _ in tried}
        flags = options[1] if crashing == step.after else options[0]
        xla = {name: option for name, option in flags.items() if option.kind == XLA}
        flipped = candidates(xla, words, step.platform, skip)
        emptied = candidates(xla, words, step.platform, skip, emptied=True)
        planned: list[tuple[Trial, str]] = [
            (Candidate(c, crashing, FLIPPED[str(c.after)]), NAMED) for c in flipped
        ]
        return planned + [(Candidate(c, crashing, ""), NAMED) for c in emptied], names
