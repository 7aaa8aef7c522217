"""A reproducer with jax alone, shown to reproduce the step (or not): what a maintainer asks first.

One extra process per side exports every program the script jits (``script_capture``); the older
side's programs are written beside the answer with a script that needs only jax
(``reproducer_text``), measured on both releases as any script is, each metric matched with its
``counterpart`` (tracing, lowering and jax's import come before any compiled program: none shows
them). Where a release refuses the other's export the other way is tried, then
one reproducer of each release's own export. One that fails where it was exported is none.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.analysis.metrics import compare_results
from harness.analysis.significance import MOVED, Comparison, Shape
from harness.analysis.spending import CHANGES
from harness.analysis.statuses import Ending, change_between, summarise
from harness.catalogue.scripts import read_script
from harness.errors import UsageError
from harness.explain.export_listing import MAX_FILE, read_export, removed
from harness.explain.tried import crashing_side, error_of
from harness.install.commit_venvs import is_commit_label
from harness.install.environments import Environments
from harness.install.venvs import export_tools
from harness.measure.script_capture import PROGRAM_FLAGS
from harness.measure.script_hook import EXPORT_DIR, EXPORT_TOOLS
from harness.measure.sides import Side
from harness.metric_names import (
    COMPILE_TIME,
    JSON,
    MEMORY_SIZE,
    PROCESS,
    RUN_TIME,
    Criterion,
    MetricKey,
    measures,
)
from harness.steps.evidence import Found, Step, StepSides
from harness.steps.probes import ReleaseProber
from harness.store.files import read_bounded, replace_file
from harness.store.results import StoredResult

# What the reproducer prints of its programs: their run time, their compile, their temporary bytes.
RUN, COMPILE, MEMORY = (MetricKey(JSON, name) for name in ("run_ms", "compile_ms", "temp_bytes"))
# Each program's own figures, as the reproducer prints them (``p<n>_call_ms`` and so on).
PER_PROGRAM = ("call_ms", "compile_ms", "temp_bytes")
COUNTERPARTS = {COMPILE_TIME: COMPILE, MEMORY_SIZE: MEMORY, RUN_TIME: RUN}


def counterpart(key: MetricKey, shape: Shape | None = None) -> MetricKey | str:
    """The reproducer's metric that shows what ``key`` measured (a compile by their compile, memory
    by their temporary bytes, a run time by theirs); or why none; ``shape``: None for a cost."""
    if shape is not None and not shape.ratio:
        return f"the reproducer prints no {shape} the programs compute, only their costs"
    if key.name == PROCESS and key.measured is not None and not key.measured.compiled:
        return "it happens before any compiled program runs"
    found = COUNTERPARTS.get(measures(key))
    if found is None:
        return "it is none of what the reproducer measures (compile time, run time, temp bytes)"
    return found


@dataclass(frozen=True)
class StatusReproduced:
    """The reproducer run on both releases: does it die where the script does?"""

    ended: dict[str, str] = field(default_factory=dict)  # release → ``ok in 3 of 3 processes``
    reproduces: bool = False

    def data(self) -> dict[str, Any]:
        return {"ended": dict(self.ended), "reproduces": self.reproduces}


def status_reproduced(
    step: Step, results: dict[str, StoredResult | None], change: Ending
) -> StatusReproduced:
    """Whether the reproducer's processes flip as the script's did, the same way round (how it dies
    may differ: a segfault on one CPU is a hang on another)."""
    ended = {
        label: summarise(stored).words() if stored is not None else "no result stored"
        for label, stored in results.items()
    }
    ends = [summarise(stored) for label in step.pair if (stored := results.get(label)) is not None]
    flipped = change_between(ends[0], ends[1], step.thresholds) if len(ends) == 2 else None
    return StatusReproduced(ended, change.same_way(flipped))


@dataclass(frozen=True)
class ReproducerAnswer:
    """A step's reproducer: where it is, what it holds, what measuring it showed."""

    before: str
    after: str
    folder: str = ""  # as the answer names it, beside the page
    script: str = ""  # the reproducer's file name in ``folder``
    exported_on: str = ""
    lines: int = 0
    programs: tuple[Mapping[str, Any], ...] = ()  # the listing: name, calls, inputs, or a problem
    note: str = ""  # the capture's own (a cap reached)
    # Each metric the step moved → the reproducer's counterpart and comparison (None: not measured).
    measured: Mapping[MetricKey, tuple[MetricKey, Comparison | None]] = field(default_factory=dict)
    # Each metric the reproducer has no counterpart of → why.
    unmatched: Mapping[MetricKey, str] = field(default_factory=dict)
    refused: tuple[str, ...] = ()  # one line per release that refused the other's artifact
    matched: tuple[int, int] = (0, 0)
    problem: str = ""  # why there is no reproducer
    left_out: int = 0  # programs whose own time and memory did not move, left out
    status: StatusReproduced | None = None
    kind: str = "reproducer"
    settles: bool = False

    def reproduces(self, metric: MetricKey, step: Comparison | None) -> bool | None:
        found = self.measured.get(metric)
        if step is None or found is None or found[1] is None:
            return None
        return found[1].verdict == step.verdict

    def data(self) -> dict[str, Any]:
        plain = ("kind", "before", "after", "folder", "script", "exported_on", "lines")
        return {
            **{name: getattr(self, name) for name in plain},
            "programs": list(self.programs),
            "note": self.note,
            "measured": {
                metric.metric_name: {
                    "counterpart": name.metric_name,
                    "verdict": None if found is None else found.verdict,
                    "ratio": found.cost.ratio if found and found.cost else None,
                }
                for metric, (name, found) in self.measured.items()
            },
            "unmatched": {metric.metric_name: why for metric, why in self.unmatched.items()},
            "refused": list(self.refused),
            "matched": list(self.matched),
            "problem": self.problem,
            "left_out": self.left_out,
            "status": None if self.status is None else self.status.data(),
        }


