"""Names that become paths: what a stored result, a case file or a command line may call a thing.

A result file is input: its case, release, profile, machine and size names end up in file names.
Each must match a strict pattern, checked on load, and every write goes through ``inside``, so no
name puts a file outside its output folder.  Standard library only.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from harness.errors import UsageError

# Case, release, profile and id: a letter or digit first (so never "." or ".."), then letters,
# digits and ". _ + -"; no separators, no spaces.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")
# A size is a Python keyword argument of the case's functions.
SIZE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def listed(spec: str) -> list[str]:
    """A command line's comma-separated names (``a, b,a``): each once, in order, no empty one."""
    return list(dict.fromkeys(filter(None, (name.strip() for name in spec.split(",")))))


def name_problem(value: str, pattern: re.Pattern[str] = NAME) -> str | None:
    """Why ``value`` cannot be a name, or None."""
    if pattern.fullmatch(value):
        return None
    if pattern is SIZE_NAME:
        allowed, most = "a letter or underscore, then letters, digits and _", 64
    else:
        allowed, most = "a letter or digit, then letters, digits and . _ + -", 128
    return f"{value[:40]!r} is not a name ({allowed}; at most {most} characters)"


# What Linux and macOS file systems take: NAME_MAX bytes in one component, PATH_MAX in a whole
# path.  A longer one fails in the first open, mkdir or stat with an OSError; checked up front, it
# is one line.
MAX_COMPONENT_BYTES = 255
MAX_PATH_BYTES = 4096


def path_problem(text: str) -> str | None:
    """Why ``text`` cannot name a file or folder on this system, or None."""
    if not text.strip():
        return "an empty path would mean the current folder: name one"
    if "\x00" in text:
        return "a path cannot hold a NUL character"
    try:
        raw = os.fsencode(text)
    except UnicodeEncodeError:  # a lone surrogate that the file system encoding cannot carry
        return f"{text[:40]!r} cannot be written in this system's file name encoding"
    if len(raw) > MAX_PATH_BYTES:
        return f"a path of {len(raw)} bytes is longer than the {MAX_PATH_BYTES} this system takes"
    for part in raw.split(b"/"):
        if len(part) > MAX_COMPONENT_BYTES:
            shown = os.fsdecode(part[:40])
            most = f"more than the {MAX_COMPONENT_BYTES} a name may be"
            return f"{shown!r}… in the path is {len(part)} bytes, {most}"
    return None


def inside(folder: Path, *parts: str) -> Path:
    """``folder / parts``; UsageError unless it stays under ``folder`` once links are resolved."""
    target = folder.joinpath(*parts)
    try:
        root = folder.resolve()
        resolved = target.resolve()
    # a link loop planted on the way (RuntimeError before Python 3.13)
    except (RuntimeError, OSError) as exc:
        raise UsageError(f"refusing to write {target}: {exc}") from None
    if resolved != root and root not in resolved.parents:
        raise UsageError(f"refusing to write {target}: it is not inside {folder}")
    return target
