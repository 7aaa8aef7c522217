"""Stored strings as text on markdown pages and a terminal.  Every string from a result or
calibration file is input (a newline and a ``# heading``, HTML, backticks that close a fence):
``inline`` makes it one line of literal text, ``code_span`` and ``fenced`` code it cannot close;
``Markdown`` marks text a renderer composed itself, whose markup is meant."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from typing import Any

# Characters with a meaning in GitHub-flavoured markdown or HTML anywhere in a line.  An underscore
# inside a word (``scan_sync``) starts no emphasis, so names keep their look.
_SPECIAL = re.compile(r"[\\`*\[\]~$]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# What starts a block at a line's start (heading, list item, rule, numbered item); ``>`` an entity.
_BLOCK_START = re.compile(r"(?:#{1,6}|[-+=]+|\d{1,9}[.)])(?=\s|$)")
# Control characters (ESC starts a terminal's escape sequences: colour, clear-screen, a window
# title) and the invisible marks that reorder text (U+202E shows ``exe.txt`` as ``txt.exe``).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_BACKTICKS = re.compile(r"`+")


class Markdown(str):
    """Text already in markdown (a link, ``**bold**``), composed by a renderer of escaped parts."""


def one_line(value: Any) -> str:
    return _CONTROL.sub("\ufffd", " ".join(str(value).splitlines()))


def inline(value: Any) -> str:
    text = html.escape(one_line(value), quote=False)
    text = _SPECIAL.sub(lambda m: "\\" + m.group(), text)
    start = _BLOCK_START.match(text)
    return f"{text[: start.end() - 1]}\\{text[start.end() - 1 :]}" if start else text


def code_span(value: Any) -> str:
    text = one_line(value)
    fence = "`" * (max(map(len, _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fenced(text: str, info: str = "") -> str:
    """Control characters as U+FFFD: the page may be read with ``cat`` in a terminal."""
    text = "\n".join(_CONTROL.sub("\ufffd", line) for line in text.splitlines())
    fence = "`" * max(3, max(map(len, _BACKTICKS.findall(text)), default=0) + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def listed(parts: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``: parts of a sentence."""
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def folded(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


def terminal(value: Any) -> str:
    """Control characters (an escape sequence's ESC) and marks that reorder text as U+FFFD."""
    return _CONTROL.sub("\ufffd", str(value))
