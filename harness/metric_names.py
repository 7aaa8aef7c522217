"""Names of metrics: a program's or jitted function's timing series, as keys and as typed on a
command line.

Four families share one key:

- a case's programs and jitted functions: ``PROGRAM.KIND_ns``, KIND one of ``KIND_LABELS``
  (``two_scans.dispatch_ns``, ``scan.compile_ns``);
- a plain script's phases, one figure per process, from the start-up hook:
  ``process.PHASE_ns``, PHASE one of ``PHASES`` (``process.trace_ns``);
- a plain script's own numbers, the fields of the JSON lines it prints: ``json.FIELD``
  (``json.reg_ms``), in the script's own unit, never nanoseconds;
- how each process ended, ``process.end`` (``ENDING``), of any case or script.

Kept apart from ``metrics`` (which needs the report's dependencies) because the
noxfile checks a ``--metric`` name in nox's own environment, before installing anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import partial

from harness.errors import UsageError
from harness.units import format_bytes, format_ns

BYTES = "bytes"


@dataclass(frozen=True)
class Measured:
    """What one kind of figure is, the one row every part of the harness reads it from."""

    label: str  # in words, for pages and the help
    rank: int  # where it comes in an answer, lower first (``reading_rank``)
    words: str = ""  # in a draft's sentence of what moved and what did not; "" where not said so
    unit: str = "ns"  # the suffix of its name: ``ns``, or ``bytes`` for memory
    # Moves with the ops a program runs (not a compile, trace, lower or import time, nor memory).
    run_time: bool = True
    # Comes after a compiled program runs, so a reproducer of the script's programs can show it.
    compiled: bool = True
    # Summed from JAX's duration events (``script_hook.EVENTS`` names them).
    from_events: bool = False


# A case's programs and jitted functions, each timed by the case process.
KINDS = {
    "wall": Measured("wall (until ready)", 0, words="wall time"),
    "dispatch": Measured("dispatch (Python regains control)", 0, words="dispatch"),
    "lower": Measured("trace + lower (cold)", 1, words="lowering", run_time=False),
    "compile": Measured("compile (cold)", 1, words="compile time", run_time=False),
}
# Rows alike: JAX's phases summed from its duration events (all before a compiled program runs but
# the compile), and memory; neither moves with the ops a program runs.
EVENTS = partial(Measured, run_time=False, compiled=False, from_events=True)
MEMORY = partial(Measured, rank=3, unit=BYTES, run_time=False)
# A plain script's phases, each the sum over its process (JAX's duration events, the hook's
# clocks).  A new measured phase is a row here, its event in ``script_hook.EVENTS`` (if JAX's), and
# a row of docs/scripts.md.
PHASES = {
    "wall": Measured("whole process (interpreter start to exit)", 2, words="wall time"),
    "import": Measured("first `import jax` (JAX's own cost)", 4, run_time=False, compiled=False),
    "trace": EVENTS("tracing to jaxprs (JAX's events, summed)", 1, "tracing"),
    "lower": EVENTS("lowering to MLIR (JAX's events, summed)", 1, "lowering"),
    "compile": EVENTS("XLA compiles (JAX's events, summed)", 1, "compile time", compiled=True),
    "run": Measured(
        "the script's own run: after the import, less tracing, lowering and compiling",
        2,
        words="the rest of the run",
    ),
    "peak_rss": MEMORY("peak resident memory of the process"),
    # On an accelerator the process's resident memory is mostly its runtime's mapping of the device
    # (13.5 GiB on a TPU v5e for a program of 4 MB): named for that, and the device's own peak
    # beside it, from its backend's memory_stats().
    "host_rss": MEMORY(
        "peak resident memory on the host: mostly the accelerator runtime's mapping, not the "
        "program's"
    ),
    "device_peak": MEMORY("peak memory in use on the accelerator (its memory_stats)"),
}
# How each process ended (ok, or how it died): shape ending, read from every process, not figures.
ENDS = Measured(
    "how its processes end (ok, or how each died)", -2, unit="", run_time=False, compiled=False
)
LEGACY_ENDING = "status"  # as records written before the ending was a metric name it
KIND_LABELS = {kind: measured.label for kind, measured in KINDS.items()}
PROCESS_ROWS = {**PHASES, "end": ENDS}  # what ``process.NAME`` can be
# The phases the hook sums from JAX's duration events, in the table's order.
EVENT_PHASES = tuple(phase for phase, measured in PHASES.items() if measured.from_events)
PROCESS = "process"  # the program of a plain script's whole process and its phases
JSON = "json"  # the program of a plain script's own numbers
# A script's own number named for a unit of time (``solve_ms``): nanoseconds in one of that unit.
TIME_SUFFIXES = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
# The last word of a script's number (before any ``_per_``) that names it for a unit of what it
# costs: a time, a size, a count of work (docs/scripts.md lists them; a test keeps the two equal).
# Such a number is a cost even where it never varies: ``temp_mb`` 29.91 → 195.9 is ×6.55 more.
SIZE_UNITS = ("bytes", "byte", "kb", "mb", "gb", "tb", "kib", "mib", "gib", "tib")
WORK_UNITS = ("flops", "flop", "gflops", "tflops", "ops")
COST_UNITS = (*("ns", "us", "ms", "s", "sec", "secs", "seconds"), *SIZE_UNITS, *WORK_UNITS)
# A script's own number named for a size (``temp_mb``) or a count of work (``gflops``): no time.
SIZE_SUFFIXES = frozenset(SIZE_UNITS)
NOT_TIME_SUFFIXES = SIZE_SUFFIXES | frozenset(WORK_UNITS)
# The phase that is JAX's cost whatever the script does: a change there is JAX's, not the user's.
JAX_IMPORT = "import"
FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


@dataclass(frozen=True)
class MetricKey:
    name: str  # program or jitted function; PROCESS or JSON for a plain script's figures
    kind: str  # a key of KINDS or PROCESS_ROWS; for JSON, the printed field's name

    @property
    def measured(self) -> Measured | None:
        """Its row of ``KINDS`` or ``PHASES``; None for a script's own number or an unknown kind."""
        if self.name == JSON:
            return None
        return (PROCESS_ROWS if self.name == PROCESS else KINDS).get(self.kind)

    @property
    def about_run_time(self) -> bool:
        """Whether it can move with the ops a program runs: a wall, dispatch or run time, or a
        script's own number (most often a time it took; not one named for a size or a count of
        work), not a compile, trace, lower or import time, nor memory."""
        if self.name == JSON:
            return self.kind.lower().rpartition("_")[2] not in NOT_TIME_SUFFIXES
        return self.measured.run_time if self.measured is not None else True

    def _what(self) -> str:
        if self.name == JSON:
            return "printed by the script"
        return self.measured.label if self.measured is not None else self.kind

    def label(self) -> str:
        if self.name == JSON:
            return f"{self.kind} ({self._what()})"
        return f"{self.name} · {self._what()}"

    @property
    def unit(self) -> str:
        """``ns``, ``bytes``, or "" for a script's own number (in its unit)."""
        if self.name == JSON:
            return ""
        return self.measured.unit if self.measured is not None else "ns"

    @property
    def metric_name(self) -> str:
        """Its name on the command line and in the exported script's output: ``scan.wall_ns``."""
        return f"{self.name}.{self.kind}" + (f"_{self.unit}" if self.unit else "")

    def quoted(self) -> str:
        """As prose names it: ``two_scans`` wall (until ready), ``process.trace_ns`` (tracing …)."""
        if self.name in (JSON, PROCESS):
            return f"`{self.metric_name}` ({self._what()})"
        return f"`{self.name}` {self._what()}"

    def format(self, value: float) -> str:
        """A figure in its unit: a duration, a size, or a number as printed (one whose name ends in
        a unit of time, ``json.solve_ms``, as a duration)."""
        if self.unit == BYTES:
            return format_bytes(value)
        if self.in_ns:
            return format_ns(value)
        scale = self.ns_per_unit
        return format_ns(value * scale) if scale is not None else f"{value:.4g}"

    @property
    def in_ns(self) -> bool:
        return self.unit == "ns"

    @property
    def ns_per_unit(self) -> float | None:
        """For a script's own number whose name ends in a unit of time (``_s``, ``_ms``, ``_us``,
        ``_ns``), the nanoseconds in one; None for any other."""
        parts = self.kind.split("_")
        # items_per_s is a rate, not a time
        if self.name != JSON or len(parts) < 2 or parts[-2] == "per":
            return None
        return TIME_SUFFIXES.get(parts[-1])

    @property
    def is_duration(self) -> bool:
        """A time, so a rise is *slower*: every timing, and a script's ``_ms`` number."""
        return self.in_ns or self.ns_per_unit is not None

    @property
    def named_for_unit(self) -> bool:
        """Whether a script's own number is named for a unit of what it costs (``COST_UNITS``):
        ``temp_mb``, ``compile_ms``, ``flops``, ``bytes_per_step``; not a rate (``items_per_s``)."""
        words = self.kind.lower().split("_")
        head = words[: words.index("per")] if "per" in words else words
        return self.name == JSON and bool(head) and head[-1] in COST_UNITS

    @property
    def is_jax_import(self) -> bool:
        return self.name == PROCESS and self.kind == JAX_IMPORT


