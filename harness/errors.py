"""Errors the CLI turns into one line on stderr and an exit code, never a traceback."""


class HarnessError(Exception):
    """The harness cannot go on (e.g. results cannot be stored): exit code 1."""

    exit_code = 1


class WriteRefused(HarnessError):
    """An output folder took no write (read-only, full, not ours): the command stops, exit code 1.

    Not one release's failure to measure: no release after it could be stored either."""


class UsageError(HarnessError):
    """Bad input from the user: unknown case, malformed size, unreadable folder: exit code 2."""

    exit_code = 2
