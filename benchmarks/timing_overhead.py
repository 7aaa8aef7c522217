"""Timing overhead of the harness against a bare ``perf_counter_ns`` loop, in one process.

Both time the same no-op jitted call to completion; the difference of their medians
is what the harness's bookkeeping (step marks, output list, blocking on a list)
adds to each sample.  Run inside a session venv that has JAX, e.g.:

    .nox/tests/bin/python benchmarks/timing_overhead.py
"""

from __future__ import annotations

import gc
import statistics
import time

import jax
import jax.numpy as jnp

from harness.measure.timing import time_program

SAMPLES = 20_000
ROUNDS = 5


def bare_loop(f, x) -> list[int]:
    samples = []
    gc.disable()
    try:
        for _ in range(SAMPLES):
            start = time.perf_counter_ns()
            f(x).block_until_ready()
            samples.append(time.perf_counter_ns() - start)
    finally:
        gc.enable()
    return samples


def harness_loop(f, x) -> list[int]:
    timing = time_program(
        [("f(x)", lambda: f(x))],
        jax.block_until_ready,
        warmup=100,
        repeats=SAMPLES,
        max_seconds=1e9,
    )
    return [s.wall_ns for s in timing.samples]


def main() -> None:
    f = jax.jit(lambda x: x)
    x = jnp.zeros(())
    for _ in range(1000):
        f(x).block_until_ready()
    print(f"jax {jax.__version__}, {SAMPLES} samples per loop, {ROUNDS} interleaved rounds")
    differences = []
    for round_ in range(ROUNDS):
        bare = statistics.median(bare_loop(f, x))
        harness = statistics.median(harness_loop(f, x))
        differences.append(harness - bare)
        print(
            f"round {round_}: bare {bare / 1e3:.2f} µs, harness {harness / 1e3:.2f} µs, "
            f"overhead {(harness - bare) / 1e3:+.2f} µs"
        )
    print(
        f"median overhead per sample: {statistics.median(differences) / 1e3:+.2f} µs (goal < 1 µs)"
    )


if __name__ == "__main__":
    main()