# What a cost measures, as a why's kinds read it: each judges a step by its own counterpart.
COMPILE_TIME, MEMORY_SIZE, RUN_TIME = "compile", "memory", "run"
COMPILE_WORDS = frozenset({"compile", "compilation", "compiled", "compiling"})


def measures(key: MetricKey) -> str:
    """What a cost ``key`` measures: a compile time, memory, a run time, or "" for none of them (a
    phase before any program runs, a count of work)."""
    words = key.kind.lower().split("_")
    if key.kind == "compile" or (key.name == JSON and COMPILE_WORDS & set(words)):
        return COMPILE_TIME
    if key.unit == BYTES or (key.name == JSON and ("bytes" in words or words[-1] in SIZE_SUFFIXES)):
        return MEMORY_SIZE
    if key.about_run_time:
        return RUN_TIME
    return ""


def parse_metric_name(text: str) -> MetricKey:
    """``PROGRAM.KIND_ns`` (or ``PROGRAM.KIND``), ``process.PHASE_ns`` or ``json.FIELD`` → its key;
    else refused."""
    name, dot, kind = text.rpartition(".")
    if name == JSON and FIELD.fullmatch(kind):
        return MetricKey(JSON, kind)
    unit = next((u for u in ("ns", BYTES) if kind.endswith(f"_{u}")), "")
    kind = kind.removesuffix(f"_{unit}") if unit else kind
    known = PROCESS_ROWS if name == PROCESS else KIND_LABELS
    if not dot or not name or kind not in known or (unit and unit != MetricKey(name, kind).unit):
        kinds = ", ".join(f"{k}_ns" for k in KIND_LABELS)
        phases = ", ".join(MetricKey(PROCESS, k).metric_name.partition(".")[2] for k in PHASES)
        raise UsageError(
            f"malformed metric {text[:80]!r}: expected PROGRAM.KIND, KIND one of {kinds} (e.g. "
            f"scan.wall_ns); also process.end (how the processes end), and for a plain script "
            f"process.PHASE ({phases}) or json.FIELD"
        )
    return MetricKey(name, kind)


