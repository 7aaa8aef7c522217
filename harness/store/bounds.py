"""What a stored document may hold: the one bound the writers and every reader of a result share.

A reader refuses what no measurement gives (a file over ``MAX_DOCUMENT_BYTES``, nesting deeper than
``MAX_DEPTH``, a number past ``MAX_MAGNITUDE``, an integer over ``MAX_INTEGER_DIGITS`` digits, half
a surrogate pair); a script's output reaches a result too, so the writer checks each document
(``document_problem``) and ``fit`` drops what would break them, with a note.  Standard library only:
the case process imports it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

# A result of 1,000,000 raw samples is about 55 MB; a 4 GB file must not be read whole.
MAX_DOCUMENT_BYTES = 64 * 2**20
# The harness writes documents about 10 levels deep; the C decoder recurses, so depth is bounded.
MAX_DEPTH = 64
# Nanoseconds since 1970 fit well below this; a count or a time beyond it is no measurement.
MAX_MAGNITUDE = 1e19
# The integers below MAX_MAGNITUDE have at most this many digits.
MAX_INTEGER_DIGITS = 19
# Python refuses to turn an integer of more digits than this into text (``sys.int_info``).
_DIGITS_PYTHON_PRINTS = 4000


DROPPED = object()  # a value ``fit`` left out: the container holding it loses the entry


def _digits(value: int) -> str:
    if abs(value) >= 10**_DIGITS_PYTHON_PRINTS:
        return f"over {_DIGITS_PYTHON_PRINTS:,}"
    return f"{len(str(abs(value))):,}"


def number_problem(value: int | float) -> str | None:
    """Why a reader would refuse ``value`` (a bool is never a number here), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if abs(value) >= 10**MAX_INTEGER_DIGITS:
            return (
                f"an integer of {_digits(value)} digits is out of range (at most "
                f"{MAX_INTEGER_DIGITS})"
            )
        return None
    if not math.isfinite(value):
        return f"{value} is not a number a result can hold"
    if abs(value) > MAX_MAGNITUDE:
        return f"{value:.3g} is out of range (at most {MAX_MAGNITUDE:g} in magnitude)"
    return None


def string_problem(text: str) -> str | None:
    """Why a reader would refuse ``text``: half a surrogate pair, which no page could encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "holds half a UTF-16 surrogate pair (no character)"
    return None


def repaired(text: str) -> str:
    """``text`` with each half surrogate pair shown as U+FFFD, the replacement character."""
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


def document_problem(document: Any) -> str | None:
    """The first thing in ``document`` a reader would refuse, by its path; None if none.  Walked
    without recursion, so a document nested thousands deep is named, not a RecursionError."""
    stack: list[tuple[Any, str, int]] = [(document, "", 1)]
    while stack:
        value, where, depth = stack.pop()
        problem = _value_problem(value, depth)
        if problem:
            return f"{where or 'the document'}: {problem}"
        if isinstance(value, dict):
            for key, item in value.items():
                key_problem = string_problem(key) if isinstance(key, str) else None
                if key_problem:
                    return f"{where or 'the document'}: a key {key_problem}"
                stack.append((item, f"{where}.{key}" if where else str(key), depth + 1))
        elif isinstance(value, list | tuple):
            stack.extend((item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value))
    return None


def _value_problem(value: Any, depth: int) -> str | None:
    if isinstance(value, dict | list | tuple) and depth > MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH} levels"
    if isinstance(value, int | float):
        return number_problem(value)
    return string_problem(value) if isinstance(value, str) else None


def fit(value: Any, where: str, note: Callable[[str], None], depth: int = 1) -> Any:
    """``value`` within the bounds: a number or container a reader would refuse is ``DROPPED``, half
    surrogate pairs ``repaired``; each change passed to ``note``, named by ``where``."""
    problem = _value_problem(value, depth)
    if isinstance(value, str):
        if problem:
            note(f"{where}: {problem}; shown with U+FFFD in its place")
            return repaired(value)
        return value
    if problem:
        note(f"{where}: {problem}; left out")
        return DROPPED
    if isinstance(value, dict):
        kept = {}
        for key, item in value.items():
            name = key if not isinstance(key, str) or not string_problem(key) else repaired(key)
            fitted = fit(item, f"{where}.{name}" if where else str(name), note, depth + 1)
            if fitted is not DROPPED:
                kept[name] = fitted
        return kept
    if isinstance(value, list | tuple):
        items = (fit(item, f"{where}[{i}]", note, depth + 1) for i, item in enumerate(value))
        return [item for item in items if item is not DROPPED]
    return value
