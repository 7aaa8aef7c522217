"""The stored result as typed, immutable records, and ``parse``: JSON in, a ``Result`` or a
``SchemaError`` naming the first wrong field by its path (``host.machine.id: expected str, got
list``).

A result file is untrusted input.  Unknown fields are ignored, so a newer harness may add fields
without a schema bump; optional fields let results stored before them load; ``parse`` reads the
newest schema version only, ``harness.store.migrations`` brings older files up to it.  A result is
one *cell* measured in one or more case processes (``ProcessRun``); statistics over them are the
readers' (``harness.analysis``), never stored.  Each record reads and writes itself by its fields
(``read_record``; ``_Record.to_json``): ``parse(result.to_json()) == result``.

Why not the published JSON Schema (``docs/result.schema.json``) and a schema library: a reader needs
the typed records anyway, and on the stored fixtures this parser reads and builds a result in about
0.6 ms where ``jsonschema`` takes about 4.5 ms to validate it alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields, is_dataclass
from enum import StrEnum
from types import NoneType, UnionType
from typing import Any, ClassVar, TypeVar, get_args, get_origin, get_type_hints

from harness.store.checks import (
    Check,
    Fields,
    SchemaError,
    as_is,
    boolean,
    expected,
    integer,
    json_object,
    list_of,
    map_of,
    narrowed,
    number,
    path_name,
    size_map,
    string,
    window,
)
from harness.units import UNRECORDED_MACHINE

SCHEMA = "jax-repro-harness/result"
SCHEMA_VERSION = 3
PIN = re.compile(r"(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!_-]+)")
# JAX_PLATFORMS names platforms; default_backend() names the backend they run on.
PLATFORM_BACKENDS = {"cuda": "gpu", "rocm": "gpu"}


AnEnum = TypeVar("AnEnum", bound=StrEnum)
R = TypeVar("R", bound="_Record")
PROGRAM_KINDS = ("wall", "dispatch")


class RunStatus(StrEnum):
    """How a case process, and so a cell, ended."""

    OK = "ok"
    FAILED = "failed"  # raised, or exited non-zero: the error's last lines are its detail
    TIMEOUT = "timeout"
    CRASHED = "crashed"  # killed by a signal: segfault, abort, the kernel's OOM killer
    SKIPPED = "skipped"  # cannot run here (too few devices, unsupported) or refused by the budget
    # The release cannot be had with what a plain script declares (the resolver's reason is the
    # detail): no process ran, and it is neither a failure nor a change.
    NOT_INSTALLABLE = "not installable"


def _json(value: Any) -> Any:
    """A field's value as JSON: records by their own ``to_json``, tuples as lists."""
    if isinstance(value, _Record):
        return value.to_json()
    if isinstance(value, tuple | list):
        return [_json(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _json(item) for key, item in value.items()}
    return value


def _default(spec: Field[Any]) -> Any:
    if spec.default is not MISSING:
        return spec.default
    return spec.default_factory() if spec.default_factory is not MISSING else MISSING


class _Record:
    """A record written by its fields' names; ``_sparse`` fields are left out at their default, as
    the writers before this class left them out, so stored files keep their shape."""

    _sparse: ClassVar[frozenset[str]] = frozenset()

    def to_json(self) -> dict[str, Any]:
        assert is_dataclass(self)
        record = {}
        for spec in fields(self):
            value = getattr(self, spec.name)
            if spec.name in self._sparse and value == _default(spec):
                continue
            record[spec.name] = _json(value)
        return record


@dataclass(frozen=True)
class TimedSample(_Record):
    """One sample: when Python regained control after each step, and when outputs were ready."""

    marks_ns: tuple[float, ...]
    wall_ns: float

    @property
    def dispatch_ns(self) -> float:
        return self.marks_ns[-1]


@dataclass(frozen=True)
class StoredProgram(_Record):
    """One program's timing in one process (``harness.measure.timing.ProgramTiming`` as stored)."""

    steps: tuple[str, ...]
    samples: tuple[TimedSample, ...]
    first_call: TimedSample | None = None
    warmup: int = 0
    loops: int = 1  # iterations per sample: a sample stores their mean
    stopped_by: str = ""
    # What the samples measured: a plain script's whole-process time is a wall time with no dispatch
    # point, so its marks are not a dispatch figure (``harness.measure.script_process``).
    kinds: tuple[str, ...] = PROGRAM_KINDS
    # Kept for the reader of the file, never read back into figures: a case's own summary of its
    # samples, and a plain script's figure lines as it printed them.
    summary: Mapping[str, Any] | None = None
    printed: tuple[Mapping[str, Any], ...] = ()

    _sparse = frozenset({"kinds", "summary", "printed"})


@dataclass(frozen=True)
class CompiledFunction(_Record):
    """Cold trace-and-lower and compile times of a jitted function, and its HLO's counted facts."""

    lower_ns: tuple[float, ...] = ()
    compile_ns: tuple[float, ...] = ()
    hlo: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class ProcessClaim(_Record):
    """The case's own verdict on its claim, judged in one process on one backend."""

    holds: bool
    evidence: str = ""
    backend: str | None = None

    _sparse = frozenset({"backend"})


class EndKind(StrEnum):
    """How a process that did not finish ok ended (``ProcessEnd.how``)."""

    # killed by a signal: a segfault, an abort, the OOM killer, someone else's kill
    SIGNAL = "signal"
    EXIT = "exit"  # exited with a status other than 0
    TIMEOUT = "timeout"  # still running at its time-out, and killed then
    RAISED = "raised"  # a case module raised; its traceback is the last lines
    WORKER = "worker"  # its side's worker died, and the process with it


@dataclass(frozen=True)
class ProcessEnd(_Record):
    """Where a process died: its signal or exit status, its last lines (bounded, scrubbed) and the
    ``faulthandler`` stack where written.  ``from_outside``: a signal from outside (SIGKILL,
    SIGTERM, SIGINT, SIGHUP), never the script's own fault; SIGKILL is also the OOM killer's."""

    how: EndKind
    signal: str | None = None  # "SIGSEGV"
    exit_status: int | None = None  # as a shell reports it: 139 for SIGSEGV (128 + 11)
    from_outside: bool = False
    timeout_s: float | None = None
    last_lines: str = ""
    stack: str = ""

    _sparse = frozenset(
        {"signal", "exit_status", "from_outside", "timeout_s", "last_lines", "stack"}
    )

    @property
    def a_fault(self) -> bool:
        """Killed by someone outside (a kill, a job's end): no ending of the release's own; SIGKILL
        is not, it may be the OOM killer's (``analysis.statuses``)."""
        return self.from_outside and self.signal != "SIGKILL"


@dataclass(frozen=True)
class GpuFacts(_Record):
    device_kinds: tuple[str, ...] = ()
    compute_capabilities: tuple[str, ...] = ()
    driver_versions: tuple[str, ...] = ()
    cuda_driver: str | None = None
    cuda_packages: Mapping[str, str] = field(default_factory=dict)
    # what nvidia-smi said of each GPU, or why it said nothing: for the reader
    nvidia_smi: Any = None


@dataclass(frozen=True)
class JaxFacts(_Record):
    """What the case process's JAX said of itself; ``error`` when it could not say."""

    backend: str | None = None
    device_count: int | None = None
    device_kinds: tuple[str, ...] = ()
    platforms: tuple[str, ...] = ()
    jax_version: str | None = None
    environment_info: str = ""
    gpu: GpuFacts | None = None
    error: str | None = None
    # the JAX flags a case's timing depends on
    config: Mapping[str, Any] = field(default_factory=dict)

    # A process whose JAX could not say stores the error alone.
    _sparse = frozenset(
        {"backend", "device_count", "device_kinds", "platforms", "jax_version", "environment_info"}
        | {"gpu", "error", "config"}
    )


@dataclass(frozen=True)
class ProcessLoad(_Record):
    """Load on the machine while one process ran: other processes' CPU time, in cores."""

    other_cpu_cores: float | None = None
    loadavg_1m: float | None = None
    loaded: bool = False
    attempts: int = 1


@dataclass(frozen=True)
class ProcessRun(_Record):
    """One case process: how it ended and what it measured."""

    index: int
    status: RunStatus
    detail: str = ""
    duration_s: float = 0.0
    window_unix_ns: tuple[int, int] | None = None
    load: ProcessLoad | None = None
    affinity: tuple[int, ...] | None = None
    programs: Mapping[str, StoredProgram] = field(default_factory=dict)
    compiled: Mapping[str, CompiledFunction] = field(default_factory=dict)
    facts: Mapping[str, Any] = field(default_factory=dict)
    claim: ProcessClaim | None = None
    jax: JaxFacts | None = None
    phases_s: Mapping[str, float] = field(default_factory=dict)
    peak_rss_bytes: int | None = None
    # The accelerator's own peak memory in use (its backend's memory_stats(); None on the CPU).
    device_peak_bytes: int | None = None
    # A plain script's run as the case process saw it (sha256, exit status, whole-process time...).
    script: Mapping[str, Any] | None = None
    # One figure per metric name for this process: a plain script's phases (``process.trace_ns``)
    # and its own printed numbers (``json.reg_ms``), each one value, as a whole-process time is.
    figures: Mapping[str, float] = field(default_factory=dict)
    # A plain script's values as written (JSON text: ``"converged"``, ``true``, ``NaN``, ``1e400``,
    # an integer of 25 digits), where its figure cannot say them or it printed several in the
    # process (``measure.script_process``): a value is compared as printed, never as a median.
    printed: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # What of a script's output was left out and why (a number out of range...), a line each.
    notes: tuple[str, ...] = ()
    # Where a process that did not finish ok died (schema version 3): None for one that did.
    died: ProcessEnd | None = None

    # What the case process measured: one that measured nothing (failed, killed) has none.
    _sparse = frozenset(
        {"programs", "compiled", "facts", "claim", "jax", "phases_s", "peak_rss_bytes", "script"}
        | {"figures", "printed", "notes", "died", "device_peak_bytes"}
    )


@dataclass(frozen=True)
class ScriptIdentity(_Record):
    """The plain script a result measured: file name, content's SHA-256, ``--script-arg``."""

    file: str
    sha256: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Libraries(_Record):
    """What a plain script's venv held: the policy (``cutoff``: the index's moment for ``as-of``),
    what the script declared, what was held, every distribution installed (``name==version``)."""

    policy: str
    installed: tuple[str, ...]
    sha256: str
    cutoff: str | None = None  # ISO 8601, UTC
    declared: tuple[str, ...] = ()
    held: tuple[str, ...] = ()

    def version_of(self, name: str) -> str | None:
        """The installed version of ``name``, in any spelling PEP 503 normalizes alike."""
        wanted = re.sub(r"[-_.]+", "-", name).lower()
        for pin in self.installed:
            pinned, _, version = pin.partition("==")
            if re.sub(r"[-_.]+", "-", pinned).lower() == wanted:
                return version
        return None


@dataclass(frozen=True)
class MachineFacts(_Record):
    id: str
    basis: str = ""


@dataclass(frozen=True)
class HarnessRevision(_Record):
    commit: str = "unknown"
    dirty: bool | None = None


@dataclass(frozen=True)
class HostFacts(_Record):
    """Where the cell ran (``harness.host.environment.host_facts``)."""

    machine: MachineFacts | None = None
    cpu_model: str | None = None
    cpu_count: int | None = None
    usable_cores: int | None = None
    memory_total_bytes: int | None = None
    python: str | None = None
    python_implementation: str | None = None
    platform: str | None = None
    kernel: str | None = None
    packages: Mapping[str, str] = field(default_factory=dict)
    variables: Mapping[str, str] = field(default_factory=dict)
    gpus: tuple[Mapping[str, Any], ...] = ()
    harness: HarnessRevision | None = None


# A sample of a program shorter than this repeats it (``harness.measure.timing``); long enough that
# the clock's resolution and the loop's own overhead do not matter.
DEFAULT_MIN_SAMPLE_NS = 1_000_000


# Counts still open at the last look (a crash in some processes of one side) are looked at again, up
# to ``Settings.max_count_processes`` a side (this many, measured until decided), while a side's
# processes have taken less than the cell's time budget, or this many seconds without one: a cheap
# script's new ending in half its processes is decided (0 of 20 against 7 of 20, Fisher p = 0.0083,
# is undecided at 20; at 80 it is not), a costly one's measuring stays bounded.
COUNT_CEILING = 200
COUNT_SECONDS = 60.0


@dataclass(frozen=True)
class Settings(_Record):
    """How a cell is measured.  ``unrecorded``: settings a stored result predates; they read as
    their defaults here, but are neither shown nor written back."""

    warmup: int = 2
    repeats: int = 30
    min_repeats: int = 5
    max_seconds: float = 10.0
    compile_repeats: int = 3
    timeout_s: float = 300.0
    effort: str = "quick"
    # "": the environment's default, which the runner picks (``measure.launch``)
    isolation: str = ""
    processes: int = 1
    min_sample_ns: int = DEFAULT_MIN_SAMPLE_NS
    affinity: tuple[int, ...] | None = None
    max_load: float | None = None  # None: flag loaded processes, never re-measure
    # With a target: after ``processes`` rounds, more rounds (up to ``max_processes``) while the
    # ratio the processes so far could detect is above it.
    target_ratio: float | None = None
    # the metric kinds it is judged on (None: every metric)
    target_kinds: tuple[str, ...] | None = None
    max_processes: int | None = None
    # Measuring until decided (``harness.analysis.power.open_comparison``): after ``processes``
    # rounds, more rounds, in looks of ``processes`` each up to ``max_processes``, while the sides'
    # comparisons are open: "changes" (a ratio past the factor the test has not yet confirmed) or
    # "all" (any comparison undecided).
    decide: str | None = None
    # the metrics it is judged on (None: every metric)
    decide_metrics: tuple[str, ...] | None = None
    # the most seconds a cell may take (None: only max_processes bounds it)
    decide_budget_s: float | None = None
    # Counts (a new ending, a number gone in some processes) still open at the last look get more
    # looks, while a side's processes have taken less than ``decide_budget_s`` (or
    # ``COUNT_SECONDS``), up to this many processes a side (None: no more looks than the others).
    max_count_processes: int | None = None
    unrecorded: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, Any]:
        written = super().to_json()
        return {
            name: written[name] for name in SETTING_NAMES_IN_ORDER if name not in self.unrecorded
        }

    def shown(self) -> dict[str, Any]:
        """The settings the result recorded, in the schema's order."""
        recorded = {name: self.recorded(name) for name in SETTING_NAMES_IN_ORDER}
        return {name: value for name, value in recorded.items() if value is not None}

    def recorded(self, name: str) -> Any:
        return None if name in self.unrecorded else getattr(self, name)

    def for_child(self) -> dict[str, Any]:
        """What the case process's timing loop takes (``harness.measure.timing``)."""
        return {name: getattr(self, name) for name in CHILD_SETTINGS}

    @property
    def looks(self) -> tuple[int, ...]:
        """The looks of a run measured until decided (``look_points``); else one, at the plan."""
        return (
            look_points(self.processes, self.most_processes) if self.decide else (self.processes,)
        )

    @property
    def most_processes(self) -> int:
        """A side's most processes in one cell: more than planned with a target or until decided."""
        if self.target_ratio is None and self.decide is None:
            return self.processes
        return max(self.processes, self.max_processes or self.processes)

    @property
    def count_looks(self) -> tuple[int, ...]:
        """The looks of counts: the others', then on doubling to ``max_count_processes``."""
        looks, ceiling = self.looks, self.max_count_processes
        if not self.decide or ceiling is None or ceiling <= looks[-1]:
            return looks
        return looks[:-1] + look_points(looks[-1], ceiling)


