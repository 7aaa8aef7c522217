"""Where a step's time went: its run time (``OpProfile``: one profiled process per release, its ops'
time side by side) and its host time (``HostProfile``: one process per release under ``cProfile``,
the functions whose own time moved most, grouped by where they live: jax, jaxlib, a library, the
script, Python).

The op profile's process runs with ``HARNESS_PROFILE_DIR`` set: the script's start-up hook, or the
case process, traces it with ``jax.profiler`` into a perfetto trace. On the CPU a release records an
event per executed HLO op with the thunk runtime (0.4.32 on); an older one with
``--xla_cpu_enable_xprof_traceme=true``, added where its jaxlib lists the flag. Events are summed by
op kind; the trace files are read and removed, never kept: they carry the host's name.

The host profile is asked where the compiled programs do not show the step (tracing, dispatch, a
library's Python). The start-up hook writes it to ``HARNESS_PYTHON_PROFILE``; it is read and
removed. A function is named below ``site-packages`` (``jax/_src/tree_util.py:tree_flatten``),
never by a path here. cProfile slows both releases alike: functions are compared with each other,
not the timed ones.
"""

from __future__ import annotations

import gzip
import json
import pstats
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from harness.analysis.significance import MOVED
from harness.explain.reproducer import ReproducerAnswer
from harness.explain.tried import xla_flags
from harness.install.commit_venvs import is_commit_label
from harness.measure.sides import Side
from harness.steps.evidence import Found, Step, StepSides, of_kind

TRACEME_FLAG = "xla_cpu_enable_xprof_traceme"
PROFILE_DIR = "HARNESS_PROFILE_DIR"  # as harness.measure.script_hook and the case process read it
# An executed HLO op as XLA names its event: lower case, an opcode or fusion name, numbered copies.
OP_EVENT = re.compile(r"^[a-z][a-z0-9_\-]*(\.[a-z0-9_\-]+)*$")
# HLO's opcodes as XLA names them (xla/hlo/ir/hlo_opcode.h), which name an executed op's event.
OPCODE_NAMES = """abs add add-dependency after-all all-gather all-gather-done all-gather-start
    all-reduce all-reduce-done all-reduce-start all-to-all and async-done async-start
    async-update atan2 batch-norm-grad batch-norm-inference batch-norm-training bitcast
    bitcast-convert broadcast call cbrt ceil cholesky clamp collective-broadcast
    collective-permute collective-permute-done collective-permute-start compare complex
    concatenate conditional constant convert convolution copy copy-done copy-start cosine
    count-leading-zeros custom-call divide domain dot dynamic-reshape dynamic-slice
    dynamic-update-slice erf exponential exponential-minus-one fft floor fusion gather
    get-dimension-size get-tuple-element imag infeed iota is-finite log log-plus-one logistic
    maximum minimum multiply negate not opt-barrier optimization-barrier or outfeed pad parameter
    partition-id popcnt power real recv recv-done reduce reduce-precision reduce-scatter
    reduce-window remainder replica-id reshape reverse rng rng-bit-generator
    rng-get-and-update-state round-nearest-afz round-nearest-even rsqrt scatter select
    select-and-scatter send send-done set-dimension-size shift-left shift-right-arithmetic
    shift-right-logical sign sine slice sort sqrt stochastic-convert subtract tan tanh top-k
    transpose triangular-solve tuple while xor"""
HLO_OPCODES = frozenset(OPCODE_NAMES.split())
NUMBERING = re.compile(r"(\.(\d+|clone\d*))+$")
MAX_TRACE_BYTES = 256 * 1024 * 1024  # a trace unpacked; a larger one is not read


def op_kind(name: str) -> str:
    """``dot.3`` → ``dot``, ``tanh.4.clone`` → ``tanh``, ``add_fusion.1`` → ``add_fusion``."""
    return NUMBERING.sub("", name)