class Reproducer:
    name = "reproducer"

    def wanted(self, step: Step, found: tuple[Found, ...] = ()) -> bool:
        return bool(step.script) and step.changed and not any(map(is_commit_label, step.pair))

    def gather(
        self, step: Step, sides: StepSides, found: tuple[Found, ...] = ()
    ) -> ReproducerAnswer:
        folder = step.folder("reproducer")
        if step.ending:
            return status_reproducer(step, sides, folder)
        for label in step.pair:  # where each side's programs go: never a link planted there
            step.folder("reproducer", "captured", label)
        sides.afford(step, 2 + 2 * sides.processes, "its export and first look")
        captured = capture_both(sides, step, folder / "captured")
        answer = ReproducerAnswer(*step.pair, f"{step.kept('reproducer')}/")
        refused: list[str] = []
        problems: list[str] = []
        # the older release's programs first, then the other way round
        for exported_on in step.pair:
            listing = captured[exported_on]
            if isinstance(listing, str):
                problems.append(listing)
                continue
            script = write_reproducer(folder, folder / "captured" / exported_on, step, listing)
            answer, results = measure_reproducer(step, sides, script, exported_on, listing)
            answer = keep_what_moved(step, sides, folder, exported_on, listing, answer, results)
            refused += answer.refused
            problems += [answer.problem] if answer.problem else []
            if not answer.refused and not answer.problem:
                problems = []
                break
        else:
            if refused and not any(isinstance(found, str) for found in captured.values()):
                answer = own_exports(step, sides, folder, captured)
                problems = [answer.problem] if answer.problem else []
            elif refused:
                problems.append("neither release runs the other's export")
        said = "; ".join(dict.fromkeys(problems))
        return dataclasses.replace(
            answer, problem=said, refused=tuple(refused), matched=matched(captured)
        )