def look_points(first: int, most: int) -> tuple[int, ...]:
    """The processes a side at which a run measured until decided takes its looks: the planned
    ``first``, then twice as many at each look, the last at ``most`` (5, 10, 20; 3, 6, 12,
    15).  Doubling keeps the looks few, so that most of the level is left for the last
    (``harness.analysis.spending``), and each look adds as much evidence as all before it."""
    points = [max(1, first)]
    while points[-1] < most:
        points.append(min(2 * points[-1], most))
    return tuple(points)


def look_number(looks: tuple[int, ...], processes: int) -> int:
    """The look (1 to ``len(looks)``) that ``processes`` a side reached: the last one begun."""
    return next((k for k, point in enumerate(looks, start=1) if processes <= point), len(looks))


CHILD_SETTINGS = (
    "warmup",
    "repeats",
    "min_repeats",
    "max_seconds",
    "compile_repeats",
    "min_sample_ns",
)
SETTING_NAMES_IN_ORDER = tuple(spec.name for spec in fields(Settings) if spec.name != "unrecorded")
NOTHING_RECORDED = Settings(unrecorded=frozenset(SETTING_NAMES_IN_ORDER))


@dataclass(frozen=True)
class Result(_Record):
    """One stored cell: identity, settings, where it ran, and its processes in order of running."""

    id: str
    created_at: str
    case: str
    release: str
    profile: str
    sizes: Mapping[str, int]
    status: RunStatus
    processes: tuple[ProcessRun, ...] = ()
    detail: str = ""
    duration_s: float = 0.0
    window_unix_ns: tuple[int, int] | None = None
    size_source: str = ""
    seed: int | None = None
    cost_estimate: Mapping[str, float] = field(default_factory=dict)  # by kind: bytes, flops
    budget: Mapping[str, float] = field(default_factory=dict)
    settings: Settings = NOTHING_RECORDED
    claim_statement: str = ""
    # Where the case comes from: ``source`` (its upstream URL, or the thread's title where none is
    # known) since the cases cite it; ``discussion``, a short name of the thread, in results stored
    # before.
    source: str = ""
    discussion: str = ""
    # What the discussion itself printed at these sizes, quoted from the case (``SOURCE_RUNS``),
    # with its call and device: shown beside the claim, never computed.  "" where it ran no such
    # size.
    source_figure: str = ""
    host: HostFacts = field(default_factory=HostFacts)
    interleaved_with: tuple[str, ...] = ()
    script: ScriptIdentity | None = None  # a plain script's result, not a case's
    libraries: Libraries | None = None  # a plain script's venv: what it was resolved to hold
    # The ``harness run`` that measured it (a random id): results of one invocation shared its level
    # (load, frequency, neighbours); results of separate ones did not.  Older results have none.
    invocation: str = ""
    # What the writer left out or changed so that every reader reads the file back
    # (``store.bounds``: a number out of range a script printed, a fact nested too deep...), each in
    # a line the pages show.
    notes: tuple[str, ...] = ()

    _sparse = frozenset({"discussion", "source_figure", "script", "libraries", "notes"})

    def to_json(self) -> dict[str, Any]:
        """The result as a document of the newest schema version."""
        return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, **super().to_json()}

    @property
    def machine(self) -> str:
        """The id of the machine that measured it (``harness.host.machine``), if recorded."""
        recorded = self.host.machine
        return recorded.id if recorded is not None and recorded.id else UNRECORDED_MACHINE

    @property
    def jax(self) -> JaxFacts | None:
        """What JAX said of itself, from the first process that could say."""
        return next(
            (p.jax for p in self.processes if p.jax is not None and p.jax.error is None), None
        )

    @property
    def backend(self) -> str:
        """The JAX backend it ran on; for a run that died before saying, its profile's platform."""
        reported = next(
            (p.jax.backend for p in self.processes if p.jax is not None and p.jax.backend), None
        )
        if reported:
            return reported
        pinned = self.host.variables.get("JAX_PLATFORMS", "").split(",")[0]
        return PLATFORM_BACKENDS.get(pinned, pinned) or "unknown"

    @property
    def device_count(self) -> int | None:
        return self.jax.device_count if self.jax is not None else None

    @property
    def device_kinds(self) -> tuple[str, ...]:
        return self.jax.device_kinds if self.jax is not None else ()

    @property
    def order(self) -> tuple[str, str]:
        """Creation order; the id breaks ties within a second."""
        return self.created_at, self.id

    def all_notes(self) -> tuple[str, ...]:
        """Its notes and its processes', each once, in order: what a page says was left out."""
        found = [*self.notes, *(note for p in self.processes for note in p.notes)]
        return tuple(dict.fromkeys(found))

    def finished(self) -> tuple[ProcessRun, ...]:
        """The processes that finished ok: the ones with measurements."""
        return tuple(p for p in self.processes if p.status is RunStatus.OK)


