"""How a release's processes end, the metric ``process.end`` (shape ending): ok, or how each died.

A step of it is a release whose processes crash, time out, run out of memory or exit with an error,
in every one or in some, beside one whose processes run ok, judged on the counts of processes that
died (``compare_endings``): "crashes since jax 0.10.2: SIGSEGV (exit 139) in 5 of 5 processes;
0.10.1 ok in 5 of 5".  Every way of dying is an ending: processes that all died, each its own way (a
segfault, an exit, a hang, an error), are a dead side like those that died alike, and how they died
(the table of endings, ``StatusSummary.words``) is the detail, never a reason for "no change".  A
flip in some processes of many is judged on its counts (``compare_endings``); a process killed from
outside (SIGTERM, SIGINT, SIGHUP: a user's kill, a job's end) is a fault to say, never a change of
the release, and never "no change" either.  SIGKILL in every process of a side is the kernel's OOM
killer as far as the harness can tell, so it is an ending ("killed, out of memory?").
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from harness.analysis.shapes import Shape
from harness.analysis.significance import Thresholds, Verdict
from harness.measure.deaths import first_line
from harness.store.results import StoredResult
from harness.store.schema import EndKind, ProcessEnd, ProcessRun, RunStatus

# Processes a side needs before all of them dying the same way is a step (one process is one draw of
# the machine); a side that timed out twice is given up on (``cells.TIMEOUTS_BEFORE_GIVING_UP``),
# hence two.
MIN_STATUS_PROCESSES = 2
# The status step's arrow, between the ok side and the dead one: "ok → SIGSEGV (exit 139)".
OK = "ok"
ARROW = " → "
# What processes that died in several ways do, where their verbs (``end_verb``) differ.
DIES = "dies"


def end_of(process: ProcessRun) -> ProcessEnd | None:
    """Where a process died; a version-3 record of one not ok always has it, older may not."""
    if process.status is RunStatus.OK:
        return None
    if process.died is not None:
        return process.died
    how = EndKind.TIMEOUT if process.status is RunStatus.TIMEOUT else EndKind.RAISED
    return ProcessEnd(how, last_lines=process.detail)


def end_words(end: ProcessEnd) -> str:
    """How a process ended, for a status step: ``SIGSEGV (exit 139)``, ``exit 1 (XlaRuntimeError)``,
    ``raised RuntimeError``, ``timed out at 60 s``: an error is named by its exception's type, where
    its last line has one."""
    words = first_line(end)
    if end.signal == "SIGKILL":
        return f"{words}, out of memory?"
    if end.how is EndKind.RAISED:  # the harness's own words of the exception its worker caught
        error = error_line(end).partition(":")[0].rpartition(".")[2]
        return f"raised {error}" if error.isidentifier() else words
    error = raised_name(end.last_lines) if end.how is EndKind.EXIT else ""
    return f"{words} ({error})" if error else words


# Python's traceback: its header or a frame (``  File "x.py", line 3``), its frames indented,
# then the exception's line, unindented: ``pkg.ValueError: …`` or the bare name.
FRAME = re.compile(r'^(?:Traceback \(most recent call last\):|\s+File ")')
RAISED_NAME = re.compile(r"^((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)(?::|$)")


def raised_name(text: str) -> str:
    """The class name of the exception the last Python traceback in ``text`` ends with; "" where no
    traceback is (a line ``Authorization: …`` or pytest's ``rootdir: …`` names none)."""
    name, in_traceback = "", False
    for line in text.splitlines():
        if FRAME.match(line):
            in_traceback = True
        elif in_traceback and line.strip() and not line[0].isspace():
            found = RAISED_NAME.match(line)
            name = found.group(1).rpartition(".")[2] if found else name
            in_traceback = False
    return name


def end_verb(end: ProcessEnd | None) -> str:
    """``crashes``, ``hangs``, ``fails``, ``is killed``: what a process that ended so does."""
    if end is not None and end.signal == "SIGKILL":
        return "is killed"
    if end is not None and end.how is EndKind.SIGNAL:
        return "crashes"
    return "hangs" if end is not None and end.how is EndKind.TIMEOUT else "fails"


# A line that names an exception (``ValueError: …``, ``jax.errors.JaxRuntimeError: …``): what
# follows it may be a library's trailer (JAX's "For simplicity, JAX has removed its internal …").
EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt)\b")
# Lines never the error itself: JAX's trailer and its rule (a script's own JSON line: ``_printed``).
NOT_THE_ERROR = re.compile(r"^(?:For simplicity, JAX has removed|JAX_TRACEBACK_FILTERING=|-{4,}$)")


