"""Names that become paths: what a stored result, a case file or a command line may call a thing.

A result file is input (a CI artifact, a colleague's folder): its case, release, profile,
machine and size names end up in file names of reports and merged folders.  Each must
match a strict pattern, checked on load, and every write goes through ``inside`` so no
name, however it got there, puts a file outside its output folder.  Standard library only.
"""

from __future__ import annotations

import re
from pathlib import Path

from harness.errors import UsageError

# Case, release, profile and id: a letter or digit first (so never "." or ".."), then letters,
# digits and ". _ + -"; no separators, no spaces.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
# A size is a Python keyword argument of the case's functions.
SIZE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def name_problem(value: str, pattern: re.Pattern[str] = NAME) -> str | None:
    """Why ``value`` cannot be a name, or None."""
    if pattern.fullmatch(value):
        return None
    allowed = (
        "a letter or underscore, then letters, digits and _"
        if pattern is SIZE_NAME
        else ("a letter or digit, then letters, digits and . _ + -")
    )
    return f"{value[:40]!r} is not a name ({allowed}; at most {'64' if pattern is SIZE_NAME else '128'} characters)"


def inside(folder: Path, *parts: str) -> Path:
    """``folder / parts``, refused (UsageError) unless it stays under ``folder`` once links are resolved."""
    target = folder.joinpath(*parts)
    root = folder.resolve()
    resolved = target.resolve()
    if resolved != root and root not in resolved.parents:
        raise UsageError(f"refusing to write {target}: it is not inside {folder}")
    return target