def status_reproducer(step: Step, sides: StepSides, folder: Path) -> ReproducerAnswer:
    """A status step's reproducer: exported from the release that runs (the other may die before it
    exports), run on both, judged by how its processes end."""
    answer = ReproducerAnswer(*step.pair, f"{step.kept('reproducer')}/")
    told = crashing_side(step, sides.prober.reuse.stored)
    if isinstance(told, str):
        return dataclasses.replace(answer, problem=told)
    crashing, change, _ = told
    runs = step.before if crashing == step.after else step.after
    captured = step.folder("reproducer", "captured", runs)
    listing = capture(sides, runs, captured)
    if isinstance(listing, str):
        return dataclasses.replace(answer, problem=listing)
    script = write_reproducer(folder, captured, step, listing)
    base = _written(step, script, runs, listing)
    measuring = reproducer_prober(sides, script, ())
    if isinstance(measuring, str):
        return dataclasses.replace(base, problem=measuring)
    sides.progress(
        f"  the reproducer {script.name} on {step.before} and {step.after}: do they end alike?"
    )
    measuring.measure_together(list(step.pair), decide="off")
    results = {label: measuring(label).result for label in step.pair}
    return dataclasses.replace(base, status=status_reproduced(step, results, change))


def _written(
    step: Step, script: Path, exported_on: str, listing: Mapping[str, Any]
) -> ReproducerAnswer:
    lines = len(script.read_text().splitlines())
    programs, note = tuple(listing.get("programs", ())), str(listing.get("note", ""))
    folder = f"{step.kept('reproducer')}/"
    return ReproducerAnswer(*step.pair, folder, script.name, exported_on, lines, programs, note)


def reproducer_prober(
    sides: StepSides, script: Path, decide: tuple[MetricKey, ...]
) -> ReleaseProber | str:
    """A prober of the reproducer on the step's releases; or why its script cannot be read."""
    try:
        case = read_script(script)
    except UsageError as exc:
        return str(exc)
    prober = sides.prober
    assert prober.environments is not None
    return ReleaseProber(
        prober.envs,
        case,
        {},
        prober.profile,
        prober.results_dir,
        prober.settings,
        prober.progress,
        max_processes=prober.max_processes,
        time_budget=sides.bounded(prober.time_budget),  # within the why's budget
        decide_on=tuple(Criterion.of(key) for key in decide),
        environments=Environments(case, prober.environments.profile, progress=prober.progress),
    )


def matched(captured: Mapping[str, dict[str, Any] | str]) -> tuple[int, int]:
    older, newer = (
        [
            json.dumps([p.get("name"), p.get("inputs")], sort_keys=True)
            for p in ([] if isinstance(listing, str) else listing.get("programs", []))
        ]
        for listing in captured.values()
    )
    return sum(each in newer for each in older), len(older)


# A program that calls back into Python cannot be serialized (``jax.export``: "serialization of
# host_callbacks is not yet implemented"); equinox's runtime checks (``eqx.error_if``, under every
# diffrax solve) are such callbacks, and equinox leaves them out with EQX_ON_ERROR=nan.
CALLBACKS = "host_callbacks"
WITHOUT_CHECKS = {"EQX_ON_ERROR": "nan"}
CHECKS_LEFT_OUT = (
    "exported with EQX_ON_ERROR=nan: equinox's runtime checks (host callbacks, which jax.export "
    "cannot serialize) left out of the programs"
)


def capture_both(sides: StepSides, step: Step, folder: Path) -> dict[str, dict[str, Any] | str]:
    """Each side's programs captured under ``folder/<label>``; where a program calls back into
    Python, again without equinox's runtime checks."""
    captured = {label: capture(sides, label, folder / label) for label in step.pair}
    if not any(isinstance(found, str) and CALLBACKS in found for found in captured.values()):
        return captured
    sides.progress("  a program calls back into Python: captured again with EQX_ON_ERROR=nan")
    again = {label: capture(sides, label, folder / label, WITHOUT_CHECKS) for label in step.pair}
    for listing in again.values():
        if isinstance(listing, dict):
            listing["note"] = "; ".join(filter(None, [CHECKS_LEFT_OUT, listing.get("note", "")]))
    return again


