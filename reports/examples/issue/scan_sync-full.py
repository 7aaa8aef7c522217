"""Two back-to-back ``lax.scan`` calls with a jitted step: do they dispatch asynchronously?

Source: the discussion named in ``SOURCE`` (its ``test2``), on a GPU.  The user scans
``step`` (``X @ X @ X @ X @ X`` plus an add) over ``M`` stacked copies of an ``N``×``N``
matrix, twice in a row, and times the return of each scan and the completion of both.
With an expensive step and few iterations (``test2(10_000, 2)``) both scans returned
after 0.056 s and finished at 0.625 s: asynchronous.  With a cheap step and many
iterations (``test2(100, 10_000)``) the first returned at 0.273 s, the second at 0.512 s,
both done at 0.536 s: each scan ran to the end before Python got control back.

The answer (a JAX/XLA developer): on the GPU backend every loop iteration copies its
predicate back to the host to decide whether to run the next one, which synchronises
the stream with the host, so only work after the loop stays asynchronous; a fix that
launches the operations from a thread pool was tracked internally, with no date.  The
user asked whether a scan's trip count is not known statically; the developer agreed,
said XLA has a pass that detects static trip counts, and offered to look at the
optimized HLO to see why it did not apply.  On CPU the harness records that HLO fact
(``known_trip_count``) beside the timings; the verdict sees ``M`` and reports the time
per iteration.

Standalone script exported by jax-repro-harness from cases/scan_sync.py at sizes
M=2 N=600; it imports only jax, numpy and the standard library.  Run it with
``python scan_sync.py``.  It prints one line
``metric PROGRAM METRIC median=NS min=NS max=NS n=COUNT`` per figure, in nanoseconds
(``first_call_ns`` includes compilation; after warm-up, ``dispatch_ns`` is when Python
regained control and ``wall_ns`` when every output was ready), ``fact NAME JSON`` lines
for the case's facts if it records any, then
``claim holds: True|False — evidence`` for the claim:

Two back-to-back lax.scan calls both return control to Python before their work
completes: dispatch takes well under half of the time to completion.
"""

from __future__ import annotations

import functools
import gc
import inspect
import json
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

# ---- cases/scan_sync.py
# Two back-to-back ``lax.scan`` calls with a jitted step: do they dispatch asynchronously?

SOURCE = (
    '"Understanding asynchronous dispatch and running multiple functions in parallel" (markus7800, answered '
    "by ezhulenev); its URL was not found"
)
CLAIM = (
    "Two back-to-back lax.scan calls both return control to Python before their work "
    "completes: dispatch takes well under half of the time to completion."
)
SIZE_SPACE = {"N": (16, 2048), "M": (1, 20000)}
# The discussion's test2(10_000, 2) and test2(100, 10_000), scaled to seconds on two CPU cores.
ANCHORS = [{"N": 600, "M": 2}, {"N": 100, "M": 500}]
COST = {"bytes": "4 * (4 * M * N * N + 8 * N * N)", "flops": "2 * M * (8 * N ** 3 + N * N)"}
# Its programs run on one device: under cpu8 the other seven would sit idle (the harness skips it there).
DEVICES_USED = 1
ASYNC_FRACTION = 0.5


@functools.cache  # programs() and compiled() share one set of inputs
def _inputs(N, M):
    # Drawn with NumPy: jax.random (and jnp.stack) would compile their own programs in every fresh process.
    rng = np.random.default_rng(0)
    x1, x2 = rng.standard_normal((2, N, N), dtype=np.float32)
    X1, X2, Xs1, Xs2 = (jnp.asarray(a) for a in (x1, x2, np.stack([x1] * M), np.stack([x2] * M)))
    jax.block_until_ready((Xs1, Xs2))
    return X1, X2, Xs1, Xs2


@jax.jit
def step(val, X):
    X = X @ X @ X @ X @ X
    return val + X, None


def programs(N, M):
    X1, X2, Xs1, Xs2 = _inputs(N, M)
    return {
        "two_scans": [
            ("scan 1", lambda: jax.lax.scan(step, X1, Xs1)[0]),
            ("scan 2", lambda: jax.lax.scan(step, X2, Xs2)[0]),
        ]
    }


