"""Errors the CLI turns into one line on stderr and an exit code, never a traceback."""


class HarnessError(Exception):
    """The harness cannot go on (e.g. results cannot be stored): exit code 1."""

    exit_code = 1


class UsageError(HarnessError):
    """Bad input from the user: unknown case, malformed size, unreadable folder: exit code 2."""

    exit_code = 2