def capture(
    sides: StepSides, label: str, folder: Path, env: Mapping[str, str] | None = None
) -> dict[str, Any] | str:
    """One extra process of ``label`` exporting every program the script jits into ``folder``; its
    listing, or why none."""
    side = sides.side(label)
    if not isinstance(side, Side):
        return side
    tools = export_tools(Path(sides.prober.envs[label].venv).parent, Path(side.interpreter))
    if isinstance(tools, str):
        return tools
    removed(folder)  # a link planted at it removed, not followed
    folder.mkdir(parents=True)
    sides.progress(f"  the programs {label} compiles: one process, each jitted call exported")
    # Absolute: the script runs in its folder, where a relative one (``--out reports``) is another.
    wanted = {**(env or {}), EXPORT_DIR: str(folder.absolute()), EXPORT_TOOLS: str(tools)}
    ended = sides.one_more_process(side, env=wanted)
    listing = read_export(folder, label)  # the script's to write: data, checked, or refused
    if listing is None:
        return f"jax {label} exported no program (its process: {ended})"
    if isinstance(listing, str):
        return listing
    if not any("problem" not in program for program in listing.get("programs", [])):
        problems = [p.get("problem", "") for p in listing.get("programs", [])]
        said = listing.get("note") or "; ".join(p for p in problems if p)[:300] or "none was jitted"
        return f"jax {label} exported no program: {said}"
    return listing


OWN_FILES = 50  # the newer release's program_01 is the reproducer's program_51


def own_exports(
    step: Step, sides: StepSides, folder: Path, captured: Mapping[str, dict[str, Any] | str]
) -> ReproducerAnswer:
    """Where neither release reads the other's export: one reproducer of each release's own export
    of the same programs (``by_release``), run on each, measured on both; or why there is none."""
    older, newer = (captured[label] for label in step.pair)
    assert isinstance(older, dict) and isinstance(newer, dict)
    same, of = matched(captured)
    exported_on = f"{step.before} and {step.after}, each its own export"
    if same != of or len(newer.get("programs", [])) != of:
        problem = f"each release's own export holds other programs ({same} of {of} alike)"
        return ReproducerAnswer(*step.pair, f"{step.kept('reproducer')}/", problem=problem)
    theirs = str(newer["jax"])  # a version: each listing was read as data (export_listing)
    both = step.folder("reproducer", "captured", "both")  # never through a link planted there
    for stale in both.iterdir():
        removed(stale)
    renamed = []
    for number, program in enumerate(newer["programs"], start=1):
        own = f"program_{OWN_FILES + number:02d}"
        for path in (folder / "captured" / step.after).glob(f"{program['file']}.*"):
            _copy(path, both / f"{own}{path.suffix}")
        renamed.append({**program, "file": own})
    for path in (folder / "captured" / step.before).glob("program_*"):
        _copy(path, both / path.name)
    listing = {**older, "jax": f"{older['jax']} and {theirs}", "by_release": {theirs: renamed}}
    script = write_reproducer(folder, both, step, listing)
    return measure_reproducer(step, sides, script, exported_on, listing, proof=step.pair)[0]


def write_reproducer(folder: Path, captured: Path, step: Step, listing: Mapping[str, Any]) -> Path:
    for stale in [*folder.glob("program_*"), folder / "programs.json", *folder.glob("repro_*.py")]:
        removed(stale)  # a folder planted at one's name too
    programs = [*listing.get("programs", [])]
    programs += [p for own in listing.get("by_release", {}).values() for p in own]
    files = {str(program.get("file")) for program in programs}
    digest = hashlib.sha256()
    for path in sorted(captured.iterdir()):
        if path.stem not in files:
            continue
        digest.update(path.name.encode() + _copy(path, folder / path.name))
    listed = json.dumps(dict(listing), indent=1, sort_keys=True).encode()
    digest.update(listed)
    replace_file(folder / "programs.json", listed.decode())
    short = digest.hexdigest()[:10]
    name = f"repro_{short}.py"
    title = f"A reproducer of {step.script}'s step from jax {step.before} to {step.after}"
    text = reproducer_text(title, name, str(listing.get("jax", "")), short, traced_under(listing))
    replace_file(folder / name, text)
    return folder / name