@dataclass
class OpTimes:
    """One profiled process's executed ops by kind: total ns and how many ran."""

    total_ns: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)


def read_trace(folder: Path) -> OpTimes | str:
    try:
        traces = sorted(folder.rglob("perfetto_trace.json.gz"))
        if not traces:
            return "the process wrote no profile"
        with gzip.open(traces[-1], "rb") as handle:
            raw = handle.read(MAX_TRACE_BYTES + 1)
        if len(raw) > MAX_TRACE_BYTES:
            return f"its profile is over {MAX_TRACE_BYTES >> 20} MiB unpacked: not read"
        document = json.loads(raw)
    except (OSError, EOFError, ValueError) as exc:
        return f"its profile could not be read ({type(exc).__name__})"
    events = document.get("traceEvents", []) if isinstance(document, dict) else document
    found = self_times(op_events(events if isinstance(events, list) else []))
    return found if found.calls else "this release records no per-op events on this platform"


def is_op(name: str) -> bool:
    """An executed HLO op's event (``dot.3``, ``loop_add_fusion.1``): an opcode or a fusion, not a
    Python annotation (``backend_compile``) nor a compile pass named alike (``copy-insertion``)."""
    if not OP_EVENT.match(name):
        return False
    kind = op_kind(name)
    return kind in HLO_OPCODES or "fusion" in kind or kind.startswith("wrapped_")


def op_events(events: list[object]) -> dict[object, list[tuple[float, float, str]]]:
    threads: dict[object, list[tuple[float, float, str]]] = {}
    for event in events:
        if not isinstance(event, dict) or event.get("ph") != "X":
            continue
        name, start, duration = event.get("name"), event.get("ts"), event.get("dur")
        if not (
            isinstance(start, int | float) and isinstance(duration, int | float) and duration >= 0
        ):
            continue
        if isinstance(name, str) and is_op(name):
            thread = threads.setdefault((event.get("pid"), event.get("tid")), [])
            thread.append((float(start), float(duration), op_kind(name)))
    return threads


def self_times(threads: dict[object, list[tuple[float, float, str]]]) -> OpTimes:
    """Each op kind's own time, without the ops nested in it (a ``while`` without its ``dot``s)."""
    found = OpTimes()
    for events in threads.values():
        events.sort(key=lambda event: (event[0], -event[1]))
        # [end, own time so far] of the ops enclosing the current one
        open_ops: list[list[float]] = []
        owners: list[str] = []
        for start, duration, kind in events:
            while open_ops and open_ops[-1][0] <= start:
                _, own = open_ops.pop()
                found.total_ns[owners.pop()] += round(own * 1000)
            if open_ops:
                open_ops[-1][1] -= duration
            open_ops.append([start + duration, duration])
            owners.append(kind)
            found.calls[kind] += 1
        while open_ops:
            _, own = open_ops.pop()
            found.total_ns[owners.pop()] += round(max(own, 0.0) * 1000)
    return found


@dataclass(frozen=True)
class ProfileAnswer:
    before: str
    after: str
    old: OpTimes | str  # a release's op times, or why there are none
    new: OpTimes | str
    kind: str = "profile"
    settles: bool = False

    def kinds(self) -> list[str]:
        old = self.old.total_ns if isinstance(self.old, OpTimes) else Counter[str]()
        new = self.new.total_ns if isinstance(self.new, OpTimes) else Counter[str]()
        return sorted(set(old) | set(new), key=lambda kind: -max(old[kind], new[kind]))

    def data(self) -> dict[str, Any]:
        def side(times: OpTimes | str) -> object:
            if isinstance(times, str):
                return {"problem": times}
            return {
                kind: {"total_ns": times.total_ns[kind], "calls": times.calls[kind]}
                for kind in times.calls
            }

        plain = {name: getattr(self, name) for name in ("kind", "before", "after")}
        return {**plain, "ops": [side(self.old), side(self.new)]}


