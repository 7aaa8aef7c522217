"""The one error type the CLI turns into a single line and exit code 2."""


class UsageError(Exception):
    """Bad input from the user: unknown case, malformed size, unreadable folder."""
