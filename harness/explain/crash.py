"""Why, for a crash: a setting that makes the crashing release run, judged on its counts of
processes that died as the step was (``process.end``, of shape ending), not by a number.

A step of how the processes end (``harness.analysis.statuses``: a release whose processes die, in
every one or in some, beside one that runs ok, told by the counts at the step's thresholds) has no
number to bring back; what a user wants is a workaround.  The changed defaults
(``harness.explain.defaults``, as ``harness.explain.tried`` lists them) are each set on the crashing
release to the other release's value.  The crash kind is asked first (``harness.explain.kinds``),
before the compiled programs; where no changed default makes it run, ``CrashFlags``, asked after
them, sets the flags named like what XLA compiled on one release only
(``harness.explain.matching_flags``) to their other value, a string one (a list of what it turns
on) to empty.  Each trial runs alone on the crashing release in doubling rounds until a process dies
(not a workaround: it stops there, so a trial costs about one process per death rate; how they died
is said, since a new way to die is a hint too) or until as many as the release measured ran ok
(``EVERY_DEAD_SCREEN`` where it died in every one), judged against the release's counts by the
ending's comparison (``judge_counts``: exact where the release died in every process); the first
told apart is the workaround and ends the search.

Kinds that judge only a number (where the time goes) are not asked for an ending: the answer says
so once (``NOT_ASKED``); library or JAX judges the middle side on its counts too
(``harness.explain.held_library``), and the reproducer its runs (``harness.explain.reproducer``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.analysis.shapes import Counts, compare_counts
from harness.analysis.significance import Shape, Thresholds, Verdict
from harness.analysis.statuses import Ending, change_between, summarise
from harness.explain.defaults import XLA, Change, Option, changes, relevant
from harness.explain.dumps import CompiledAnswer
from harness.explain.matching_flags import (
    FLIPPED,
    MAX_MATCHED,
    Candidate,
    candidates,
    one_sided_names,
    words_of,
)
from harness.explain.tried import Trial, options_of, settable, side_of, xla_flags
from harness.measure.script_process import lost_in
from harness.measure.sides import Side
from harness.steps.evidence import Found, Step, StepSides, of_kind
from harness.store.results import StoredResult

# Processes a trial runs ok at most where the release died in every one: exact at two a side
# (``shapes.MIN_ALIKE``), one more for the draw of the machine; a flaky crash runs as many as it.
EVERY_DEAD_SCREEN = 3
MAX_STATUS_TRIED = 8  # trials in all, changed defaults first: each costs a screen
CHANGED, NAMED = "changed default", "named like what XLA compiled anew"
# The kinds whose judging needs a number, not asked for a status step, said once.
NOT_ASKED = "where the time goes (the op profiles and the host profile)"


@dataclass(frozen=True)
class StatusTried:
    """One setting tried on the crashing release, and how its processes ended."""

    trial: Trial
    source: str  # CHANGED or NAMED
    ended: str = ""  # ``ok in 3 of 3 processes``, ``SIGSEGV (exit 139) in 3 of 3 processes``
    runs: bool = False  # ok in every process: a workaround
    void: bool = False  # the script replaced XLA_FLAGS: the flag never reached XLA

    def data(self) -> dict[str, Any]:
        return {
            "release": self.trial.release,
            "setting": self.trial.words(),
            "option": self.trial.change.name,
            "value": self.trial.value,
            "source": self.source,
            "status": self.ended,
            "runs": self.runs,
            "void": self.void,
        }


@dataclass(frozen=True)
class CrashAnswer:
    """The settings tried on a status step's crashing release, in turn, to the first that runs."""

    before: str
    after: str
    crashing: str = ""  # the release whose processes die
    dead: str = ""  # how they die: ``SIGSEGV (exit 139)``
    tried: tuple[StatusTried, ...] = ()
    untried: int = 0  # planned, not tried: a workaround was found first, or over the cap
    names: tuple[str, ...] = ()  # what XLA compiled on one release only, the flags were named by
    problem: str = ""
    kind: str = "crash"
    settles: bool = False
    # Only the flags named like what XLA compiled anew, asked after the compiled programs (the
    # changed defaults were the crash kind's own answer, before them).
    named_only: bool = False

    @property
    def workaround(self) -> StatusTried | None:
        return next((each for each in self.tried if each.runs), None)

    def data(self) -> dict[str, Any]:
        found = self.workaround
        return {
            "kind": self.kind,
            "before": self.before,
            "after": self.after,
            "crashing": self.crashing,
            "dead": self.dead,
            "workaround": None if found is None else found.data(),
            "tried": [each.data() for each in self.tried],
            "untried": self.untried,
            "named_only": self.named_only,
            "names": list(self.names),
            "not_asked": NOT_ASKED,
            "problem": self.problem,
        }


