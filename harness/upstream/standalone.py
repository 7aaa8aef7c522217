"""The measuring end of an exported script: time a case's programs, print figures, check the claim.

``harness.upstream.export`` inlines what a script needs of this module into it, so it imports only
the standard library at module level and JAX inside ``main``.  The printed format has one owner,
``harness.measure.figures``; the verdict sees the same view (and sizes) as in the harness
(``harness.measure.child.medians``).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.measure.figures import CLAIM_PREFIX, FACT_PREFIX, figure_line
from harness.measure.timing import (
    Block,
    CompileTiming,
    ProgramTiming,
    Step,
    judge_claim,
    time_compile,
    time_program_with,
)

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
        f"jax {jax.__version__} jaxlib {jaxlib_version} backend {jax.default_backend()} devices "
        f"{jax.device_count()}"
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
