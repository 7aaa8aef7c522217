"""Where a process died: its signal or exit status, its last lines, and Python's stack then.

Every case process runs with ``faulthandler`` writing into a file of the harness's (``FAULT_FILE``):
every thread's stack at a fatal signal, and a little before its time-out (``dump_after``,
``FAULT_AT``), by a thread of the hook's, never faulthandler's own watchdog, whose dump can crash
the process. A plain script gets it from its start-up hook. ``read_stack`` reads it back.
"""

from __future__ import annotations

import re
import signal
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from harness.host.environment import scrub
from harness.measure.script_hook import FAULT_FILE
from harness.store.schema import EndKind, ProcessEnd

# A script's output, beside the fault file: read back when the harness killed the process.
SCRIPT_STDOUT, SCRIPT_STDERR = "script-stdout.log", "script-stderr.log"
# Signals that something outside the script sends: a user's kill, a job's end, the kernel's OOM
# killer (SIGKILL).  A segfault or an abort is the process's own doing.
OUTSIDE_SIGNALS = frozenset({"SIGKILL", "SIGTERM", "SIGINT", "SIGHUP"})
STACK_CHARS = 6000  # of the faulthandler file kept: the end, where the fatal thread's stack is
LAST_LINES = 25
LAST_CHARS = 4000

# A frame's file in a venv, shown from site-packages: where the harness keeps venvs is no news.
VENV_FRAME = re.compile(r'(?<=File ")[^"\n]*/((?:site|dist)-packages/)')


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def last_lines(text: str) -> str:
    """The end of a process's output, scrubbed: its last lines, and of those the last characters."""
    kept = "\n".join(text[-4 * LAST_CHARS :].strip().splitlines()[-LAST_LINES:])
    return from_site_packages(scrub(kept if len(kept) <= LAST_CHARS else "…" + kept[-LAST_CHARS:]))


def from_site_packages(text: str) -> str:
    """``text`` with each frame's file in a venv shown from ``site-packages/``."""
    return VENV_FRAME.sub(r"\1", text)


def ended(returncode: int, output: str) -> ProcessEnd:
    """How a process exited with ``returncode`` (negative: killed by that signal)."""
    if returncode < 0:
        name = signal_name(-returncode)
        return ProcessEnd(
            EndKind.SIGNAL,
            signal=name,
            exit_status=128 - returncode,
            from_outside=name in OUTSIDE_SIGNALS,
            last_lines=last_lines(output),
        )
    return ProcessEnd(EndKind.EXIT, exit_status=returncode, last_lines=last_lines(output))


def timed_out(timeout_s: float, output: str) -> ProcessEnd:
    return ProcessEnd(EndKind.TIMEOUT, timeout_s=timeout_s, last_lines=last_lines(output))


def dump_after(timeout_s: float) -> float:
    """When to write the stack of a process still running: a little before the harness kills it."""
    return max(0.5, timeout_s - max(1.0, min(5.0, 0.1 * timeout_s)))


def script_output(environ: Mapping[str, str], name: str) -> Any:
    """A file for a script's output: ``name`` beside the fault file, where the harness can read it
    once it killed the process at its time-out; an anonymous temporary file where there is none."""
    folder = environ.get(FAULT_FILE)
    return open(Path(folder).parent / name, "w+b") if folder else tempfile.TemporaryFile()


def read_end(path: Path, size: int = 16 * LAST_CHARS) -> str:
    """The last ``size`` bytes of a file as text, "" where unreadable (it may hold gigabytes)."""
    try:
        with open(path, "rb") as handle:
            return tail_of(handle, size)
    except OSError:
        return ""


def tail_of(handle: BinaryIO, size: int) -> str:
    """The last ``size`` bytes of an open binary file as text, undecodable bytes replaced."""
    handle.seek(max(0, handle.seek(0, 2) - size))
    return handle.read().decode(errors="replace")


def read_stack(path: Path) -> str:
    """What faulthandler wrote, its end, scrubbed ("" where nothing was)."""
    return from_site_packages(scrub(read_end(path, STACK_CHARS).strip()))


def first_line(end: ProcessEnd) -> str:
    """``SIGSEGV (exit 139)``, ``exit 1``, ``timed out at 60 s``: how it ended, in a few words."""
    if end.how is EndKind.SIGNAL:
        status = f" (exit {end.exit_status})" if end.exit_status is not None else ""
        return f"{end.signal}{status}"
    if end.how is EndKind.EXIT:
        return f"exit {end.exit_status}"
    if end.how is EndKind.TIMEOUT:
        return "timed out" + (f" at {end.timeout_s:g} s" if end.timeout_s is not None else "")
    if end.how is EndKind.RAISED:
        return "raised"
    return "its worker died"