def compiled(N, M):
    X1, _, Xs1, _ = _inputs(N, M)
    return {"scan": (jax.jit(lambda X, Xs: jax.lax.scan(step, X, Xs)[0]), (X1, Xs1))}


def verdict(m, N, M):
    scans = m["two_scans"]
    fraction = scans["dispatch_ns"] / scans["wall_ns"]
    evidence = (
        f"scan 1 returned at {scans['mark:scan 1'] / 1e6:.3f} ms, scan 2 at {scans['mark:scan 2'] / 1e6:.3f} ms, "
        f"both done at {scans['wall_ns'] / 1e6:.3f} ms (dispatch {fraction:.0%} of completion; "
        f"{scans['wall_ns'] / (2 * M) / 1e3:.1f} µs per iteration of {M} at N={N})"
    )
    return fraction < ASYNC_FRACTION, evidence


# ---- measure/figures.py
# The figure lines an exported script prints, and reading them back: the format's one owner.

CLAIM_PREFIX = "claim holds: "
FACT_PREFIX = "fact "


def figure_line(program: str, metric: str, values: Sequence[float]) -> str:
    ordered = sorted(values)
    return (
        f"metric {program} {metric} median={statistics.median(ordered):.0f} "
        f"min={ordered[0]:.0f} max={ordered[-1]:.0f} n={len(ordered)}"
    )


# ---- measure/timing.py
# Async-aware timing, after JAX's benchmarking guide.

Step = tuple[str, Callable[[], Any]]
Block = Callable[[Any], Any]
Clock = Callable[[], int]


# Iterations per sample at most: a program of a few nanoseconds is not worth more.
MAX_LOOPS = 10_000


@dataclass
class Sample:
    marks_ns: list[int]
    wall_ns: int

    @property
    def dispatch_ns(self) -> int:
        return self.marks_ns[-1]


@dataclass
class ProgramTiming:
    labels: list[str]
    first_call: Sample
    warmup: int
    samples: list[Sample] = field(default_factory=list)
    stopped_by: str = "repeats"
    loops: int = 1


@dataclass
class CompileTiming:
    lower_ns: list[int]
    compile_ns: list[int]


def run_once(
    steps: Sequence[Step],
    block: Block,
    clock: Clock = time.perf_counter_ns,
    *,
    keep: list[Any] | None = None,
) -> Sample:
    """One sample; ``keep``, when given, receives each step's output (to inspect what was dispatched)."""
    outputs = keep if keep is not None else []
    marks = []
    start = clock()
    for _, thunk in steps:
        outputs.append(thunk())
        marks.append(clock() - start)
    block(outputs)
    wall = clock() - start
    return Sample(marks, wall)


def run_loops(
    steps: Sequence[Step], block: Block, loops: int, clock: Clock = time.perf_counter_ns
) -> Sample:
    """``loops`` whole iterations of the program, each blocked on; their per-iteration mean."""
    if loops == 1:
        return run_once(steps, block, clock)
    totals = [0] * len(steps)
    wall = 0
    for _ in range(loops):
        sample = run_once(steps, block, clock)
        totals = [total + mark for total, mark in zip(totals, sample.marks_ns, strict=True)]
        wall += sample.wall_ns
    return Sample([round(total / loops) for total in totals], round(wall / loops))


def calibrate_loops(
    steps: Sequence[Step],
    block: Block,
    min_sample_ns: int,
    *,
    max_loops: int = MAX_LOOPS,
    clock: Clock = time.perf_counter_ns,
) -> int:
    """Iterations per sample (up to ``max_loops``) so that a sample lasts at least ``min_sample_ns``.

    Every guess is timed before it is taken, so one iteration that happened to be slow
    cannot leave the samples short; each guess aims 10 % over, so noise settles it in a
    guess or two.
    """
    loops = 1
    while True:
        spent = run_loops(steps, block, loops, clock).wall_ns * loops
        if spent >= min_sample_ns or loops >= max_loops:
            return loops
        wanted = -(
            -min_sample_ns * loops * 11 // (10 * max(spent, 1))
        )  # ceiling of 1.1 × the iterations it takes
        loops = min(max_loops, max(loops + 1, wanted))


