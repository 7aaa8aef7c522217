"""Async-aware timing, after JAX's benchmarking guide.

A *program* is a list of steps ``(label, thunk)``: each thunk dispatches JAX work and
returns its output without waiting for it.  One sample runs every step in order,
records the time at which Python regained control after each step (the *marks*),
then blocks on all outputs and records the wall time.  So ``dispatch`` (last mark)
and ``wall`` are separate by construction, compile time is measured apart from both
(first call, and ``lower``/``compile`` for jitted functions), and every raw sample
is kept in nanoseconds from ``time.perf_counter_ns``.

This module imports only the standard library so that the issue-draft exporter can
inline it into a standalone script; the blocking function is injected.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Step = tuple[str, Callable[[], Any]]
Block = Callable[[Any], Any]


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


@dataclass
class CompileTiming:
    lower_ns: list[int]
    compile_ns: list[int]


def run_once(steps: Sequence[Step], block: Block, clock: Callable[[], int] = time.perf_counter_ns) -> Sample:
    outputs = []
    marks = []
    start = clock()
    for _, thunk in steps:
        outputs.append(thunk())
        marks.append(clock() - start)
    block(outputs)
    wall = clock() - start
    return Sample(marks, wall)


def time_program(
    steps: Sequence[Step],
    block: Block,
    *,
    warmup: int = 2,
    repeats: int = 30,
    min_repeats: int = 5,
    max_seconds: float = 10.0,
) -> ProgramTiming:
    """Cold call, warm-up, then up to ``repeats`` samples with the collector off.

    Sampling stops early once ``max_seconds`` of samples are gathered, but never with
    fewer than ``min_repeats``; the reason is recorded so a short series is visible.
    """
    if not steps:
        raise ValueError("a program needs at least one step")
    first = run_once(steps, block)
    for _ in range(warmup):
        run_once(steps, block)
    timing = ProgramTiming(labels=[label for label, _ in steps], first_call=first, warmup=warmup)
    budget_ns = int(max_seconds * 1e9)
    gc.collect()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        spent = 0
        while len(timing.samples) < repeats:
            sample = run_once(steps, block)
            timing.samples.append(sample)
            spent += sample.wall_ns
            if spent > budget_ns and len(timing.samples) >= min_repeats:
                timing.stopped_by = "time budget"
                break
    finally:
        if gc_was_enabled:
            gc.enable()
    return timing


def time_program_with(steps: Sequence[Step], block: Block, settings: Mapping[str, Any]) -> ProgramTiming:
    """``time_program`` with the sampling settings the harness passes around as a dict."""
    return time_program(
        steps,
        block,
        warmup=settings["warmup"],
        repeats=settings["repeats"],
        min_repeats=settings["min_repeats"],
        max_seconds=settings["max_seconds"],
    )


def time_compile(
    jitted: Any, args: Sequence[Any], *, repeats: int = 3, clear_caches: Callable[[], Any] | None = None
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