class OpProfile:
    name = "profile"

    def wanted(self, step: Step, found: tuple[Found, ...] = ()) -> bool:
        # a profile of the ops run says nothing of a compile time, an import time, memory, a value
        return any(key.about_run_time for key in step.costs)

    def gather(self, step: Step, sides: StepSides, found: tuple[Found, ...] = ()) -> ProfileAnswer:
        # A profiled process writes and reads back a trace of every op: about ten plain ones (32 s
        # for two of equinox's 1.6 s processes).
        sides.afford(step, 2 * PROFILED_COST, "its two profiled processes")
        sides.progress(
            f"  where the time of {step.before} and {step.after} goes: one profiled process each"
        )
        old, new = (profile_ops(sides, label, step.platform) for label in step.pair)
        return ProfileAnswer(step.before, step.after, old, new)


PROFILED_COST = 10  # plain processes a profiled one costs, for the why's budget


def profile_ops(sides: StepSides, label: str, platform: str) -> OpTimes | str:
    side = sides.side(label)
    if not isinstance(side, Side):
        return side
    flags = []
    if platform == "cpu":
        listing = xla_flags(sides, side)
        if isinstance(listing, dict) and TRACEME_FLAG in listing:
            flags.append(f"--{TRACEME_FLAG}=true")
    with tempfile.TemporaryDirectory(prefix="harness-profile-") as folder:
        ended = sides.one_more_process(side, flags, {PROFILE_DIR: folder})
        found = read_trace(Path(folder))
    return found if isinstance(found, OpTimes) else f"{found} (its process: {ended})"


PYTHON_PROFILE = "HARNESS_PYTHON_PROFILE"  # as harness.measure.script_hook reads it
SHOWN_FUNCTIONS = 8
FUNCTION_FIELDS = ("name", "group", "old_ns", "new_ns", "old_calls", "new_calls")  # of ``moved``
SCRIPT, PYTHON, OTHER = "script", "python", "other"
STDLIB_FOLDER = re.compile(r"^python3\.\d+$")  # lib/python3.12/…, below it site-packages excepted
# A builtin as cProfile names it:
# ``<method 'flatten' of 'jaxlib.xla_extension.pytree.PyTreeDef' objects>``.
BUILTIN_OWNER = re.compile(r"of '([A-Za-z_][\w.]*)' objects|<built-in method ([\w.]+)")

CPROFILED_COST = 3  # plain processes one under cProfile costs, for the why's budget


@dataclass
class HostTimes:
    """One profiled process: each function's own ns and calls, by its name as shown."""

    own_ns: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    where: dict[str, str] = field(default_factory=dict)  # a function's name → its group

    def by_group(self) -> Counter[str]:
        totals: Counter[str] = Counter()
        for name, own in self.own_ns.items():
            totals[self.where[name]] += own
        return totals


def place(filename: str, function: str, script: str) -> tuple[str, str]:
    """A profiled function's group and the name a page shows: ``("jax", "jax/_src/api.py:jit")``."""
    if filename == "~":  # a builtin: its owner's module says where it lives
        found = BUILTIN_OWNER.search(function)
        owner = next((part for part in found.groups() if part), "") if found else ""
        top = owner.split(".")[0] if "." in owner else ""
        return (PYTHON if not top or top in sys.stdlib_module_names else top), function
    path = PurePath(filename)
    if "site-packages" in path.parts:
        below = path.parts[path.parts.index("site-packages") + 1 :]
        top = below[0].removesuffix(".py") if below else OTHER
        return top, f"{'/'.join(below)}:{function}"
    stdlib = any(STDLIB_FOLDER.match(part) for part in path.parts[:-1]) or "<frozen" in filename
    group = SCRIPT if path.name == PurePath(script).name else PYTHON if stdlib else OTHER
    return group, f"{path.name}:{function}"


