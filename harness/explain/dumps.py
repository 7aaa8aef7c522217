"""What XLA compiled on each release of a step, and how it differs: read from XLA's own dumps.

One extra process per release runs with ``--xla_dump_to=DIR --xla_dump_hlo_as_text``: XLA writes
every module before and after optimisation and its buffer assignment. Modules are matched by name
(the n-th of a name with the n-th) and summed up: opcodes, fusions, custom calls, temporary bytes.
A script that sets ``XLA_FLAGS`` itself replaces the dump flags: the comparison is then void for it.
The hint follows JAX's maintainers: the same program before optimisation but a different one after
points at XLA's compiler; a different one before, at JAX's tracing and lowering.
"""

from __future__ import annotations

import dataclasses
import difflib
import itertools
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.measure.script_process import lost_in
from harness.measure.sides import Side
from harness.metric_names import measures
from harness.steps.evidence import Found, Step, StepSides
from harness.store.files import replace_file

VALUE = "value"  # what a step's value or presence is read as (its costs: ``measures``)
# XLA's dump files: module_0005.jit_f.before_optimizations.txt,
# module_0005.jit_f.cpu_after_optimizations.txt,
# module_0005.jit_f.sm_9.0_gpu_after_optimizations-buffer-assignment.txt …
DUMP_FILE = re.compile(
    r"^module_(?P<number>\d+)\.(?P<name>.+?)\."
    r"(?P<stage>before_optimizations|(?:[\w.]+_)?after_optimizations(?P<buffers>-buffer-assignment)?)\.txt$"
)
INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?[\w.\-]+\s*=\s*.+?\s(?P<opcode>[a-z][a-z0-9\-]*)\(")
# A fusion's kind (kLoop, kInput, kOutput, kCustom) and a custom one's backend, as its config says.
FUSION_KIND = re.compile(r"\sfusion\(.*\bkind=(?P<kind>k\w+)")
FUSION_BACKEND = re.compile(r'"(?:kind|name)":\s*"(?P<backend>__[^"]+)"')
# What the text diff of two optimised modules leaves out: where each op came from, and the numbers
# XLA gives instructions (``dot.13``), which shift with any change before them.
METADATA = re.compile(r",?\s*metadata=\{[^}]*\}")
NUMBERED = re.compile(r"\b(%?[A-Za-z_][\w\-]*)\.\d+\b")
MAX_DIFF_LINES = 400  # of one module's diff kept beside the answer
CUSTOM_CALL_TARGET = re.compile(r'custom_call_target="(?P<target>[^"]+)"')
TEMP_ALLOCATION = re.compile(r"^allocation \d+: size (?P<size>\d+), .*preallocated-temp")
# Modules that only move data in and out, compiled for every program whatever it does.
TRIVIAL = re.compile(
    r"^jit_(convert_element_type|broadcast_in_dim|_?iota|_?reshape|_?squeeze|concatenate)$"
)
# A module's first line gives its parameters' and results' types:
# ``entry_computation_layout={(f32[16,16]{1,0}) ->f32[16,16]{1,0}}``; each type is its element type
# and dimensions, its layout (``{1,0}``) aside.
ENTRY_LAYOUT = "entry_computation_layout={"
SHAPE = re.compile(r"\b[a-z][a-z0-9]*\[[0-9,]*\]")


def dump_flags(folder: Path) -> list[str]:
    return [f"--xla_dump_to={folder}", "--xla_dump_hlo_as_text"]


@dataclass
class Module:
    """One compiled module, summed up: its instructions by opcode before and after optimisation."""

    name: str
    before: Counter[str] = field(default_factory=Counter)
    after: Counter[str] = field(default_factory=Counter)
    custom_calls: Counter[str] = field(default_factory=Counter)  # after optimisation, by target
    fusion_kinds: Counter[str] = field(default_factory=Counter)  # kLoop, kCustom(__xnn_fusion) …
    temp_bytes: int | None = None
    optimised: tuple[str, ...] = ()  # the optimised module's text, normalised (``normalised``)
    shapes: tuple[str, ...] = ()

    def facts(self) -> tuple[object, ...]:
        """What XLA made of the module: a difference in any is a different compiled program."""
        return (self.shapes, self.after, self.custom_calls, self.fusion_kinds, self.temp_bytes)


def opcodes(text: str) -> Counter[str]:
    return Counter(
        match["opcode"] for line in text.splitlines() if (match := INSTRUCTION.match(line))
    )


def fusion_kinds(text: str) -> Counter[str]:
    found: Counter[str] = Counter()
    for line in text.splitlines():
        if match := FUSION_KIND.search(line):
            backend = FUSION_BACKEND.search(line)
            found[match["kind"] + (f"({backend['backend']})" if backend else "")] += 1
    return found


def signature(text: str) -> tuple[str, ...]:
    """The types of a module's parameters and results (``f32[96,96]``), from its first line."""
    head = text.partition("\n")[0]
    start = head.find(ENTRY_LAYOUT)
    if start < 0:
        return ()
    depth, end = 0, len(head)
    for index in range(start + len(ENTRY_LAYOUT) - 1, len(head)):
        depth += {"{": 1, "}": -1}.get(head[index], 0)
        if depth == 0:
            end = index
            break
    return tuple(SHAPE.findall(head[start:end]))


def normalised(text: str) -> tuple[str, ...]:
    """An optimised module's lines without metadata and instruction numbers: what a diff shows."""
    return tuple(NUMBERED.sub(r"\1", METADATA.sub("", line)).rstrip() for line in text.splitlines())


def read_dump(folder: Path) -> dict[str, Module]:
    """The modules XLA dumped into ``folder``, by name (one compiled again: ``jit__lambda_ #2``)."""
    matches = [
        (path, m)
        for path in sorted(folder.glob("module_*.txt"))
        if (m := DUMP_FILE.match(path.name)) and not TRIVIAL.match(m["name"])
    ]
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
            temps = (m["size"] for line in text.splitlines() if (m := TEMP_ALLOCATION.match(line)))
            module.temp_bytes = sum(map(int, temps))
        elif match["stage"] == "before_optimizations":
            module.before = opcodes(text)
            module.shapes = module.shapes or signature(text)
        else:
            module.after = opcodes(text)
            module.shapes = signature(text) or module.shapes
            module.custom_calls = Counter(m["target"] for m in CUSTOM_CALL_TARGET.finditer(text))
            module.fusion_kinds = fusion_kinds(text)
            module.optimised = normalised(text)
    return found


@dataclass(frozen=True)
class ModuleChange:
    name: str
    old: Module
    new: Module

    @property
    def same_shapes(self) -> bool:
        return self.old.shapes == self.new.shapes

    @property
    def same_before(self) -> bool:
        return self.same_shapes and self.old.before == self.new.before

    @property
    def same_after(self) -> bool:
        """The same compiled program: every fact alike; its text may differ in an annotation."""
        return self.old.facts() == self.new.facts()

    @property
    def same_text(self) -> bool:
        return self.old.optimised == self.new.optimised

    def diff(self) -> list[str]:
        lines = difflib.unified_diff(
            self.old.optimised, self.new.optimised, "before", "after", lineterm="", n=1
        )
        return list(itertools.islice(lines, MAX_DIFF_LINES))

    def hint(self) -> str:
        """Where the difference starts, in the words JAX's maintainers use to route an issue."""
        if not self.same_shapes:
            old, new = (", ".join(m.shapes) or "none read" for m in (self.old, self.new))
            return (
                f"a program of other shapes or types ({old} against {new}): the script compiled it "
                "for other inputs, so the two are not one program compiled twice"
            )
        return HINTS[self.same_before, self.same_after]


# ``hint`` of a program of the same shapes, by (the same before optimisation, the same after).
DIFFERENT, RUNS_IT = "a different program", "what runs it changed, not what was compiled"
HINTS = {
    (False, False): f"{DIFFERENT} before optimisation: JAX's tracing and lowering changed it",
    (False, True): f"{DIFFERENT} before optimisation but the same after: {RUNS_IT}",
    (True, False): "the same program before optimisation, a different one after: XLA's compiler "
    "changed it",
    (True, True): f"the same program before and after optimisation: {RUNS_IT}",
}


def compare_dumps(old: dict[str, Module], new: dict[str, Module]) -> list[ModuleChange]:
    shared = [ModuleChange(name, old[name], new[name]) for name in sorted(set(old) & set(new))]
    return sorted(
        shared, key=lambda c: (c.same_before and c.same_after, -sum(c.new.after.values()))
    )


@dataclass(frozen=True)
class CompiledAnswer:
    before: str
    after: str
    changes: list[ModuleChange]
    folder: str = ""  # as the answer names it, beside the page: one folder per release under it
    problem: str = ""  # why there is no comparison
    void: tuple[str, ...] = ()
    kind: str = "compiled"
    settles: bool = False
    # What the step's metrics measure (``metric_names.measures``; "value" for a value or presence):
    # the programs are read for those alone, a memory step by their temporary bytes.
    reads: tuple[str, ...] = ()

    def temp_bytes(self) -> tuple[int, int] | None:
        """Each release's temporary bytes of every module compared; None where one was not read."""
        sums = [0, 0]
        for change in self.changes:
            for side, module in enumerate((change.old, change.new)):
                if module.temp_bytes is None:
                    return None
                sums[side] += module.temp_bytes
        return sums[0], sums[1]

    def data(self) -> dict[str, Any]:
        plain = ("kind", "before", "after", "folder", "problem")
        return {
            **{name: getattr(self, name) for name in plain},
            "void": list(self.void),
            "reads": list(self.reads),
            "modules": [
                {
                    "name": c.name,
                    "same_before_optimisation": c.same_before,
                    "same_after_optimisation": c.same_after,
                    "hint": c.hint(),
                    "opcodes_after": [dict(c.old.after), dict(c.new.after)],
                    "custom_calls": [dict(c.old.custom_calls), dict(c.new.custom_calls)],
                    "fusion_kinds": [dict(c.old.fusion_kinds), dict(c.new.fusion_kinds)],
                    "temp_bytes": [c.old.temp_bytes, c.new.temp_bytes],
                }
                for c in self.changes
            ],
        }


class CompiledPrograms:
    name = "compiled"

    def wanted(self, step: Step, found: tuple[Found, ...] = ()) -> bool:
        return step.changed

    def gather(self, step: Step, sides: StepSides, found: tuple[Found, ...] = ()) -> CompiledAnswer:
        # what the metrics measure, each once: a compile time, memory, a run time, a value
        said = [measures(m) if m in step.costs else VALUE for m in step.metrics]
        reads = tuple(dict.fromkeys(each for each in said if each))
        answer = CompiledAnswer(*step.pair, [], f"{step.kept('compiled')}/", reads=reads)
        sides.progress(
            f"  what {step.before} and {step.after} compile: one process each, XLA dumping"
        )
        folders = {label: step.folder("compiled", label) for label in step.pair}
        problems = {label: dump(sides, label, folder) for label, folder in folders.items()}
        void = tuple(label for label, p in problems.items() if p == VOID)
        problem = "; ".join(f"{label}: {p}" for label, p in problems.items() if p)
        if void or problem:
            return dataclasses.replace(answer, void=void, problem="" if void else problem)
        changes = compare_dumps(*(read_dump(folder) for folder in folders.values()))
        write_diffs(step.folder("compiled"), changes)
        return dataclasses.replace(answer, changes=changes)


def diff_name(change: ModuleChange) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", change.name) + ".diff"


def write_diffs(folder: Path, changes: list[ModuleChange]) -> None:
    """Each module that compiled differently, its diff in ``folder`` (an earlier answer's gone)."""
    for stale in folder.glob("*.diff"):
        if stale.is_file() and not stale.is_symlink():
            stale.unlink()
    for change in changes:
        if not change.same_text and (lines := change.diff()):
            replace_file(folder / diff_name(change), "\n".join(lines) + "\n")


# What ``dump`` answers where the script replaced the dump flags (``XLA_FLAGS`` set in its code).
VOID = "the script sets XLA_FLAGS itself"


def dump(sides: StepSides, label: str, folder: Path) -> str:
    """One extra process of ``label`` with XLA dumping, its HLO text put in ``folder`` in place of
    an earlier dump's (a user's other files left alone); why there is none (``VOID``), or ""."""
    side = sides.side(label)
    if not isinstance(side, Side):
        return side
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="harness-dump-") as scratch:
        stored = sides.extra_process(side, dump_flags(Path(scratch)))
        written = [path for path in Path(scratch).iterdir() if DUMP_FILE.match(path.name)]
        if not written:
            if stored is not None and "--xla_dump_to" in lost_in(stored.result.processes):
                return VOID
            ended = str(stored.result.status) if stored is not None else "no result"
            return f"XLA wrote no dump (its process: {ended})"
        for stale in folder.iterdir():
            if DUMP_FILE.match(stale.name) and stale.is_file() and not stale.is_symlink():
                stale.unlink()
        # LLVM IR and objects are left out: large, and not what a maintainer reads
        for path in written:
            shutil.move(path, folder / path.name)
    return ""
