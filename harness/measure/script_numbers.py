"""A plain script's own numbers: every numeric field of a JSON object it prints on a line of its
own (``json.FIELD``, docs/scripts.md), the median where several lines print it; a boolean is 1 or 0
(a flag that flips is a change); strings and nested objects are facts. Lines are untrusted input,
read within bounds (``LINE_CHARS``, ``MAX_FIELDS``, ``store.bounds``); whatever is left out is said
in ``skipped``, which the result keeps as its notes.
"""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field

from harness.host.environment import scrub_value
from harness.store.bounds import number_problem

FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
LINE_CHARS = 65536
FACT_CHARS = 200
MAX_FIELDS = 200


@dataclass
class ScriptNumbers:
    values: dict[str, float] = field(default_factory=dict)
    facts: dict[str, str] = field(default_factory=dict)
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
            parsed = json.loads(text)
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


def script_numbers(stdout: str) -> ScriptNumbers:
    """The numbers and facts of every JSON object line in ``stdout``, in the order first printed."""
    numbers: dict[str, list[float]] = {}
    out = ScriptNumbers()
    past_bound: list[str] = []
    for obj in _objects(stdout, out.skipped):
        for name, value in obj.items():
            value = float(value) if isinstance(value, bool) else value
            if not FIELD_NAME.fullmatch(name):
                out.skipped.append(f"{name[:40]!r}: not a name a metric can have")
            elif not isinstance(value, int | float):
                if name in numbers or name in out.facts:
                    continue
                if len(out.facts) + len(numbers) >= MAX_FIELDS:
                    past_bound.append(name)
                    continue
                try:
                    text = value if isinstance(value, str) else json.dumps(scrub_value(value))
                except RecursionError:
                    out.skipped.append(f"{name}: nested deeper than a fact may be written")
                    continue
                out.facts[name] = text if len(text) <= FACT_CHARS else text[:FACT_CHARS] + "…"
            elif number_problem(value):  # checked before float(): 10**400 overflows it
                out.skipped.append(f"{name}: {number_problem(value)}")
            elif name in numbers or len(numbers) + len(out.facts) < MAX_FIELDS:
                numbers.setdefault(name, []).append(float(value))
                out.facts.pop(name, None)
            else:
                past_bound.append(name)
    if past_bound:
        names = list(dict.fromkeys(past_bound))
        shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
        out.skipped.append(f"{len(names)} fields past the first {MAX_FIELDS} left out ({shown})")
    out.values = {name: statistics.median(values) for name, values in numbers.items()}
    return out
