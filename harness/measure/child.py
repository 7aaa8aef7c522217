"""The case process: one case at one size point (or a plain script), its ``ProcessRun`` written to
its request's ``out`` file, from which and its exit code the harness decides its status.

Forked by a side's worker or, with ``spawn`` isolation, run as ``python -m harness.measure.child``:
the profile's XLA flags apply from process start, and whatever the case does cannot harm the sweep.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import importlib.util
import json
import os
import resource
import sys
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from harness.host.environment import jax_facts, scrub, scrub_value
from harness.measure import hlo, script_hook, timing
from harness.measure.script_process import run_script
from harness.stats import summarize
from harness.store.schema import (
    CompiledFunction,
    JaxFacts,
    ProcessClaim,
    ProcessRun,
    RunStatus,
    StoredProgram,
    TimedSample,
    read_record,
)

TRACEBACK_LINES = 25
DETAIL_CHARS = 4000  # of a failure's traceback kept in the result


class Phases(dict[str, float]):
    """Seconds spent in each phase of a case run, for the sweep benchmark's breakdown."""

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self[name] = self.get(name, 0.0) + time.perf_counter() - start


class Skip(Exception):
    """Raised inside the child when a case cannot run here (too few devices...)."""


def device_skip(needed: int, used: int | None, found: int, cpu: bool) -> str:
    """Why a case needing ``needed`` devices, using ``used``, is not run on ``found``; "" if run."""
    if found < needed:
        profile = "run it under a multi-device profile, e.g. cpu8"
        return f"needs {needed} devices, found {found} ({profile})"
    if used is not None and found > used and cpu:
        return (
            f"uses {used} device{'' if used == 1 else 's'} (DEVICES_USED) and this profile made "
            f"{found} CPU devices: the others would sit idle, so the one-device profile (cpu) "
            "measures what this would"
        )
    return ""


def host_device_count(jax: Any) -> int:
    """The host platform's devices beside an accelerator, where the profile lists that platform
    (the GPU profiles do): a case that needs more devices than a lone GPU runs on those."""
    try:
        return len(jax.devices("cpu"))
    except RuntimeError:  # the platform is not listed: JAX_PLATFORMS=cuda alone
        return 0


def device_peak_bytes(jax: Any) -> int | None:
    """The accelerator's own peak memory in use over this process, the most of its devices, where
    its backend's ``memory_stats()`` gives one (TPU and GPU do; the CPU's backend is not asked)."""
    if jax.default_backend() == "cpu":
        return None
    peaks = [(device.memory_stats() or {}).get("peak_bytes_in_use") for device in jax.devices()]
    found = [peak for peak in peaks if isinstance(peak, int) and not isinstance(peak, bool)]
    return max(found) if found else None


