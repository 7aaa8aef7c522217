"""Progress of a long command on stderr: in a terminal one line that updates in place, elsewhere (a
CI log, a pipe) each line as it comes; milestones stay on screen.

No progress library (rich, tqdm): the counts and estimates come from the engines, which know what is
left (rounds, looks, releases to install), and an updating line needs only a carriage return and an
erase; a bar that counts calls would only guess.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from harness.host.environment import redact
from harness.render.screen import WIDTH, shorten
from harness.render.text import terminal
from harness.units import format_seconds

CLEAR_LINE = "\r\x1b[K"  # carriage return, then erase to the end of the line (ANSI)


class Progress:
    """``progress(line)``: lines starting with ``milestones`` stay, others update one line in a
    terminal; ``keep(line)`` always stays."""

    def __init__(
        self,
        milestones: tuple[str, ...] = (),
        stream: TextIO | None = None,
        *,
        tty: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.milestones = milestones
        self.stream = stream
        self._tty = tty
        self.clock = clock
        self.started = clock()
        self.showing = False  # an updating line is on screen, without its newline

    @property
    def out(self) -> TextIO:
        # Looked up at each line, not at import: tests and callers replace sys.stderr.
        return self.stream if self.stream is not None else sys.stderr

    @property
    def tty(self) -> bool:
        if self._tty is not None:
            return self._tty
        isatty = getattr(self.out, "isatty", None)
        return bool(isatty and isatty())

    def __call__(self, line: str) -> None:
        if not self.tty or line.lstrip().startswith(self.milestones or ("\0",)):
            self.keep(line)
            return
        # in place of the last updating line
        elapsed = format_seconds(self.clock() - self.started)
        shown = terminal(redact(line).strip())
        self.out.write(CLEAR_LINE + shorten(f"[{elapsed}] {shown}", WIDTH - 1))
        self.out.flush()
        self.showing = True

    def keep(self, line: str) -> None:
        """``line`` on a line of its own, which stays."""
        if self.showing:
            self.out.write(CLEAR_LINE)
            self.showing = False
        # A script's stderr among them: no escape and no credential reaches the log.
        self.out.write(terminal(redact(line)) + "\n")
        self.out.flush()

    def done(self) -> None:
        """The updating line cleared: what the command prints next starts on a clean line."""
        if self.showing:
            self.out.write(CLEAR_LINE)
            self.out.flush()
            self.showing = False
