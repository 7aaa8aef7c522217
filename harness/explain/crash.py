"""Why, for a crash: a setting that makes the crashing release run, judged by status, not by a
number.

A status step (``harness.analysis.statuses``: a release whose processes all die the same way beside
one whose processes all run ok) has no number to bring back; what a user wants is a workaround.  The
changed defaults (``harness.explain.defaults``, as ``harness.explain.tried`` lists them) are each
set on the crashing release to the other release's value.  The crash kind is asked first
(``harness.explain.kinds``), before the compiled programs; where no changed default makes it run,
``CrashFlags``, asked after them, sets the flags named like what XLA compiled on one release only
(``harness.explain.matching_flags``) to their other value, a string one (a list of what it turns
on) to empty.  Each runs one process alone on the crashing release; one that runs ok runs
``STATUS_SCREEN`` more, and the first that runs ok in every one of them is the workaround: it ends
the search.  A trial whose processes died some other way is said with how, since a new way to die
is a hint too.  Where the release dies in some processes only (a flaky crash, told apart by its
counts), a trial runs in doubling rounds until a process dies (not a workaround: it stops there, so
a trial costs about one process per death rate) or until as many as the release measured ran ok,
judged against the release's counts by Fisher's exact test (``judge_counts``).

Kinds that judge only a number (where the time goes) are not asked for a status step: the answer
says so once (``NOT_ASKED``); library or JAX judges the middle side by status
(``harness.explain.held_library``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.analysis.shapes import Counts, compare_counts
from harness.analysis.significance import Shape, Thresholds, Verdict
from harness.analysis.statuses import Ending, StatusSummary, status_change, summarise
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

STATUS_SCREEN = 3  # processes a trial: a crash in every process shows in three, a flaky one may not
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
    processes: int = STATUS_SCREEN
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
            "processes": self.processes,
            "not_asked": NOT_ASKED,
            "problem": self.problem,
        }


def ends_of(step: Step, stored: Callable[[str], StoredResult | None]) -> tuple[str, Ending] | str:
    """The step's release that dies and its status change (``ok → SIGSEGV (exit 139)``), from the
    two releases' ``stored`` results; or why it cannot be told."""
    results = [stored(label) for label in step.pair]
    if results[0] is None or results[1] is None:
        return "the two releases' results could not both be read"
    change = status_change(results[0], results[1])
    if change is None and status_change(results[0], results[1], step.thresholds):
        # One process a setting can't tell a flaky crash from a fixed one: a false workaround.
        return (
            "a new ending in some processes only: the crash kind tries a setting on a few "
            "processes, which cannot tell a crash in some from none (not asked)"
        )
    if change is None:
        return "the two releases' stored results show no status step"
    return (step.after if change.stops_running else step.before), change


def partly_crashing(
    step: Step, stored: Callable[[str], StoredResult | None]
) -> tuple[str, Ending, Counts] | None:
    """The release that dies in some of its processes only, told apart from the other by the counts
    at the step's thresholds, how, and its counts (None: not such a step)."""
    results = [stored(label) for label in step.pair]
    if results[0] is None or results[1] is None or status_change(results[0], results[1]):
        return None
    change = status_change(results[0], results[1], step.thresholds)
    if not isinstance(change, Ending):
        return None
    crashing = step.after if change.stops_running else step.before
    dying = results[step.pair.index(crashing)]
    assert dying is not None
    return crashing, change, summarise(dying).dead_counts


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


def judge_status(trial: Trial, source: str, stored: StoredResult | None) -> StatusTried:
    """How the trial's processes ended: ``runs`` where every one ran ok."""
    if stored is None:
        return StatusTried(trial, source, "no result stored")
    if trial.change.kind == XLA and f"--{trial.change.name}" in lost_in(stored.result.processes):
        return StatusTried(trial, source, void=True)
    summary: StatusSummary = summarise(stored)
    return StatusTried(trial, source, summary.words(), runs=summary.all_ok)


def run_until_one_dies(
    trial: Trial, source: str, run: Callable[[Trial, int], StoredResult | None], most: int
) -> tuple[StatusTried | None, int]:
    """``trial`` run in doubling rounds until a process dies (its round's result judged by how
    they ended) or ``most`` ran ok (None, and how many ran)."""
    ran, size = 0, 1
    while ran < most:
        stored = run(trial, size)
        if stored is None or summarise(stored).ok < len(stored.result.processes):
            return judge_status(trial, source, stored), ran
        ran += len(stored.result.processes)
        size = min(2 * size, most - ran)
    return None, ran


