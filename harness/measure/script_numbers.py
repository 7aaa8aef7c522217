"""A plain script's own numbers: every field of a JSON object it prints on a line of its own
(``json.FIELD``, docs/scripts.md), read as written.

A number a result can hold is a figure (an integer exactly, to 19 digits; the median of several
lines); the values *as written* (``printed``) are kept where a figure cannot say them (a string,
a boolean, null, NaN, infinity, a number past a result's range, several values in a process).
Nested objects and lists are facts. Lines are untrusted, read within bounds; what is left out is
said in ``skipped``, the result's notes.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
from dataclasses import dataclass, field

from harness.host.environment import REDACTED, SECRET_NAME, scrub, scrub_value
from harness.store.bounds import number_problem, repaired

FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
LINE_CHARS = 65536
FACT_CHARS = 200
MAX_FIELDS = 200
# The values of one field one process keeps as written: enough to tell a value from one that varies
# within the process (a number printed per step keeps its figure, the median, for a cost).
MAX_PRINTED = 8


class _Written(float):
    """A JSON number with a fraction or an exponent, or a constant (NaN...), with its text: a float
    of ``1e400`` is infinite, the text is what was printed."""

    text: str

    def __new__(cls, text: str) -> _Written:
        written = super().__new__(cls, text)
        written.text = text
        return written


@dataclass
class ScriptNumbers:
    values: dict[str, float] = field(default_factory=dict)  # each field's figure, if it has one
    # each field's values as written (JSON text), where the figure cannot say them (``literal``)
    printed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    facts: dict[str, str] = field(default_factory=dict)  # nested objects and lists
    skipped: list[str] = field(default_factory=list)  # fields left out, with why


def _objects(stdout: str, skipped: list[str]) -> list[dict[str, object]]:
    found = []
    for number, line in enumerate(stdout.splitlines(), 1):
        text = line.strip()
        if not (text.startswith("{") and text.endswith("}")):
            continue
        if len(text) > LINE_CHARS:
            over = f"over the {LINE_CHARS:,} a JSON line may have"
            skipped.append(f"line {number}: {len(text):,} characters, {over}")
            continue
        try:
            parsed = json.loads(text, parse_float=_Written, parse_constant=_Written)
        except RecursionError:
            skipped.append(f"line {number}: nested deeper than a JSON line may be read")
            continue
        except ValueError as exc:  # not JSON (a dict's repr), or an integer of thousands of digits
            if "digits" in str(exc):
                skipped.append(f"line {number}: {str(exc).split(':')[0]}")
            continue
        if isinstance(parsed, dict):
            found.append(parsed)
    return found


def literal(value: object) -> tuple[str, int | float | None] | None:
    """A printed value as written (JSON text) and its figure where a result can hold one: an integer
    exactly, a number in range as Python's shortest repr; None for a nested object or a list (a
    fact).  A number past a float's range (``1e400``) keeps its text; one of more than
    ``FACT_CHARS`` characters is refused (ValueError)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value), None
    text = str(value) if isinstance(value, int) else getattr(value, "text", "")
    if len(text) > FACT_CHARS:  # a number of more digits than any measurement or checksum has
        raise ValueError(f"a number of {len(text):,} characters (at most {FACT_CHARS})")
    if isinstance(value, int):
        return text, None if number_problem(value) else value
    if isinstance(value, _Written):
        number = float(value)
        underflow = number == 0 and re.search(r"[1-9]", text.lower().partition("e")[0])
        if not math.isfinite(number) or underflow:  # NaN, ±Infinity, 1e400, 1e-400 (not 0)
            return text, None
        return repr(number), None if number_problem(number) else number
    if isinstance(value, str):
        text = repaired(scrub(value))
        if len(text) > FACT_CHARS:  # cut, its digest kept: two that differ past the cut still do
            digest = hashlib.sha256(text.encode()).hexdigest()[:12]
            text = f"{text[:FACT_CHARS]}… ({len(text):,} characters, sha256 {digest})"
        return json.dumps(text, ensure_ascii=False), None
    return None


def script_numbers(stdout: str) -> ScriptNumbers:
    """The figures, values and facts of every JSON object line in ``stdout``, as first printed."""
    written: dict[str, dict[str, None]] = {}  # every distinct value of each field, in order
    numbers: dict[str, list[int | float]] = {}
    out = ScriptNumbers()
    past_bound: list[str] = []
    for obj in _objects(stdout, out.skipped):
        for name, value in obj.items():
            try:
                found = literal(value)
            except ValueError as why:
                out.skipped.append(f"{repaired(scrub(name[:40]))}: {why}; left out")
                continue
            known = name in written or name in out.facts
            if not FIELD_NAME.fullmatch(name) or scrub(name) != name:  # a token is no name
                out.skipped.append(f"{repaired(scrub(name[:40]))!r}: not a name a metric can have")
            elif not known and len(written) + len(out.facts) >= MAX_FIELDS:
                past_bound.append(name)
            elif found is None:
                if not known:
                    out.facts[name] = _fact(value, name, out.skipped)
            else:
                if name not in written:  # a value where a nested one was printed: the value wins
                    out.facts.pop(name, None)
                    written[name] = {}
                text, number = found
                if SECRET_NAME.search(name) and isinstance(value, str):
                    text = json.dumps(REDACTED)
                written[name][text] = None
                if number is not None:
                    numbers.setdefault(name, []).append(number)
    if past_bound:
        names = list(dict.fromkeys(past_bound))
        shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
        out.skipped.append(f"{len(names)} fields past the first {MAX_FIELDS} left out ({shown})")
    for name, texts in written.items():
        figures = numbers.get(name, [])
        if len(set(figures)) == 1:
            out.values[name] = figures[0]  # as written: an integer stays exact
        elif figures:
            out.values[name] = statistics.median(float(figure) for figure in figures)
        if len(texts) > 1 or len(set(figures)) != 1:
            out.printed[name] = _kept(list(texts))
    return out


def _kept(texts: list[str]) -> tuple[str, ...]:
    """The first ``MAX_PRINTED`` values, then how many and their digest: later ones still differ."""
    if len(texts) <= MAX_PRINTED:
        return tuple(texts)
    digest = hashlib.sha256("\n".join(texts).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return (*texts[:MAX_PRINTED], f"… {len(texts):,} values, sha256 {digest}")


def _fact(value: object, name: str, skipped: list[str]) -> str:
    """A nested object or list as text, scrubbed and cut at ``FACT_CHARS``."""
    try:
        text = json.dumps(scrub_value(value), ensure_ascii=False, default=str)
    except RecursionError:
        skipped.append(f"{name}: nested deeper than a fact may be written")
        return "…"
    return text if len(text) <= FACT_CHARS else text[:FACT_CHARS] + "…"
