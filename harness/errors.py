"""Errors the CLI turns into one line on stderr and an exit code, never a traceback; and the
interrupt a SIGTERM is."""

import signal


class HarnessError(Exception):
    """The harness cannot go on (e.g. results cannot be stored): exit code 1."""

    exit_code = 1


class WriteRefused(HarnessError):
    """An output folder took no write (read-only, full, not ours): the command stops, exit code 1.

    Not one release's failure to measure: no release after it could be stored either."""


class UsageError(HarnessError):
    """Bad input from the user: unknown case, malformed size, unreadable folder: exit code 2."""

    exit_code = 2


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C so the running case is killed and nothing is half-written."""


def terminate(signum: int, frame: object) -> None:
    """The SIGTERM handler of a command's process."""
    raise Terminated


def interrupted_status(exc: KeyboardInterrupt) -> int:
    """An interrupted command's exit status: 128 and the signal, SIGTERM or SIGINT."""
    return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)
