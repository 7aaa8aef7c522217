"""Facts from optimized HLO: exact evidence that needs no statistics. Parsed by structure, never by
``op_name`` metadata, whose paths change between releases; the opcode is found by skipping the
balanced shape after ``=`` (shapes nest, and older releases print operand types).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(.*)$")
_OPCODE = re.compile(r"\s*([a-z][\w\-]*)\(")
_BACKEND_CONFIG = re.compile(r"backend_config=(\{.*\})\s*$")
COLLECTIVES = ("all-reduce", "all-gather", "all-to-all", "collective-permute")


def _skip_shape(rhs: str) -> str:
    """Drop the result shape (``f32[8,8]{1,0}`` or a parenthesised tuple) before the opcode."""
    if rhs.startswith("("):
        depth = 0
        for i, char in enumerate(rhs):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0:
                return rhs[i + 1 :]
        return ""
    return rhs.partition(" ")[2]


def opcodes(hlo_text: str) -> list[tuple[str, str]]:
    """(opcode, instruction line) for every instruction of every computation."""
    matched = ((_INSTRUCTION.match(line), line) for line in hlo_text.splitlines())
    found = ((_OPCODE.match(_skip_shape(m.group(1).strip())), line) for m, line in matched if m)
    return [(opcode.group(1), line) for opcode, line in found if opcode]


def known_trip_count(line: str) -> int | None:
    if not (config := _BACKEND_CONFIG.search(line)):
        return None
    try:
        parsed = json.loads(config.group(1))
    except json.JSONDecodeError:
        return None
    count = parsed.get("known_trip_count", {}).get("n") if isinstance(parsed, dict) else None
    return int(count) if count is not None else None


def structure(hlo_text: str) -> dict[str, Any]:
    instructions = opcodes(hlo_text)
    counts = Counter(op for op, _ in instructions)
    return {
        "instructions": len(instructions),
        "while_loops": counts["while"],
        "known_trip_counts": [known_trip_count(line) for op, line in instructions if op == "while"],
        "fusions": counts["fusion"],
        "conditionals": counts["conditional"],
        "selects": counts["select"],
        "collectives": sum(counts[op] for op in COLLECTIVES),
    }


def cost(compiled: Any) -> dict[str, float | None]:
    """flops and bytes accessed (``cost_analysis()``: dicts through 0.4.38); None: not known."""
    try:
        analysis = compiled.cost_analysis()
    except Exception:  # not every backend implements it; absence is a fact, not a failure
        analysis = None
    if isinstance(analysis, list):
        analysis = analysis[0] if analysis else None
    analysis = analysis or {}
    return {fact: known_cost(analysis.get(key)) for fact, key in COST_FIGURES.items()}


# ``cost_analysis()``'s figures, by the name a fact takes.
COST_FIGURES = {"flops": "flops", "bytes_accessed": "bytes accessed"}


def known_cost(value: Any) -> float | None:
    """A cost figure, None where XLA does not know it: missing, or negative (XLA counts an
    instruction it cannot cost, a custom call such as a cuBLAS matmul on GPU, as -1, and adds those
    up: a chain of four matmuls reads -4)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        return None
    return float(value)


# ``memory_analysis()``'s sizes, by the name a fact takes: what XLA planned, exact on every run.
MEMORY_SIZES = {
    "temp_bytes": "temp_size_in_bytes",
    "argument_bytes": "argument_size_in_bytes",
    "output_bytes": "output_size_in_bytes",
    "generated_code_bytes": "generated_code_size_in_bytes",
}


def memory(compiled: Any) -> dict[str, int]:
    """XLA's planned buffer sizes (``memory_analysis()``); none where not given (a fact)."""
    try:
        analysis = compiled.memory_analysis()
    except Exception:
        return {}
    sizes = {fact: getattr(analysis, attribute, None) for fact, attribute in MEMORY_SIZES.items()}
    return {fact: size for fact, size in sizes.items() if isinstance(size, int) and size >= 0}


def facts(compiled: Any) -> dict[str, Any]:
    return {**structure(compiled.as_text()), **cost(compiled), **memory(compiled)}