def crashing_side(
    step: Step, stored: Callable[[str], StoredResult | None]
) -> tuple[str, Ending, Counts] | str:
    """The step's release that dies, how (``ok → SIGSEGV (exit 139)``) and its counts of processes
    that died, as the step's own comparison tells it (the counts, at its thresholds: in every
    process or in some), from the two releases' ``stored`` results; or why it cannot be told."""
    results = [stored(label) for label in step.pair]
    if results[0] is None or results[1] is None:
        return "the two releases' results could not both be read"
    was, now = summarise(results[0]), summarise(results[1])
    change = change_between(was, now, step.thresholds)
    if change is None:
        return "the two releases' stored results show no change in how their processes end"
    crashing = step.after if change.stops_running else step.before
    return crashing, change, (now if crashing == step.after else was).dead_counts


def judge_counts(
    trial: Trial, source: str, ran: int, against: Counts, thresholds: Thresholds
) -> StatusTried:
    """A trial on a release that dies in some processes (``against``: its counts), ok in all of its
    ``ran``: a workaround where Fisher's exact test tells the two apart."""
    compared = compare_counts(Shape.ENDING, against, (0, ran), thresholds)
    told = compared.verdict is Verdict.CHANGED
    dead, of = against
    how = "told apart" if told else "not told apart"
    ended = f"ok in {ran} of {ran} processes ({how} from {dead} of {of} dead on the release)"
    return StatusTried(trial, source, ended, runs=told)


def planned_trials(
    listed: Sequence[Any], crashing: str, before: str, platform: str, words: Set[str] = frozenset()
) -> list[tuple[Trial, str]]:
    """Each changed default set on the crashing release to the other's value: those named like what
    XLA compiled on one release only (``words``) first, then those named for the platform."""
    ordered = sorted(
        relevant(list(listed), platform),
        key=lambda c: (
            not any(word in c.name for word in words),
            c.before is None or c.after is None,
            platform not in c.name.split("_"),
            c.name,
        ),
    )
    planned = []
    for change in ordered:
        value = change.before if crashing != before else change.after
        mine = change.after if crashing != before else change.before
        if mine is not None and settable(change, value):
            planned.append((Trial(change, crashing, str(value)), CHANGED))
    return planned


def emptied(
    listing: Mapping[str, Option], words: Set[str], platform: str, skip: Set[str]
) -> list[Change]:
    """The string flags whose names carry one of ``words``, to be set empty: such a flag lists what
    it turns on (``xla_cpu_experimental_ynn_fusion_type``: the YNN fusions), and empty turns none
    on, whatever the release does when it is unset (jax#39257's workaround)."""
    found = [
        Change(name, XLA, option.default, option.default)
        for name, option in sorted(listing.items())
        if option.type == "string" and name not in skip and any(word in name for word in words)
    ]
    return relevant(found, platform)[:MAX_MATCHED]


def stopped(trial: Trial, source: str, stored: StoredResult | None) -> StatusTried | None:
    """A trial's round that ends it, never a workaround: none stored, the flag lost (the script
    replaced XLA_FLAGS: void), or a process that died (said with how they ended); None where every
    process ran ok with the setting."""
    if stored is None:
        return StatusTried(trial, source, "no result stored")
    if trial.change.kind == XLA and f"--{trial.change.name}" in lost_in(stored.result.processes):
        return StatusTried(trial, source, void=True)
    summary = summarise(stored)
    return StatusTried(trial, source, summary.words()) if summary.ok < summary.processes else None


def run_until_one_dies(
    trial: Trial, source: str, run: Callable[[Trial, int], StoredResult | None], most: int
) -> tuple[StatusTried | None, int]:
    """``trial`` run in doubling rounds until a round stops it (``stopped``: a process died) or
    ``most`` ran ok (None, and how many ran)."""
    ran, size = 0, 1
    while ran < most:
        stored = run(trial, size)
        if (ended := stopped(trial, source, stored)) is not None:
            return ended, ran
        assert stored is not None
        ran += len(stored.result.processes)
        size = min(2 * size, most - ran)
    return None, ran


