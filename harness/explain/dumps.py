"""What XLA compiled on each release of a step, and how it differs: read from XLA's own dumps.

One extra process per release (outside the timed ones, its result thrown away) runs the case or script
with ``XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text``: XLA writes every module it compiles, before
optimisation (``*.before_optimizations.txt``), after (``*.cpu_after_optimizations.txt``, or the GPU's) and
its buffer assignment (``*-buffer-assignment.txt``).  Modules are matched across the two releases by name
(``jit_two_scans``; the n-th of a name compiled n times with the n-th), and each is summed up: its
instructions by opcode before and after optimisation, fusions, loops, custom calls by target, and the
bytes of temporary buffers.

The hint follows what JAX's maintainers ask for: the same program before optimisation but a different
one after points at XLA's compiler; a different one before, at JAX's tracing and lowering.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

# XLA's dump files: module_0005.jit_f.before_optimizations.txt, module_0005.jit_f.cpu_after_optimizations.txt,
# module_0005.jit_f.sm_9.0_gpu_after_optimizations-buffer-assignment.txt …
DUMP_FILE = re.compile(
    r"^module_(?P<number>\d+)\.(?P<name>.+?)\."
    r"(?P<stage>before_optimizations|(?:[\w.]+_)?after_optimizations(?P<buffers>-buffer-assignment)?)\.txt$"
)
INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?[\w.\-]+\s*=\s*.+?\s(?P<opcode>[a-z][a-z0-9\-]*)\(")
CUSTOM_CALL_TARGET = re.compile(r'custom_call_target="(?P<target>[^"]+)"')
TEMP_ALLOCATION = re.compile(r"^allocation \d+: size (?P<size>\d+), .*preallocated-temp")
TOTAL_BYTES = re.compile(r"^Total bytes used: (?P<size>\d+)")
# Modules that only move data in and out, compiled for every program whatever it does.
TRIVIAL = re.compile(
    r"^jit_(convert_element_type|broadcast_in_dim|_?iota|_?reshape|_?squeeze|concatenate)$"
)
SHOWN_OPCODES = 6
SHOWN_MODULES = 3


def dump_flags(folder: Path) -> list[str]:
    """The XLA flags that dump every compiled module into ``folder`` as text."""
    return [f"--xla_dump_to={folder}", "--xla_dump_hlo_as_text"]


@dataclass
class Module:
    """One compiled module, summed up."""

    name: str
    before: Counter[str] = field(
        default_factory=Counter
    )  # instructions by opcode, before optimisation
    after: Counter[str] = field(default_factory=Counter)  # … after
    custom_calls: Counter[str] = field(default_factory=Counter)  # after optimisation, by target
    temp_bytes: int | None = None
    total_bytes: int | None = None

    @property
    def fusions(self) -> int:
        return self.after["fusion"]

    @property
    def loops(self) -> int:
        return self.after["while"]


def opcodes(text: str) -> Counter[str]:
    """The instructions of an HLO module's text, by opcode."""
    return Counter(
        match["opcode"] for line in text.splitlines() if (match := INSTRUCTION.match(line))
    )


def read_dump(folder: Path) -> dict[str, Module]:
    """The modules XLA dumped into ``folder``, by name; a name compiled more than once (``jit__lambda_`` is
    every lambda's) is told apart by its turn, ``jit__lambda_ #2``, so the n-th meets the n-th."""
    matches = [
        (path, m)
        for path in sorted(folder.glob("module_*.txt"))
        if (m := DUMP_FILE.match(path.name))
    ]
    matches = [(path, m) for path, m in matches if not TRIVIAL.match(m["name"])]
    numbers: dict[str, set[int]] = {}
    for _, match in matches:
        numbers.setdefault(match["name"], set()).add(int(match["number"]))
    found: dict[str, Module] = {}
    for path, match in matches:
        turns = sorted(numbers[match["name"]])
        turn = turns.index(int(match["number"])) + 1
        name = match["name"] if len(turns) == 1 else f"{match['name']} #{turn}"
        module = found.setdefault(name, Module(name))
        text = path.read_text(errors="replace")
        if match["buffers"]:
            temps = [
                int(m["size"]) for line in text.splitlines() if (m := TEMP_ALLOCATION.match(line))
            ]
            module.temp_bytes = sum(temps)
            total = next(
                (int(m["size"]) for line in text.splitlines() if (m := TOTAL_BYTES.match(line))),
                None,
            )
            module.total_bytes = total
        elif match["stage"] == "before_optimizations":
            module.before = opcodes(text)
        else:
            module.after = opcodes(text)
            module.custom_calls = Counter(m["target"] for m in CUSTOM_CALL_TARGET.finditer(text))
    return found