def error_line(end: ProcessEnd | str) -> str:
    """The line that names the error, from a process's last lines (its end, or a result's detail):
    the last that names an exception, else the last one that is not blank, JAX's trailer or a JSON
    line the script printed (a figure)."""
    text = end if isinstance(end, str) else end.last_lines
    lines = [line.strip() for line in text.splitlines() if not _printed(line.strip())]
    lines = [line for line in lines if not NOT_THE_ERROR.match(line)]
    named = [line for line in lines if EXCEPTION_LINE.match(line)]
    return (named or lines)[-1][:200] if lines else ""


def _printed(line: str) -> bool:
    """A blank line, or a JSON object or list: what a script prints, never its error."""
    if not line.startswith(("{", "[")):
        return not line
    try:
        return isinstance(json.loads(line), dict | list)
    except ValueError:
        return False


class Ending(str):
    """A status step's change as every page says it (``ok → SIGSEGV (exit 139)``), its two sides
    kept: a page formats it as the text it is, the code asks its parts and never parses the text."""

    was: str  # ``ok``, or how every process died
    now: str
    verb: str  # ``crashes``, ``hangs``, ``fails``, ``is killed``: what the dead side does

    def __new__(cls, was: str, now: str, verb: str) -> Ending:
        made = super().__new__(cls, f"{was}{ARROW}{now}")
        made.was, made.now, made.verb = was, now, verb
        return made

    def __getnewargs__(self) -> tuple[str, str, str]:  # type: ignore[override]  # copied, pickled
        return self.was, self.now, self.verb

    @property
    def stops_running(self) -> bool:
        """From ok to dead: a regression; the other way it runs again."""
        return self.was == OK

    def same_way(self, other: Ending | None) -> bool:
        """Whether ``other`` is a step the same way round (ok to dead, or back); how each died is
        its detail (a segfault on one CPU is a hang on another)."""
        return other is not None and other.stops_running == self.stops_running

    @property
    def dead(self) -> str:
        """How the dead side's processes ended."""
        return self.now if self.stops_running else self.was


@dataclass(frozen=True)
class StatusSummary:
    """A result's processes by how they ended."""

    processes: int
    ok: int
    ends: dict[str, int]  # end_words → how many processes ended so
    verbs: dict[str, str]  # end_words → what a process that ended so does (``end_verb``)
    first: ProcessEnd | None  # the first process's end that was not ok
    outside: int  # processes killed from outside, SIGKILL (memory?) left out

    @property
    def alike(self) -> str | None:
        """``ok`` where every process ran ok; where every one died, whichever way, how (the one way,
        or a mix named by its commonest: ``SIGSEGV (exit 139) and 3 other endings``); None where
        some did and some did not, some were killed from outside, or too few ran to say."""
        if self.processes < MIN_STATUS_PROCESSES or (self.ok and self.ok < self.processes):
            return None
        if self.ok:
            return OK
        if self.outside:
            return None
        others = len(self.ends) - 1
        more = f" and {others} other ending{'s' * (others > 1)}" if others else ""
        return self.commonest + more

    @property
    def verb(self) -> str:
        """What the processes that died do: their one verb, or ``dies`` where they differ."""
        verbs = {self.verbs[how] for how in self.ends}
        return next(iter(verbs)) if len(verbs) == 1 else DIES

    @property
    def dead_counts(self) -> tuple[int, int]:
        """Processes that died, of those not killed from outside (an ending's counts)."""
        judged = self.processes - self.outside
        return judged - self.ok, judged

    @property
    def commonest(self) -> str:
        """The ending most of its dead processes share; "" where none died."""
        return max(sorted(self.ends), key=lambda how: self.ends[how]) if self.ends else ""

    def words(self) -> str:
        """``SIGSEGV (exit 139) in 5 of 5 processes``, ``ok in 5 of 5``; a mix named by part."""
        parts = [f"{OK} in {self.ok}"] if self.ok else []
        parts += [f"{how} in {count}" for how, count in self.ends.items()]
        return (
            f"{', '.join(parts)} of {self.processes} process{'es' if self.processes != 1 else ''}"
        )

    def fault(self) -> str:
        """A fault to say where some of its processes were killed from outside; "" if none was."""
        if not self.outside:
            return ""
        return (
            f"killed from outside in {self.outside} of {self.processes} processes (a signal the "
            "script does not send itself: someone's kill, a job's end): a fault of the machine, "
            "not a change of the release, and no evidence of no change either; measure it again"
        )


