"""Async-aware timing, after JAX's benchmarking guide.

A *program* is a list of steps ``(label, thunk)``, each dispatching JAX work and returning its
output without waiting. A sample runs every step, records when Python regained control after each
(the *marks*), then blocks on all outputs and records the wall time: ``dispatch`` (last mark) and
``wall`` are apart by construction, compile time apart from both. A program far shorter than the
clock's resolution runs in *loops* (after pyperf), a sample storing per-iteration means. Standard
library only, the blocking function injected: the issue draft's exporter inlines it.
"""

from __future__ import annotations

import gc
import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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
    """One sample; ``keep`` receives each step's output (to inspect what was dispatched)."""
    outputs = keep if keep is not None else []
    marks = []
    start = clock()
    for _, thunk in steps:
        outputs.append(thunk())
        marks.append(clock() - start)
    block(outputs)
    return Sample(marks, clock() - start)


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
    """Iterations per sample (up to ``max_loops``) so that a sample lasts ``min_sample_ns``. Every
    guess is timed before it is taken, so one slow iteration cannot leave the samples short; each
    aims 10 % over, so noise settles it in a guess or two."""
    loops = 1
    while True:
        spent = run_loops(steps, block, loops, clock).wall_ns * loops
        if spent >= min_sample_ns or loops >= max_loops:
            return loops
        # ceiling of 1.1 × the iterations it takes
        wanted = -(-min_sample_ns * loops * 11 // (10 * max(spent, 1)))
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
    check_outputs: Callable[[list[Any]], None] | None = None,
) -> ProgramTiming:
    """Cold call, warm-up, loop calibration, then up to ``repeats`` samples with the collector off,
    fewer once ``max_seconds`` of samples are gathered (never under ``min_repeats``; the reason is
    recorded). ``check_outputs`` inspects the cold call's step outputs (and may raise)."""
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
    loops = 1 if long_enough else calibrate_loops(steps, block, min_sample_ns)
    labels = [label for label, _ in steps]
    timing = ProgramTiming(labels=labels, first_call=first, warmup=warmup, loops=loops)
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
    sampling = ("warmup", "repeats", "min_repeats", "max_seconds", "min_sample_ns")
    given = {name: settings[name] for name in sampling if name in settings}
    return time_program(steps, block, check_outputs=check_outputs, **given)


def time_compile(
    jitted: Any,
    args: Sequence[Any],
    *,
    repeats: int = 3,
    clear_caches: Callable[[], Any] | None = None,
) -> tuple[CompileTiming, Any]:
    """Time ``lower`` (tracing included) and ``compile`` of a jitted function; the last executable.
    JAX caches traces and executables, so ``clear_caches`` (``jax.clear_caches``) runs before every
    repetition: a repeated ``lower().compile()`` would time a cache hit."""
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
    """``verdict(medians, **sizes)``, so a claim can be stated per iteration or per element; a
    verdict written with the medians as its only parameter (the older form) gets those alone."""
    parameters = list(inspect.signature(verdict).parameters.values())
    takes_sizes = len(parameters) > 1 or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters
    )
    return verdict(medians, **sizes) if takes_sizes else verdict(medians)