def _copy(path: Path, to: Path) -> bytes:
    """A file of a checked export copied, never through a link; its bytes."""
    data = read_bounded(path, limit=MAX_FILE, follow_links=False)
    replace_file(to, data)
    return data


def traced_under(listing: Mapping[str, Any]) -> dict[str, Any]:
    programs = [program for program in listing.get("programs", []) if "problem" not in program]
    return {flag: value for p in programs for flag, value in p.get("config", {}).items()}


def keep_what_moved(
    step: Step,
    sides: StepSides,
    folder: Path,
    exported_on: str,
    listing: Mapping[str, Any],
    answer: ReproducerAnswer,
    results: Mapping[str, StoredResult | None],
) -> ReproducerAnswer:
    """Where only some of the programs moved on their own, the reproducer of those alone, measured
    again: kept where it moves as the whole one did; else the whole one is written back."""
    shown = moved_counterparts(answer)
    moved = moved_programs(listing, results, step)
    exported = [p for p in listing.get("programs", []) if "problem" not in p]
    if not shown or not moved or len(moved) == len(exported):
        return answer
    # Those jax.export could not take stay listed, each with its problem: a maintainer sees them.
    kept = [p for p in listing.get("programs", []) if "problem" in p or p.get("file") in moved]
    fewer = {**listing, "programs": kept}
    captured = folder / "captured" / exported_on
    sides.progress(
        f"  the reproducer again, the {len(moved)} of {len(exported)} programs that moved"
    )
    script = write_reproducer(folder, captured, step, fewer)
    again, _ = measure_reproducer(step, sides, script, exported_on, fewer)
    if not again.refused and shown.items() <= moved_counterparts(again).items():
        return dataclasses.replace(again, left_out=len(exported) - len(moved))
    write_reproducer(folder, captured, step, listing)
    return answer


def moved_counterparts(answer: ReproducerAnswer) -> dict[MetricKey, str]:
    return {
        metric: str(found.verdict)
        for metric, (_, found) in answer.measured.items()
        if found is not None and found.verdict in MOVED
    }


def moved_programs(
    listing: Mapping[str, Any], results: Mapping[str, StoredResult | None], step: Step
) -> list[str]:
    before, after = (results.get(label) for label in step.pair)
    moved = []
    for number, program in enumerate(listing.get("programs", []), start=1):
        if "problem" in program:
            continue
        for part in PER_PROGRAM:
            key = MetricKey(JSON, f"p{number}_{part}")
            found = compare_results(before, after, key, step.thresholds)
            if found is not None and found.verdict in MOVED:
                moved.append(str(program.get("file")))
                break
    return moved


def measure_reproducer(
    step: Step,
    sides: StepSides,
    script: Path,
    exported_on: str,
    listing: Mapping[str, Any],
    proof: tuple[str, ...] = (),
) -> tuple[ReproducerAnswer, Mapping[str, StoredResult | None]]:
    """The reproducer measured on both releases until its counterparts are decided, once it ran
    where it was exported (``proof``: on each of those); each compared, and each side's result."""
    found = {m: counterpart(m, step.shape_of(m)) for m in step.metrics}
    counterparts = {m: key for m, key in found.items() if isinstance(key, MetricKey)}
    unmatched = {m: why for m, why in found.items() if isinstance(why, str)}
    base = dataclasses.replace(_written(step, script, exported_on, listing), unmatched=unmatched)
    if not counterparts:
        return base, {}
    measuring = reproducer_prober(sides, script, tuple(dict.fromkeys(counterparts.values())))
    if isinstance(measuring, str):
        return dataclasses.replace(base, problem=measuring), {}
    for label in proof or (exported_on,):
        sides.progress(f"  the reproducer {script.name} on {label}, where it was exported: runs?")
        why = proven(measuring, label)
        if why:  # no reproducer: said with its own error and what it was run with, not measured
            return dataclasses.replace(base, problem=unproven(label, why, listing)), {}
    sides.progress(
        f"  the reproducer {script.name} on {step.before} and {step.after}, measured together"
    )
    measuring.measure_together(list(step.pair), decide=CHANGES)
    results = {label: measuring(label).result for label in step.pair}
    refused = tuple(
        filter(None, (_refusal(label, exported_on, results[label]) for label in step.pair))
    )
    if refused:
        return dataclasses.replace(base, refused=refused), results
    old, new = (results[label] for label in step.pair)
    measured = {
        metric: (key, compare_results(old, new, key, step.thresholds))
        for metric, key in counterparts.items()
    }
    return dataclasses.replace(base, measured=measured), results