def reading_rank(key: MetricKey) -> int:
    """Where a metric comes in an answer (lower first); metrics of one rank keep their own order:
    what the script or case itself measures, then JAX's phases, then the whole process, its memory,
    and JAX's import (the same on every script, rarely the surprise)."""
    if key.name == JSON:
        return 0
    return key.measured.rank if key.measured is not None else (2 if key.name == PROCESS else 0)


class Judged(Enum):
    """What a range's releases are judged by.  Each: the flag that asks for it, its part of an
    answer's file name and a step's record, where it comes in an answer (its metrics: in reading
    order), and how a page says it; a new one is one member here and its flag."""

    METRIC = ("--metric", "", 0, "one metric")
    CLAIM = ("--claim", "claim", -1, "the case's claim")
    EVERY = ("", "all", 9, "every metric and the claim")

    def __init__(self, flag: str, stem: str, rank: int, said: str) -> None:
        self.flag, self.stem, self.rank, self.said = flag, stem, rank, said

    @classmethod
    def named(cls, stem: str) -> Judged | None:
        """By a record's stem (``claim``, ``all``); None for a metric."""
        return next((judged for judged in cls if judged.stem and judged.stem == stem), None)


@dataclass(frozen=True)
class Criterion:
    """What a bisect, sweep or triage judges by, from the command line to the answer: one metric
    (typed; ``process.end``, how the processes end, is one, spelt ``--status``), or another of
    ``Judged``; ``name`` and ``words`` say it again as a file name and a command line do."""

    by: Judged
    metric: MetricKey | None = None  # with ``Judged.METRIC``

    @classmethod
    def of(cls, metric: MetricKey | None, by: Judged = Judged.EVERY) -> Criterion:
        return cls(Judged.METRIC, metric) if metric is not None else cls(by)

    @classmethod
    def named(cls, name: str) -> Criterion:
        """The criterion a record names (its ``name``; ``status``, as records written before the
        ending was a metric name it, is ``process.end``); UsageError for one no criterion has."""
        if names_ending(name):
            return cls.of(ENDING)
        judged = Judged.named(name)
        return cls(judged) if judged is not None else cls.of(parse_metric_name(name))

    @property
    def is_claim(self) -> bool:
        return self.by is Judged.CLAIM

    @property
    def ending(self) -> bool:
        """Whether it is how the processes end (``process.end``)."""
        return self.metric == ENDING

    @property
    def figures(self) -> MetricKey | None:
        """The metric whose figures are judged; None for the ending, the claim, every metric."""
        return None if self.ending else self.metric

    @property
    def explained(self) -> bool:
        """Whether a why can be asked of a step by it: one metric (``process.end`` too); not the
        claim, nor every metric at once."""
        return self.by is Judged.METRIC

    @property
    def name(self) -> str:
        """As a file name and a record say it: the metric's name, ``claim``, ``all``."""
        return self.metric.metric_name if self.metric is not None else self.by.stem

    def words(self) -> list[str]:
        """The command-line words that ask for it again (``--status`` for the ending)."""
        if self.ending:
            return ["--status"]
        named = [self.metric.metric_name] if self.metric is not None else []
        return [self.by.flag, *named] if self.by.flag else []

    def said(self) -> str:
        """``metric scan.wall_ns (scan · wall …)``, or its words."""
        if self.metric is not None:
            return f"metric {self.metric.metric_name} ({self.metric.label()})"
        return self.by.said

    def rank(self) -> int:
        """Where it comes in an answer, lower first: how its processes end, the claim, metrics."""
        return reading_rank(self.metric) if self.metric is not None else self.by.rank


ENDING = MetricKey(PROCESS, "end")


def names_ending(name: object) -> bool:
    """Whether a record's criterion or metric names how the processes end (``process.end``)."""
    return name in (ENDING.metric_name, LEGACY_ENDING)