@dataclass(frozen=True)
class ModuleChange:
    """One module of a step's two releases, compared."""

    name: str
    old: Module
    new: Module

    @property
    def same_before(self) -> bool:
        return self.old.before == self.new.before

    @property
    def same_after(self) -> bool:
        return (self.old.after, self.old.custom_calls) == (self.new.after, self.new.custom_calls)

    def hint(self) -> str:
        """Where the difference starts, in the words JAX's maintainers use to route an issue."""
        if not self.same_before and not self.same_after:
            return "a different program before optimisation: JAX's tracing and lowering changed it"
        if not self.same_before:
            return (
                "a different program before optimisation but the same after: what runs it changed, "
                "not what was compiled"
            )
        if not self.same_after:
            return "the same program before optimisation, a different one after: XLA's compiler changed it"
        return "the same program before and after optimisation: what runs it changed, not what was compiled"

    def text(self) -> str:
        """Its changes in a line (opcodes that moved, custom calls, temporary bytes), and the hint."""
        parts = []
        ops = set(self.old.after) | set(self.new.after)
        # A custom call is named by its target below; get-tuple-element only unpacks what an op returned.
        moved = {
            op
            for op in ops - {"custom-call", "get-tuple-element"}
            if self.old.after[op] != self.new.after[op]
        }
        for op in sorted(moved, key=lambda op: -abs(self.new.after[op] - self.old.after[op]))[
            :SHOWN_OPCODES
        ]:
            parts.append(f"{op} {self.old.after[op]} → {self.new.after[op]}")
        targets = set(self.old.custom_calls) | set(self.new.custom_calls)
        for target in sorted(
            t for t in targets if self.old.custom_calls[t] != self.new.custom_calls[t]
        ):
            parts.append(
                f"custom call {target} {self.old.custom_calls[target]} → {self.new.custom_calls[target]}"
            )
        if self.old.temp_bytes != self.new.temp_bytes:
            parts.append(f"temporary bytes {self.old.temp_bytes} → {self.new.temp_bytes}")
        counts = f"{sum(self.old.before.values())} → {sum(self.new.before.values())} instructions"
        before = "same" if self.same_before else counts
        changes = "; ".join(parts) or "no count moved"
        return f"before optimisation {before}; after: {changes}; {self.hint()}"


def compare_dumps(old: dict[str, Module], new: dict[str, Module]) -> list[ModuleChange]:
    """The modules both releases compiled, largest first, those that differ before those that do not."""
    shared = [ModuleChange(name, old[name], new[name]) for name in sorted(set(old) & set(new))]
    return sorted(
        shared, key=lambda c: (c.same_before and c.same_after, -sum(c.new.after.values()))
    )


@dataclass(frozen=True)
class CompiledAnswer:
    """What a step's two releases compiled, compared, and where their dumps are kept."""

    before: str
    after: str
    changes: list[ModuleChange]
    folder: str = ""  # as the answer names it, beside the page: one folder per release under it
    problem: str = ""  # why there is no comparison

    def lines(self) -> list[str]:
        """A line on what was compared and where the dumps are, then one per module (the first few)."""
        if self.problem:
            return [f"compiled programs not compared: {self.problem}"]
        if not self.changes:
            return [
                f"compiled programs: no module of {self.before} has a namesake in {self.after}'s dump"
            ]
        head = (
            f"compiled programs of {self.before} and {self.after} (XLA's dumps in `{self.folder}<release>/`): "
            f"{len(self.changes)} module(s) compared"
        )
        differing = [c for c in self.changes if not (c.same_before and c.same_after)]
        if not differing:
            return [
                f"{head}, the same before and after optimisation: what runs them changed, not what was compiled"
            ]
        alike: dict[str, list[str]] = {}  # every lambda's module changed alike is said once
        for change in differing:
            alike.setdefault(change.text(), []).append(change.name)
        shown = [
            f"compiled {', '.join(names)}: {text}"
            for text, names in list(alike.items())[:SHOWN_MODULES]
        ]
        more = sum(len(names) for names in list(alike.values())[SHOWN_MODULES:])
        return [
            f"{head}, {len(differing)} differ" + (f", {more} not shown" if more else ""),
            *shown,
        ]

    def data(self) -> dict[str, object]:
        return {
            "before": self.before,
            "after": self.after,
            "folder": self.folder,
            "problem": self.problem,
            "modules": [
                {
                    "name": c.name,
                    "same_before_optimisation": c.same_before,
                    "same_after_optimisation": c.same_after,
                    "hint": c.hint(),
                    "opcodes_after": [dict(c.old.after), dict(c.new.after)],
                    "custom_calls": [dict(c.old.custom_calls), dict(c.new.custom_calls)],
                    "temp_bytes": [c.old.temp_bytes, c.new.temp_bytes],
                }
                for c in self.changes
            ],
        }