def try_in_turn(
    planned: Sequence[tuple[Trial, str]],
    run: Callable[[Trial, int], StoredResult | None],
    progress: Callable[[str], None] = lambda line: None,
    against: tuple[Counts, Thresholds] | None = None,
) -> tuple[tuple[StatusTried, ...], int]:
    """Each trial run in turn (``run``: its side with that many processes), up to the first that
    runs ok in every process (a workaround ends the search), at most ``MAX_STATUS_TRIED``; what each
    did, and how many were left untried.  A trial runs one process first: one that dies (or hangs to
    its time-out) is not run again; one that runs ok is run ``STATUS_SCREEN`` more, judged on those.
    ``against``: the counts of a release that dies in some processes only, and the thresholds that
    told it apart: a trial runs until one dies or as many ran ok (``run_until_one_dies``).
    """
    done: list[StatusTried] = []
    for trial, source in planned[:MAX_STATUS_TRIED]:
        if against is not None:
            (counts, thresholds) = against
            died, ran = run_until_one_dies(trial, source, run, counts[1])
            judged = died or judge_counts(trial, source, ran, counts, thresholds)
        else:
            first = run(trial, 1)
            ran_ok = first is not None and summarise(first).ok == len(first.result.processes) > 0
            judged = judge_status(trial, source, run(trial, STATUS_SCREEN) if ran_ok else first)
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
        return step.by_status

    def gather(self, step: Step, sides: StepSides, found: tuple[Found, ...] = ()) -> CrashAnswer:
        answer = CrashAnswer(step.before, step.after, named_only=self.named_only)
        stored = {label: sides.prober.reuse.stored(label) for label in step.pair}.get
        partly = partly_crashing(step, stored)
        told = partly[:2] if partly is not None else ends_of(step, stored)
        if isinstance(told, str):
            return dataclasses.replace(answer, problem=told)
        crashing, arrow = told
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
        each = (
            f"each until a process dies (up to {partly[2][1]} where none does)"
            if partly is not None
            else f"one process each ({STATUS_SCREEN} more where it runs)"
        )
        sides.progress(
            f"  trying {min(len(planned), MAX_STATUS_TRIED)} setting(s) on {crashing}, {each}; "
            "the first that runs ends the search"
        )
        base = made[crashing]

        def run(trial: Trial, processes: int) -> StoredResult | None:
            side = side_of(trial, base)
            return sides.screened([side], processes).get(side.label)

        against = (partly[2], step.thresholds) if partly is not None else None
        tried, untried = try_in_turn(planned, run, sides.progress, against)
        return dataclasses.replace(answer, tried=tried, untried=untried)


class CrashFlags(CrashWorkaround):
    """Asked after the compiled programs, where no changed default made the crashing release run:
    the flags named like what XLA compiled on one release only, each set on it in turn."""

    name = "crash flags"
    named_only = True

    def wanted(self, step: Step, found: tuple[Found, ...] = ()) -> bool:
        compiled, crash = of_kind(found, CompiledAnswer), of_kind(found, CrashAnswer)
        return (
            step.by_status
            and compiled is not None
            and bool(one_sided_names(compiled))
            and (crash is None or crash.workaround is None)
        )


@dataclass(frozen=True)
class StatusReproduced:
    """The reproducer run on both releases, judged by status: does it die where the script does?"""

    ended: dict[str, str] = field(default_factory=dict)  # release → ``ok in 3 of 3 processes``
    reproduces: bool = False

    def data(self) -> dict[str, Any]:
        return {"ended": dict(self.ended), "reproduces": self.reproduces}


def status_reproduced(
    step: Step, results: dict[str, StoredResult | None], change: Ending
) -> StatusReproduced:
    """Whether the reproducer's processes flip as the script's did, the same way round (``change``:
    the step's own arrow); how it dies may differ (a segfault on one CPU is a hang on another)."""
    ended = {
        label: summarise(stored).words() if stored is not None else "no result stored"
        for label, stored in results.items()
    }
    before, after = (results.get(label) for label in step.pair)
    flipped = status_change(before, after) if before is not None and after is not None else None
    same_way = flipped is not None and flipped.stops_running == change.stops_running
    return StatusReproduced(ended, same_way)