def proven(measuring: ReleaseProber, label: str) -> str:
    """How the reproducer ended in one process of ``label``, where it was exported; "" if ok."""
    side = measuring.readiness.side(label)
    if not isinstance(side, Side):
        return side.note or "its venv could not be made"
    measurement = measuring.measurement
    with tempfile.TemporaryDirectory(prefix="harness-proof-") as scratch:
        ran = measurement.sides([side], measurement.settings_for(1, "off", 1), Path(scratch))
    result = ran[0][1] if ran else None
    if result is None:
        return "it stored no result"
    return "" if result.result.status == "ok" else f"{result.result.status}{error_of(result)}"


def unproven(exported_on: str, why: str, listing: Mapping[str, Any]) -> str:
    """Why there is no reproducer: it fails where it was exported, and what it was run with."""
    config = traced_under(listing)
    tried = [f"run with {', '.join(f'{k}={v}' for k, v in config.items())}"] if config else []
    tried += [str(listing["note"])] if listing.get("note") else []
    tail = f" (tried: {'; '.join(tried)})" if tried else ""
    return f"it does not run on jax {exported_on}, where it was exported: {why}{tail}"


def _refusal(label: str, exported_on: str, result: StoredResult | None) -> str:
    if result is not None and result.result.status == "ok":
        return ""
    if result is None:
        return f"jax {label} stored no result of the reproducer exported on {exported_on}"
    said = error_of(result)[:202] or f": {result.result.status}"
    return f"jax {label} cannot run what jax {exported_on} exported{said}"


# The reproducer's text: a short script that needs jax alone, runs the exported programs kept beside
# it (inputs kept, else generated alike), times their compile and as many calls as the script made,
# reads ``memory_analysis()``, and prints one JSON line. The programs' digest is in the text, so two
# reproducers of other programs are never one script.
REQUIREMENTS = ("flatbuffers", "absl-py")  # what jax.export needs to read a module, besides jax
# a program's calls timed at most; the total is scaled to the calls the script made
MOST_CALLS = 200