def time_program(
    steps: Sequence[Step],
    block: Block,
    *,
    warmup: int = 2,
    repeats: int = 30,
    min_repeats: int = 5,
    max_seconds: float = 10.0,
    min_sample_ns: int = 0,
    max_loops: int = MAX_LOOPS,
    check_outputs: Callable[[list[Any]], None] | None = None,
) -> ProgramTiming:
    """Cold call, warm-up, loop calibration, then up to ``repeats`` samples with the collector off.

    Sampling stops early once ``max_seconds`` of samples are gathered, but never with
    fewer than ``min_repeats``; the reason is recorded so a short series is visible.
    With ``min_sample_ns`` 0 every sample is one iteration, as before calibration existed.
    ``check_outputs``, when given, inspects the cold call's step outputs (and may raise) before
    any warm-up; they are not held after it.
    """
    if not steps:
        raise ValueError("a program needs at least one step")
    outputs: list[Any] = []
    first = run_once(steps, block, keep=outputs)
    if check_outputs is not None:
        check_outputs(outputs)
    del outputs
    warm = first
    for _ in range(warmup):
        warm = run_once(steps, block)
    # A program whose warm-up already lasted a sample's minimum needs no calibration run (the
    # cold call does not tell: it includes tracing and compilation).
    long_enough = min_sample_ns <= 0 or (warmup > 0 and warm.wall_ns >= min_sample_ns)
    loops = (
        calibrate_loops(steps, block, min_sample_ns, max_loops=max_loops) if not long_enough else 1
    )
    timing = ProgramTiming(
        labels=[label for label, _ in steps], first_call=first, warmup=warmup, loops=loops
    )
    budget_ns = int(max_seconds * 1e9)
    gc.collect()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        spent = 0
        while len(timing.samples) < repeats:
            sample = run_loops(steps, block, loops)
            timing.samples.append(sample)
            spent += sample.wall_ns * loops
            if spent > budget_ns and len(timing.samples) >= min_repeats:
                timing.stopped_by = "time budget"
                break
    finally:
        if gc_was_enabled:
            gc.enable()
    return timing


def time_program_with(
    steps: Sequence[Step],
    block: Block,
    settings: Mapping[str, Any],
    *,
    check_outputs: Callable[[list[Any]], None] | None = None,
) -> ProgramTiming:
    """``time_program`` with the sampling settings the harness passes around as a dict."""
    return time_program(
        steps,
        block,
        warmup=settings["warmup"],
        repeats=settings["repeats"],
        min_repeats=settings["min_repeats"],
        max_seconds=settings["max_seconds"],
        min_sample_ns=settings.get("min_sample_ns", 0),
        check_outputs=check_outputs,
    )


def time_compile(
    jitted: Any,
    args: Sequence[Any],
    *,
    repeats: int = 3,
    clear_caches: Callable[[], Any] | None = None,
) -> tuple[CompileTiming, Any]:
    """Time ``lower`` (tracing included) and ``compile`` of a jitted function.

    JAX caches traces and executables, so a repeated ``lower().compile()`` would time
    a cache hit (microseconds).  ``clear_caches`` (``jax.clear_caches``) runs before
    every repetition so that each sample is a cold compile.  Returns the last executable.
    """
    timing = CompileTiming(lower_ns=[], compile_ns=[])
    executable = None
    for _ in range(max(1, repeats)):
        if clear_caches is not None:
            clear_caches()
        start = time.perf_counter_ns()
        lowered = jitted.lower(*args)
        lowered_at = time.perf_counter_ns()
        executable = lowered.compile()
        done = time.perf_counter_ns()
        timing.lower_ns.append(lowered_at - start)
        timing.compile_ns.append(done - lowered_at)
    return timing, executable


def judge_claim(
    verdict: Callable[..., Any], medians: dict[str, dict[str, float]], sizes: Mapping[str, int]
) -> Any:
    """``verdict(medians, **sizes)``; a verdict written with the medians as its only parameter gets those alone.

    The sizes let a claim be stated per iteration or per element; a one-parameter verdict
    (the older form) keeps working.
    """
    parameters = list(inspect.signature(verdict).parameters.values())
    takes_sizes = len(parameters) > 1 or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters
    )
    return verdict(medians, **sizes) if takes_sizes else verdict(medians)


# ---- upstream/standalone.py
# The measuring end of an exported script: time a case's programs, print figures, check the claim.