def summarise(stored: StoredResult) -> StatusSummary:
    return summary_of(stored.result.processes)


def summary_of(processes: Sequence[ProcessRun]) -> StatusSummary:
    """Processes by how they ended, before or after a result holds them (a cell still measuring)."""
    ends = [end for end in map(end_of, processes) if end is not None]
    return StatusSummary(
        processes=len(processes),
        ok=len(processes) - len(ends),
        ends=dict(Counter(end_words(end) for end in ends)),
        verbs={end_words(end): end_verb(end) for end in ends},
        first=ends[0] if ends else None,
        outside=sum(e.a_fault for e in ends),
    )


def ends_of(stored: StoredResult | None) -> StatusSummary | None:
    """How a result's processes ended; None where none ran."""
    return summarise(stored) if stored is not None and ran(stored) else None


def ran(stored: StoredResult | None) -> bool:
    """A result whose processes ran (not one that could not be installed or was skipped)."""
    return (
        stored is not None
        and bool(stored.result.processes)
        and stored.result.status not in (RunStatus.SKIPPED, RunStatus.NOT_INSTALLABLE)
    )


def measured(stored: StoredResult | None) -> bool:
    """A result that ran ok, or some of whose processes did: its metrics can be compared on those
    (the others are the ending's evidence), unless some were killed from outside (a fault of the
    machine, said as such: what the rest measured is never read as "no change")."""
    if stored is None or not ran(stored):
        return False
    if stored.result.status is RunStatus.OK:
        return True
    finished = len(stored.result.finished())
    return 0 < finished < len(stored.result.processes) and not summarise(stored).outside


def change_between(
    was: StatusSummary,
    now: StatusSummary,
    thresholds: Thresholds,
    *,
    screen: bool = False,
) -> Ending | None:
    """A step of how the processes end, judged on the counts of processes that died (Fisher's exact
    test at the level of ``thresholds``; exact where every process of each side ended alike):
    ``ok → SIGSEGV (exit 139)`` where every process of ``was`` ran ok and every one of ``now`` died
    (alike or not), ``SIGSEGV (exit 139) → ok`` the other way; a new ending in some processes only
    named by the commonest ending there (``screen``: wherever one side has none, a candidate to
    measure again); None where the counts make no step."""
    if was.outside or now.outside:
        return None  # a fault of the machine, said as such: never a step, nor no step
    if was.alike and now.alike and OK in (was.alike, now.alike) and was.alike != now.alike:
        return Ending(was.alike, now.alike, (now if was.alike == OK else was).verb)
    counts = (was.dead_counts, now.dead_counts)
    compared = compare_endings(was, now, thresholds)
    candidate = screen and 0 in (counts[0][0], counts[1][0]) and counts[0][0] != counts[1][0]
    if compared.verdict is not Verdict.CHANGED and not candidate:
        return None
    if compared.worse or (candidate and counts[1][0]):
        return Ending(OK, now.commonest, now.verb) if now.commonest else None
    return Ending(was.commonest, OK, was.verb) if was.commonest else None


# How two releases' processes ended, compared on their counts of processes that died (as every
# ending is judged); where every process of each side ended alike, how (``ok → SIGSEGV``).
compare_endings = Shape.ENDING.compare


def like_ends(
    side: StatusSummary, ends: Sequence[StatusSummary], thresholds: Thresholds
) -> tuple[bool, bool]:
    """Whether ``side``'s counts of processes that died cannot be told from each of ``ends``' (the
    ending's comparison, as the step was judged): how a release, a held side or the newest one is
    placed between the two sides of a step of how the processes end."""
    first, second = (
        compare_endings(end, side, thresholds).verdict is not Verdict.CHANGED for end in ends
    )
    return first, second


def innermost_frame(stack: str) -> str:
    """The frame a faulthandler stack names first (its most recent call) in the thread that died, or
    the first thread where none is "Current" (a dump at a time-out):
    ``File "repro.py", line 12 in step``."""
    lines = [line.strip() for line in stack.splitlines()]
    start = next((i for i, line in enumerate(lines) if line.startswith("Current thread")), 0)
    return next((line for line in lines[start:] if line.startswith("File ")), "")