TEMPLATE = '''# /// script
# dependencies = [{requirements}]
# ///
"""{title}: the programs it compiled, exported with jax.export on jax {exported_on} (digest {digest}).
Run: pip install jax==VERSION jaxlib==VERSION {installs}; python {name}"""
import json, pathlib, statistics, time
import jax, jax.export, numpy as np
{config}
HERE, MOST_CALLS = pathlib.Path(__file__).parent, {most_calls}
found, rng = {{"compile_ms": 0.0, "run_ms": 0.0, "temp_bytes": 0}}, np.random.default_rng(0)
def leaf(kept, i, aval, said):  # the script's values where kept; else generated, ints as zeros
    if "key" in said:  # a typed PRNG key, kept as its raw data
        data = np.frombuffer(kept[f"a{{i}}"].tobytes(), np.uint32).reshape(*aval.shape, -1)
        return jax.random.wrap_key_data(data, impl=said["key"])
    if f"a{{i}}" in kept:
        return np.frombuffer(kept[f"a{{i}}"].tobytes(), aval.dtype).reshape(aval.shape)
    if np.dtype(aval.dtype).kind in "biu":
        return np.zeros(aval.shape, aval.dtype)
    return rng.standard_normal(aval.shape).astype(aval.dtype)
listing = json.loads((HERE / "programs.json").read_text())
# Where one release cannot read the other's export, each runs its own export of the same programs.
for n, program in enumerate(listing.get("by_release", {{}}).get(jax.__version__, listing["programs"]), 1):
    if "problem" in program:
        continue
    exported = jax.export.deserialize(bytearray((HERE / f"{{program['file']}}.jaxexport").read_bytes()))
    module = exported.mlir_module()  # jaxlib sets LAPACK and BLAS up as it lowers a call of them:
    if "lapack_" in module or "blas_" in module:  # one read from a file crashes without (0.4.31)
        jax.jit(jax.lax.linalg.lu).lower(np.eye(4, dtype=np.float32))
    kept = np.load(HERE / f"{{program['file']}}.npz")
    avals = zip(exported.in_avals, program["inputs"])
    leaves = [leaf(kept, i, aval, said) for i, (aval, said) in enumerate(avals)]
    args, kwargs = jax.tree_util.tree_unflatten(exported.in_tree, jax.device_put(leaves))
    donated = tuple(program.get("donated", ()))  # as the script donated them: each call a copy
    fresh = lambda: jax.tree_util.tree_map(lambda x: x.copy() if donated else x, (args, kwargs))
    began = time.perf_counter_ns()
    compiled = jax.jit(exported.call, donate_argnums=donated).lower(*args, **kwargs).compile()
    found[f"p{{n}}_compile_ms"] = (time.perf_counter_ns() - began) / 1e6
    a, k = fresh()
    jax.block_until_ready(compiled(*a, **k))  # warm-up
    times = []
    for _ in range(min(program["calls"], MOST_CALLS)):
        a, k = fresh()
        began = time.perf_counter_ns()
        jax.block_until_ready(compiled(*a, **k))
        times.append((time.perf_counter_ns() - began) / 1e6)
    found[f"p{{n}}_call_ms"] = statistics.median(times) if times else 0.0
    memory = getattr(compiled, "memory_analysis", lambda: None)()
    found[f"p{{n}}_temp_bytes"] = getattr(memory, "temp_size_in_bytes", 0) if memory else 0
    found["compile_ms"] += found[f"p{{n}}_compile_ms"]
    found["run_ms"] += found[f"p{{n}}_call_ms"] * program["calls"]
    found["temp_bytes"] = max(found["temp_bytes"], found[f"p{{n}}_temp_bytes"])
print(json.dumps(found))
'''  # noqa: E501


def reproducer_text(
    title: str, name: str, exported_on: str, digest: str, config: Mapping[str, Any] | None = None
) -> str:
    """The reproducer of one export named ``name``; ``config``: the jax flags in force when traced,
    set first (``jax_enable_x64``: without it float64 inputs become float32 and are refused). A
    fixed template: plain text, known flags, literal values: nothing given becomes code."""
    settings = "".join(
        f"jax.config.update({flag!r}, {value!r})  # in force when the programs were traced\n"
        for flag, value in (config or {}).items()
        if flag in PROGRAM_FLAGS and _literal(value)
    )
    return TEMPLATE.format(
        config=settings,
        requirements=", ".join(f'"{r}"' for r in REQUIREMENTS),
        installs=" ".join(REQUIREMENTS),
        title=_plain(title, "A reproducer of a script's step"),
        exported_on=_plain(exported_on, "a release it does not name"),
        digest=_plain(digest, "unknown"),
        name=_plain(name, "this file"),
        most_calls=MOST_CALLS,
    )


# What the docstring may hold: printable text with no quote or backslash, which could end it.
PLAIN = re.compile(r'[^"\\]{0,200}')


def _plain(text: str, instead: str) -> str:
    return text if text.isprintable() and PLAIN.fullmatch(text) else instead


def _literal(value: Any) -> bool:
    """Whether ``repr(value)`` is a literal that reads back as ``value`` (a flag's value)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, bool | int | str)
