"""Errors the CLI turns into one line on stderr and an exit code, never a traceback; and the
interrupt a SIGTERM is."""

import errno
import signal

# A command whose folder or file took no write (the disk full, read-only, over quota, an I/O error):
# an exit status of its own, never 1, which a triage or a watch gives to "no change" or "a
# regression" (every ``--help`` ends with it, ``argparsing``).
WRITE_FAILED = 5
_FULL = "a disk full, or one that stopped taking writes"
WRITE_FAILED_WORDS = f"{WRITE_FAILED} a write failed ({_FULL}): what was stored so far is kept"
# What a disk says when it takes no more: full, over quota, a file too large, failing.
DISK_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO}
# ... and what a folder says when it takes no write at all: read-only, not ours.
WRITE_REFUSED = {*DISK_FULL, errno.EROFS, errno.EACCES, errno.EPERM}


class HarnessError(Exception):
    """The harness cannot go on (e.g. results cannot be stored): exit code 1."""

    exit_code = 1


class WriteRefused(HarnessError):
    """An output folder took no write: the command stops with ``WRITE_FAILED``, since no release
    after it could be stored either."""

    exit_code = WRITE_FAILED


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


def cannot_write(words: str, exc: OSError) -> HarnessError:
    """A write that failed, as one line: ``words`` and why.  A disk full or failing is the machine's
    (``WRITE_FAILED``); a folder read-only or not ours, named by the user, is bad input."""
    refused = WriteRefused if exc.errno in DISK_FULL else UsageError
    return refused(f"{words}: {exc.strerror or exc}")