Programs = Callable[..., Mapping[str, Sequence[Step]]]
Compiled = Callable[..., Mapping[str, tuple[Any, Sequence[Any]]]]
JudgeClaim = Callable[..., tuple[Any, Any]]  # verdict(medians, **sizes), or verdict(medians)
Facts = Callable[..., Mapping[str, Any]]


def series(timed: ProgramTiming) -> dict[str, list[int]]:
    """Every figure of one program, named as a case's ``verdict`` knows them."""
    found = {
        "first_call_ns": [timed.first_call.wall_ns],
        "dispatch_ns": [s.dispatch_ns for s in timed.samples],
        "wall_ns": [s.wall_ns for s in timed.samples],
    }
    for i, label in enumerate(timed.labels):
        found[f"mark:{label}"] = [s.marks_ns[i] for s in timed.samples]
    return found


def compile_medians(cold: CompileTiming) -> dict[str, float]:
    return {
        "lower_ns": statistics.median(cold.lower_ns),
        "compile_ns": statistics.median(cold.compile_ns),
    }


def measure(
    programs: Programs,
    verdict: JudgeClaim,
    *,
    sizes: Mapping[str, int],
    settings: Mapping[str, Any],
    block: Block,
    compiled: Compiled | None = None,
    facts: Facts | None = None,
    clear_caches: Callable[[], Any] | None = None,
    emit: Callable[[str], Any] = print,
) -> tuple[bool, str]:
    """Time as the harness does (compiled entries first, then each program), print, judge."""
    medians: dict[str, dict[str, float]] = {}
    if compiled is not None:
        for name, (jitted, args) in compiled(**sizes).items():
            cold, _ = time_compile(
                jitted, args, repeats=settings["compile_repeats"], clear_caches=clear_caches
            )
            emit(figure_line(name, "lower_ns", cold.lower_ns))
            emit(figure_line(name, "compile_ns", cold.compile_ns))
            medians[f"compiled:{name}"] = compile_medians(cold)
    for name, steps in programs(**sizes).items():
        timed = time_program_with(steps, block, settings)
        medians[name] = {}
        for metric, values in series(timed).items():
            emit(figure_line(name, metric, values))
            medians[name][metric] = statistics.median(values)
    if facts is not None:
        for key, value in facts(**sizes).items():
            emit(f"{FACT_PREFIX}{key} {json.dumps(value, sort_keys=True, default=str)}")
    holds, evidence = judge_claim(verdict, medians, sizes)
    emit(f"{CLAIM_PREFIX}{bool(holds)} — {evidence}")
    return bool(holds), str(evidence)


def main(
    programs: Programs,
    verdict: JudgeClaim,
    *,
    sizes: Mapping[str, int],
    settings: Mapping[str, Any],
    compiled: Compiled | None = None,
    facts: Facts | None = None,
    min_devices: int = 1,
) -> None:
    import importlib.metadata

    import jax

    try:
        jaxlib_version = importlib.metadata.version("jaxlib")
    except importlib.metadata.PackageNotFoundError:
        jaxlib_version = "unknown"
    print(
        f"jax {jax.__version__} jaxlib {jaxlib_version} backend {jax.default_backend()} devices {jax.device_count()}"
    )
    print("sizes " + " ".join(f"{name}={value}" for name, value in sizes.items()))
    if jax.device_count() < min_devices:
        # Device flags only apply before JAX starts, so the script cannot set them itself.
        raise SystemExit(
            f"needs {min_devices} devices, found {jax.device_count()}: on CPU, run with "
            f"XLA_FLAGS=--xla_force_host_platform_device_count={min_devices}"
        )
    measure(
        programs,
        verdict,
        sizes=sizes,
        settings=settings,
        block=jax.block_until_ready,
        compiled=compiled,
        facts=facts,
        clear_caches=getattr(jax, "clear_caches", None),
    )


# The measurement: sizes and settings as exported; main() times, prints and judges.

SIZES = {"N": 600, "M": 2}
SETTINGS = {"warmup": 2, "repeats": 20, "min_repeats": 5, "max_seconds": 2.0, "compile_repeats": 3, "min_sample_ns": 1000000}

if __name__ == "__main__":
    main(programs, verdict, sizes=SIZES, settings=SETTINGS, compiled=compiled)