def try_in_turn(
    planned: Sequence[tuple[Trial, str]],
    run: Callable[[Trial, int], StoredResult | None],
    against: tuple[Counts, Thresholds],
    progress: Callable[[str], None] = lambda line: None,
) -> tuple[tuple[StatusTried, ...], int]:
    """Each trial run in turn (``run``: its side with that many processes), up to the first that
    brings the running side back (a workaround ends the search), at most ``MAX_STATUS_TRIED``; what
    each did, and how many were left untried.  ``against``: the crashing release's counts of
    processes that died and the step's thresholds: a trial runs in doubling rounds until one of its
    processes dies (or hangs to its time-out) or as many ran ok (``EVERY_DEAD_SCREEN`` where every
    one died: ``run_until_one_dies``), judged on its counts against the release's as the step was
    (``judge_counts``)."""
    done: list[StatusTried] = []
    counts, thresholds = against
    most = min(counts[1], EVERY_DEAD_SCREEN) if counts[0] == counts[1] else counts[1]
    for trial, source in planned[:MAX_STATUS_TRIED]:
        died, ran = run_until_one_dies(trial, source, run, most)
        judged = died or judge_counts(trial, source, ran, counts, thresholds)
        progress(f"  {trial.words()} on {trial.release}: {judged.ended or 'void'}")
        done.append(judged)
        if judged.runs:
            break
    return tuple(done), len(planned) - len(done)


class CrashWorkaround:
    """For a status step: the changed defaults (and, where the compiled programs were asked before
    it, the flags named like what XLA compiled anew), each set on the crashing release and screened
    alone, until one makes it run."""

    name = "crash"
    named_only = False  # only the flags named like what XLA compiled anew: ``CrashFlags``

    def wanted(self, step: Step, found: tuple[Found, ...] = ()) -> bool:
        return step.ending

    def gather(self, step: Step, sides: StepSides, found: tuple[Found, ...] = ()) -> CrashAnswer:
        answer = CrashAnswer(step.before, step.after, named_only=self.named_only)
        stored = {label: sides.prober.reuse.stored(label) for label in step.pair}.get
        told = crashing_side(step, stored)
        if isinstance(told, str):
            return dataclasses.replace(answer, problem=told)
        crashing, arrow, counts = told
        answer = dataclasses.replace(answer, crashing=crashing, dead=arrow.dead)
        ready = {
            label: sides.side(label)
            for label in dict.fromkeys((*step.pair, *(step.defaults_between or ())))
        }
        made = {label: side for label, side in ready.items() if isinstance(side, Side)}
        if len(made) < len(ready):
            return dataclasses.replace(answer, problem="the two sides could not both be made ready")
        listing = step.defaults_between or step.pair
        (old, problem), (new, later) = (
            options_of(Path(made[label].interpreter), xla_flags(sides, made[label]))
            for label in listing
        )
        compiled = of_kind(found, CompiledAnswer)
        names = tuple(one_sided_names(compiled)) if compiled is not None else ()
        words = words_of(list(names))
        planned = planned_trials(changes(old, new), crashing, step.before, step.platform, words)
        flags = new if crashing == step.after else old
        skip = {trial.change.name for trial, _ in planned}
        if self.named_only:  # the changed defaults were tried before the compiled programs
            planned = []
        if names:
            xla = {name: option for name, option in flags.items() if option.kind == XLA}
            for change in candidates(xla, words, step.platform, skip):
                planned.append((Candidate(change, crashing, FLIPPED[str(change.after)]), NAMED))
            for change in emptied(xla, words, step.platform, skip):
                planned.append((Candidate(change, crashing, ""), NAMED))
        answer = dataclasses.replace(answer, names=names, problem=problem or later)
        if not planned:
            return answer
        sides.progress(
            f"  trying {min(len(planned), MAX_STATUS_TRIED)} setting(s) on {crashing}, each until "
            "a process dies or its counts are told from the release's; the first that runs ends "
            "the search"
        )
        base = made[crashing]

        def run(trial: Trial, processes: int) -> StoredResult | None:
            side = side_of(trial, base)
            return sides.screened([side], processes).get(side.label)

        tried, untried = try_in_turn(planned, run, (counts, step.thresholds), sides.progress)
        return dataclasses.replace(answer, tried=tried, untried=untried)


class CrashFlags(CrashWorkaround):
    """Asked after the compiled programs, where no changed default made the crashing release run:
    the flags named like what XLA compiled on one release only, each set on it in turn."""

    name = "crash flags"
    named_only = True

    def wanted(self, step: Step, found: tuple[Found, ...] = ()) -> bool:
        compiled, crash = of_kind(found, CompiledAnswer), of_kind(found, CrashAnswer)
        return (
            step.ending
            and compiled is not None
            and bool(one_sided_names(compiled))
            and (crash is None or crash.workaround is None)
        )
