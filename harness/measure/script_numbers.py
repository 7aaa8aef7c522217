"""A plain script's own numbers: every numeric field of a JSON object it prints on a line of its own.

``{"reg_ms": 12.5, "jax": "0.5.1"}`` on a line of standard output gives the metric
``json.reg_ms`` (12.5 for this process) and the fact ``jax: 0.5.1``.  A field printed on
several lines is the median of its values in that process.  Booleans, non-finite numbers,
nested objects and names that could not be a metric name are left out (nested values are
facts, as text, when short).  Lines are read as untrusted input: long ones are skipped.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass, field

JSON_PROGRAM = "json"  # the metric name's first part: json.<field>
FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
LINE_CHARS = 65536
FACT_CHARS = 200
MAX_FIELDS = 200


@dataclass
class ScriptNumbers:
    values: dict[str, float] = field(default_factory=dict)  # field → this process's figure (median over lines)
    facts: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # fields left out, with why


def _objects(stdout: str) -> list[dict[str, object]]:
    found = []
    for line in stdout.splitlines():
        text = line.strip()
        if not (text.startswith("{") and text.endswith("}")) or len(text) > LINE_CHARS:
            continue
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            continue
        if isinstance(parsed, dict):
            found.append(parsed)
    return found


def script_numbers(stdout: str) -> ScriptNumbers:
    """The numbers and facts of every JSON object line in ``stdout``, in the order first printed."""
    numbers: dict[str, list[float]] = {}
    out = ScriptNumbers()
    for obj in _objects(stdout):
        for name, value in obj.items():
            if not FIELD_NAME.fullmatch(name):
                out.skipped.append(f"{name[:40]!r}: not a name a metric can have")
            elif isinstance(value, bool) or not isinstance(value, int | float):
                if name not in numbers and len(out.facts) < MAX_FIELDS:
                    text = value if isinstance(value, str) else json.dumps(value)
                    out.facts[name] = text if len(text) <= FACT_CHARS else text[:FACT_CHARS] + "…"
            elif abs(value) > 1e300 or not math.isfinite(value):  # compared before float(): 10**400 overflows it
                out.skipped.append(f"{name}: {str(value)[:40]} is not a finite number")
            elif name in numbers or len(numbers) < MAX_FIELDS:
                numbers.setdefault(name, []).append(float(value))
                out.facts.pop(name, None)
    out.values = {name: statistics.median(values) for name, values in numbers.items()}
    return out