def load_case(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"cases.{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load case file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def stored_sample(sample: timing.Sample) -> TimedSample:
    return TimedSample(tuple(sample.marks_ns), sample.wall_ns)


def program_record(prog: timing.ProgramTiming) -> StoredProgram:
    dispatch = summarize([s.dispatch_ns for s in prog.samples])
    wall = summarize([s.wall_ns for s in prog.samples])
    return StoredProgram(
        steps=tuple(prog.labels),
        samples=tuple(stored_sample(s) for s in prog.samples),
        first_call=stored_sample(prog.first_call),
        warmup=prog.warmup,
        loops=prog.loops,
        stopped_by=prog.stopped_by,
        summary={"dispatch_ns": dispatch.as_dict(), "wall_ns": wall.as_dict()},
    )


def medians(
    programs: Mapping[str, StoredProgram], compiled: Mapping[str, CompiledFunction]
) -> dict[str, dict[str, float]]:
    """The view a case's ``verdict`` sees: medians per program and per ``"compiled:<name>"``."""
    view: dict[str, dict[str, float]] = {}
    for name, function in compiled.items():
        lower, compile_ = summarize(function.lower_ns), summarize(function.compile_ns)
        view[f"compiled:{name}"] = {"lower_ns": lower.median, "compile_ns": compile_.median}
    for name, program in programs.items():
        entry = {
            "dispatch_ns": summarize([s.dispatch_ns for s in program.samples]).median,
            "wall_ns": summarize([s.wall_ns for s in program.samples]).median,
        }
        for i, label in enumerate(program.steps):
            entry[f"mark:{label}"] = summarize([s.marks_ns[i] for s in program.samples]).median
        assert program.first_call is not None, "a case's program always times its cold call"
        entry["first_call_ns"] = program.first_call.wall_ns
        view[name] = entry
    return view


class NothingDispatched(Exception):
    """A step returned no JAX array: its time is Python's, not JAX's, and no measurement."""


def check_dispatched(jax: Any, program: str, labels: Sequence[str], outputs: Sequence[Any]) -> None:
    """Refuse a step whose cold call's output holds no JAX array."""
    for label, output in zip(labels, outputs, strict=True):
        leaves = jax.tree_util.tree_leaves(output)
        if not any(isinstance(leaf, jax.Array) for leaf in leaves):
            kinds = ", ".join(sorted({type(leaf).__name__ for leaf in leaves})) or "nothing"
            raise NothingDispatched(
                f"program {program}, step {label} returned {kinds}, no JAX array: nothing was "
                "dispatched to JAX, so its time is not JAX's; a step must return the arrays it "
                "dispatched"
            )


class CaseError(TypeError):
    """What a case returned cannot be stored: the process fails with this, measured or not."""


def execute(
    module: ModuleType, sizes: dict[str, int], settings: dict[str, Any], phase: Phases
) -> ProcessRun:
    needed = int(getattr(module, "MIN_DEVICES", 1))
    # JAX where the case imports it (directly or through ``cases.compat``), not as ``sys.modules``
    # says: a forked case process has JAX from its worker even for plain Python.
    uses = any(
        isinstance(value, ModuleType) and value.__name__.split(".")[0] in ("jax", "cases")
        for value in vars(module).values()
    )
    jax = sys.modules.get("jax") if uses else None
    configured = script_hook.configure_jax(os.environ) if jax is not None else {}
    if jax is not None:
        with phase("backend"):
            found = jax.device_count()
            if found < needed and jax.default_backend() != "cpu":
                found = max(found, host_device_count(jax))
        used, cpu = getattr(module, "DEVICES_USED", None), jax.default_backend() == "cpu"
        if reason := device_skip(needed, used, found, cpu):
            raise Skip(reason)
    block: timing.Block = jax.block_until_ready if jax is not None else (lambda outputs: outputs)
    clear_caches = getattr(jax, "clear_caches", None)
    compiled: dict[str, CompiledFunction] = {}
    if hasattr(module, "compiled"):
        with phase("build"):
            targets = module.compiled(**sizes)
        with phase("compile"):
            for name, (jitted, args) in targets.items():
                cold, executable = timing.time_compile(
                    jitted, args, repeats=settings["compile_repeats"], clear_caches=clear_caches
                )
                lower_ns, compile_ns = tuple(cold.lower_ns), tuple(cold.compile_ns)
                compiled[name] = CompiledFunction(lower_ns, compile_ns, hlo.facts(executable))
    with phase("build"):
        built = module.programs(**sizes)
    if not isinstance(built, dict):
        kind = type(built).__name__
        raise CaseError(f"programs() must return a dict of program names to steps, not {kind}")
    programs: dict[str, StoredProgram] = {}
    profiling = jax is not None and script_hook.start_profile(os.environ)  # the runs only
    for name, steps in built.items():
        labels = [label for label, _ in steps]
        if not isinstance(name, str) or not all(isinstance(label, str) for label in labels):
            not_text = f"has a name or step label that is not text: {labels!r:.200}"
            raise CaseError(f"programs(): program {name!r} {not_text}")
        check = None if jax is None else functools.partial(check_dispatched, jax, name, labels)
        with phase("measure"):
            prog = timing.time_program_with(steps, block, settings, check_outputs=check)
        programs[name] = program_record(prog)
    if profiling:
        script_hook.stop_profile()
    facts = module.facts(**sizes) if hasattr(module, "facts") else {}
    if not isinstance(facts, dict) or not all(isinstance(key, str) for key in facts):
        wanted = "facts() must return a dict of names to values"
        raise CaseError(f"{wanted}, not {type(facts).__name__}: {facts!r:.200}")
    try:
        json.dumps(facts, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise CaseError(f"facts() returned what a result cannot hold: {str(exc)[:200]}") from None
    # with the jax options set for the process (a changed default tried)
    facts = dict(scrub_value(facts)) | {f"jax_config.{n}": v for n, v in configured.items()}
    holds, evidence = timing.judge_claim(module.verdict, medians(programs, compiled), sizes)
    claim = ProcessClaim(bool(holds), scrub(str(evidence)))
    return ProcessRun(
        0, RunStatus.OK, programs=programs, compiled=compiled, facts=facts, claim=claim
    )


def run(
    case_file: str | Path,
    sizes: dict[str, int],
    settings: dict[str, Any],
    script_sha256: str | None = None,
    script_args: Sequence[str] = (),
    fault_file: str | None = None,
    dump_at_unix_s: float | None = None,
    out: str = "",
    log: str = "",
    affinity: list[int] | None = None,
) -> ProcessRun:
    """Run a case (or, with ``script_sha256``, a plain script of that content) as a worker's
    request names it (``out``, ``log``, ``affinity`` are the worker's, taken so that an unknown key
    is refused). ``fault_file``: where Python's stack goes at a fatal signal and at
    ``dump_at_unix_s``; a plain script's own process writes it (its start-up hook)."""
    case_file = Path(case_file)
    phase = Phases()
    scripted = script_sha256 is not None
    script_hook.watch_faults(fault_file, None if scripted else dump_at_unix_s)
    if scripted and fault_file:
        os.environ[script_hook.FAULT_FILE] = fault_file
        if dump_at_unix_s:
            os.environ[script_hook.FAULT_AT] = str(dump_at_unix_s)
    try:
        if script_sha256 is not None:
            with phase("script"):
                process = run_script(case_file, script_sha256, args=tuple(script_args))
            # the side's JAX, for the record, once it ran
            with phase("facts"), contextlib.suppress(Exception):
                importlib.import_module("jax")
        else:
            with phase("import"):
                module = load_case(case_file)
            process = execute(module, sizes, settings, phase)
    except Exception as exc:
        compat = sys.modules.get("cases.compat")
        if isinstance(exc, Skip) or (compat is not None and isinstance(exc, compat.Unsupported)):
            process = ProcessRun(0, RunStatus.SKIPPED, str(exc))
        else:
            lines = traceback.format_exc().strip().splitlines()[-TRACEBACK_LINES:]
            # and of those the end: one line can be megabytes
            process = ProcessRun(0, RunStatus.FAILED, scrub("\n".join(lines)[-DETAIL_CHARS:]))
    if "jax" in sys.modules:
        with phase("facts"):
            try:
                jax = read_record(JaxFacts, jax_facts(), "jax")
            except Exception as exc:  # the case's own failure is the news, not this
                jax = JaxFacts(error=scrub(f"{type(exc).__name__}: {exc}"))
        device_peak = None
        if not scripted and jax.backend not in (None, "cpu"):  # a script's own process held it
            with phase("facts"), contextlib.suppress(Exception):
                device_peak = device_peak_bytes(sys.modules["jax"])
        claim = process.claim
        # a verdict holds for the backend it was judged on (GPU scans sync, CPU ones need not)
        if claim is not None:
            claim = dataclasses.replace(claim, backend=jax.backend or "unknown")
        process = dataclasses.replace(process, jax=jax, claim=claim, device_peak_bytes=device_peak)
    return dataclasses.replace(
        process,
        phases_s={name: round(seconds, 4) for name, seconds in phase.items()},
        # Linux reports KiB
        peak_rss_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    )


def run_request(request: Mapping[str, Any]) -> None:
    """Run a worker's request, writing the payload ``attempts.classify`` reads back."""
    Path(request["out"]).write_text(json.dumps(run(**request).to_json()))


def main(argv: list[str] | None = None) -> int:
    """``python -m harness.measure.child REQUEST_JSON`` (``spawn`` isolation)."""
    run_request(json.loads((sys.argv[1:] if argv is None else argv)[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