# ---
# parsing ------------------------------------------------------------------------------------------


def _member(kind: type[AnEnum], noun: str) -> Callable[[Any, str], AnEnum]:
    """The parser of a string naming a member of ``kind`` (else: ``unknown NOUN``)."""

    def parse(value: Any, where: str) -> AnEnum:
        text = string(value, where)
        try:
            return kind(text)
        except ValueError:
            known = ", ".join(member.value for member in kind)
            raise SchemaError(where, f"unknown {noun} {text!r} (expected one of {known})") from None

    return parse


# The check of each type a record's field holds, as JSON holds it.
_PLAIN: dict[Any, Check[Any]] = {
    str: string,
    int: integer,
    float: number,
    bool: boolean,
    Any: as_is,
    RunStatus: _member(RunStatus, "status"),
    EndKind: _member(EndKind, "end"),
}


def _check_of(hint: Any) -> Check[Any]:
    """The check of a field of type ``hint``: ``X | None`` is read as ``X`` (null reads as the
    field's default), a tuple from a list, a record by its fields."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is UnionType:
        return _check_of(next(arg for arg in args if arg is not NoneType))
    if origin is tuple:
        return list_of(_check_of(args[0])) if args[1:] == (...,) else window
    if origin is Mapping:
        return json_object if args[1] is Any else map_of(_check_of(args[1]))
    if isinstance(hint, type) and issubclass(hint, _Record):
        return lambda value, where: read_record(hint, value, where)
    return _PLAIN[hint]


# Fields whose JSON says more than their type: a list that may not be empty, digests, pins.
_marks = narrowed(list_of(number), bool, "expected at least one mark")
_kinds = narrowed(
    list_of(string),
    lambda kinds: kinds and set(kinds) <= set(PROGRAM_KINDS),
    f"expected a non-empty list of {' and '.join(PROGRAM_KINDS)}",
)
_sha256 = narrowed(
    string, lambda text: re.fullmatch(r"[0-9a-f]{64}", text), "expected 64 lowercase hex digits"
)
_pins = narrowed(
    list_of(string),
    lambda pins: all(map(PIN.fullmatch, pins)),
    "expected name==version for every distribution",
)


def _processes(value: Any, where: str) -> tuple[ProcessRun, ...]:
    if not isinstance(value, list):
        raise expected("list", value, where)
    return tuple(parse_process(item, f"{where}[{i}]", i) for i, item in enumerate(value))


def _machine(value: Any, where: str) -> MachineFacts | None:
    """The machine's facts; None without an id (absent, null, or earlier writers' empty string)."""
    found = read_record(MachineFacts, value, where, id=None)
    return MachineFacts(path_name(found.id, f"{where}.id"), found.basis) if found.id else None


# Each setting's check, and whether it may be None: then it is recorded as null when not set, and
# null is its value, not a sign of an older result.
_SETTING_CHECKS = {
    name: (_check_of(hint), NoneType in get_args(hint))
    for name, hint in get_type_hints(Settings).items()
    if name in SETTING_NAMES_IN_ORDER
}


def _settings(value: Any, where: str) -> Settings:
    data = Fields(value, where)
    given: dict[str, Any] = {}
    unrecorded = set()
    for name, (check, nullable) in _SETTING_CHECKS.items():
        found = data.optional(name, check, None)
        if found is not None:
            given[name] = found
        elif not nullable or name not in data.data:
            unrecorded.add(name)
    return Settings(**given, unrecorded=frozenset(unrecorded))


# Fields whose JSON says more than their type: names that become paths, digests, pins, a list
# that may not be empty; and the records read their own way.
_SPECIAL: dict[str, Check[Any]] = {
    "TimedSample.marks_ns": _marks,
    "StoredProgram.kinds": _kinds,
    "ScriptIdentity.sha256": _sha256,
    "Libraries.sha256": _sha256,
    "Libraries.installed": _pins,
    "HostFacts.machine": _machine,
    "Result.id": path_name,
    "Result.case": path_name,
    "Result.release": path_name,
    "Result.profile": path_name,
    "Result.sizes": size_map,
    "Result.processes": _processes,
    "Result.settings": _settings,
}


# Each record's fields, with their checks and their defaults, found once.
_FIELDS: dict[type, list[tuple[str, Check[Any], Field[Any]]]] = {}


def _fields(record: type) -> list[tuple[str, Check[Any], Field[Any]]]:
    if record not in _FIELDS:
        hints, special = get_type_hints(record), f"{record.__name__}."
        _FIELDS[record] = [
            (spec.name, _SPECIAL.get(special + spec.name) or _check_of(hints[spec.name]), spec)
            for spec in fields(record)
        ]
    return _FIELDS[record]


def read_record(record: type[R], value: Any, where: str, **defaults: Any) -> R:
    """A record from its JSON object, each field checked (``_fields``) and named by its path where
    it is wrong: a field with a default may be absent or null and reads as that default;
    ``defaults`` are the caller's instead of the record's (``MISSING``: required after all)."""
    data = Fields(value, where)
    read = {}
    for name, check, spec in _fields(record):
        default = defaults[name] if name in defaults else _default(spec)
        if default is MISSING:
            read[name] = data.required(name, check)
        else:
            read[name] = data.optional(name, check, default)
    return record(**read)


def parse_process(value: Any, where: str = "process", position: int = 0) -> ProcessRun:
    """One process's record on its own, its index its position where it has none."""
    return read_record(ProcessRun, value, where, index=position)


def check_identity(data: Any) -> Mapping[str, Any]:
    """The document as an object that says it is a harness result, or why it is not one."""
    if not isinstance(data, dict):
        raise SchemaError("", "not a JSON object")
    if data.get("schema") != SCHEMA:
        raise SchemaError("", f"not a harness result (schema {data.get('schema')!r})")
    return data


def parse(data: Any) -> Result:
    """A result document of the newest schema version as a ``Result``; raises ``SchemaError``."""
    version = Fields(check_identity(data), "").required("schema_version", integer)
    if version != SCHEMA_VERSION:
        raise SchemaError(
            "schema_version", f"{version} where {SCHEMA_VERSION} was expected (migrate it first)"
        )
    # A result without processes is refused, though one is built without them (a skipped cell).
    return read_record(Result, data, "", processes=MISSING)