def read_profile(path: Path, script: str) -> HostTimes | str:
    try:
        stats = pstats.Stats(str(path))
    except (OSError, EOFError, ValueError, TypeError) as exc:
        return f"its profile could not be read ({type(exc).__name__})"
    found = HostTimes()
    for (filename, _line, function), row in stats.stats.items():  # type: ignore[attr-defined]
        calls, own_seconds = row[1], row[2]
        group, name = place(filename, function, script)
        found.own_ns[name] += round(own_seconds * 1e9)
        found.calls[name] += calls
        found.where[name] = group
    return found if found.own_ns else "the profile recorded no function"


@dataclass(frozen=True)
class HostAnswer:
    before: str
    after: str
    old: HostTimes | str  # a release's functions, or why there are none
    new: HostTimes | str
    kind: str = "host"
    settles: bool = False

    def sides(self) -> tuple[tuple[str, HostTimes | str], tuple[str, HostTimes | str]]:
        return (self.before, self.old), (self.after, self.new)

    def groups(self) -> list[tuple[str, int, int]]:
        if isinstance(self.old, str) or isinstance(self.new, str):
            return []
        old, new = self.old.by_group(), self.new.by_group()
        names = sorted(set(old) | set(new), key=lambda g: -abs(new[g] - old[g]))
        return [(name, old[name], new[name]) for name in names]

    def moved(self, count: int = SHOWN_FUNCTIONS) -> list[tuple[str, str, int, int, int, int]]:
        """The functions whose own time moved most: (name, group, ns and calls before, after)."""
        if isinstance(self.old, str) or isinstance(self.new, str):
            return []
        old, new = self.old, self.new
        names = sorted(
            set(old.own_ns) | set(new.own_ns), key=lambda n: -abs(new.own_ns[n] - old.own_ns[n])
        )
        return [
            (
                name,
                new.where.get(name) or old.where[name],
                old.own_ns[name],
                new.own_ns[name],
                old.calls[name],
                new.calls[name],
            )
            for name in names[:count]
        ]

    def data(self) -> dict[str, Any]:
        def side(times: HostTimes | str) -> object:
            return {"problem": times} if isinstance(times, str) else dict(times.by_group())

        return {
            **{name: getattr(self, name) for name in ("kind", "before", "after")},
            "groups": [side(self.old), side(self.new)],
            "functions": [dict(zip(FUNCTION_FIELDS, row, strict=True)) for row in self.moved()],
        }


class HostProfile:
    name = "host"

    def wanted(self, step: Step, found: tuple[Found, ...] = ()) -> bool:
        times = [m for m in step.costs if m.is_duration or m.about_run_time]  # a time, not memory
        if not step.script or not times or any(map(is_commit_label, step.pair)):
            return False
        reproducer = of_kind(found, ReproducerAnswer)
        return reproducer is None or not shown_in_programs(reproducer)

    def gather(self, step: Step, sides: StepSides, found: tuple[Found, ...] = ()) -> HostAnswer:
        sides.afford(step, 2 * CPROFILED_COST, "its two processes under cProfile")
        sides.progress(f"  where {step.script}'s host time goes: one process each under cProfile")
        old, new = (host_times(sides, label, step.script) for label in step.pair)
        return HostAnswer(step.before, step.after, old, new)


def shown_in_programs(answer: ReproducerAnswer) -> bool:
    compared = [found for _, found in answer.measured.values()]
    return bool(compared) and all(c is not None and c.verdict in MOVED for c in compared)


def host_times(sides: StepSides, label: str, script: str) -> HostTimes | str:
    side = sides.side(label)
    if not isinstance(side, Side):
        return side
    with tempfile.TemporaryDirectory(prefix="harness-host-") as folder:
        path = Path(folder) / "profile.pstats"
        ended = sides.one_more_process(side, env={PYTHON_PROFILE: str(path)})
        if not path.is_file():
            return f"the process wrote no profile (its process: {ended})"
        return read_profile(path, script)
