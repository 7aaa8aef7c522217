"""A plain repro script's case process: run ``python FILE`` once, time it, read what it printed.

Run in a case process (``child``), so the script has the side's interpreter and environment, the
measurement lock and the case process's timeout (the script is in its group), from its own folder
without the harness on ``PYTHONPATH``. It is judged on its figure lines, else as a whole process
split into phases by its start-up hook (``script_hook``); its JSON lines and a pytest-benchmark
suite's rounds are figures too (docs/scripts.md). Each harness XLA flag a script's own
``XLA_FLAGS`` dropped is recorded (``script.xla_flags``) and said in a note.

A script's JSON lines (``json.FIELD``) are read as written: a number a result can hold is a figure
(an integer exactly, to 19 digits; the median of several lines); the values *as written*
(``printed``) are kept where a figure cannot say them (a string, a boolean, null, NaN, infinity, a
number past a result's range, several values in a process). Nested objects and lists are facts.
Lines are untrusted, read within bounds; what is left out is said in ``skipped``, the result's
notes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.catalogue.benchmark_suite import DEADLINE, IMPORT_TIME, SUITE_PATH
from harness.host.environment import REDACTED, REPO_ROOT, SECRET_NAME, scrub, scrub_value
from harness.measure import deaths
from harness.measure.benchmark_json import BENCHMARK_JSON, SuiteRun, read_suite_run
from harness.measure.figures import Figure, parse_output
from harness.measure.guardian import die_with_parent
from harness.measure.import_times import MAX_BYTES as IMPORT_BYTES
from harness.measure.script_hook import FAULT_AT
from harness.metric_names import EVENT_PHASES, JSON, PROCESS
from harness.store import bounds
from harness.store.files import read_bounded
from harness.store.schema import (
    CompiledFunction,
    ProcessClaim,
    ProcessRun,
    RunStatus,
    StoredProgram,
    TimedSample,
)

# Read of a script's standard output: figure lines come first, and a script can print gigabytes.
OUTPUT_BYTES = 8 * 1024 * 1024
# run by its path: the script's venv need not hold the harness
HOOK = Path(__file__).with_name("script_hook.py")
REPORT_BYTES = 64 * 1024
# A fact's JSON beyond this many characters is kept cut, as text: ten processes printing megabytes
# would make a result larger than any reader reads (``store.bounds.MAX_DOCUMENT_BYTES``).
FACT_CHARS = 4000
# How deep a fact's value lies in a result document (result → processes → [i] → facts → value).
FACT_DEPTH = 5
MAX_NOTES = 20
# The program names a script's figure lines may not take: the harness's own figures have them.
RESERVED_PROGRAMS = {
    PROCESS: "the whole process and its phases",
    JSON: "the numbers of its JSON lines",
}
MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([A-Za-z0-9_.]+)'")
FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
LINE_CHARS = 65536
VALUE_CHARS = 200
MAX_FIELDS = 200
# The values of one field one process keeps as written: enough to tell a value from one that varies
# within the process (a number printed per step keeps its figure, the median, for a cost).
MAX_PRINTED = 8


def script_environment(environ: dict[str, str]) -> dict[str, str]:
    """The side's environment, without the harness ``launch.Worker`` put first on PYTHONPATH."""
    env = dict(environ)
    entries = env.get("PYTHONPATH", "").split(os.pathsep)
    if entries and entries[0] == str(REPO_ROOT):
        entries = entries[1:]
    if any(entries):
        env["PYTHONPATH"] = os.pathsep.join(entries)
    else:
        env.pop("PYTHONPATH", None)
    return env


def programs_from(
    figures: list[Figure],
) -> tuple[dict[str, StoredProgram], dict[str, CompiledFunction]]:
    """One process's figure lines as programs (a sample: the printed medians; ``kinds``: which of
    wall and dispatch it printed, never one standing in for the other) and compiled functions."""
    by_program: dict[str, dict[str, Figure]] = {}
    for figure in figures:
        by_program.setdefault(figure.program, {})[figure.metric] = figure
    programs: dict[str, StoredProgram] = {}
    compiled: dict[str, CompiledFunction] = {}
    for name, found in by_program.items():
        cold = ((found[m].median,) if m in found else () for m in ("lower_ns", "compile_ns"))
        lower, compile_ = cold
        if lower or compile_:
            compiled[name] = CompiledFunction(lower, compile_)
        wall, dispatch = found.get("wall_ns"), found.get("dispatch_ns")
        if wall is None and dispatch is None:
            continue
        marks = {
            m.removeprefix("mark:"): f.median for m, f in found.items() if m.startswith("mark:")
        }
        if dispatch is None or not marks:
            marks = {"script": (dispatch or wall).median}  # type: ignore[union-attr]
        first = found.get("first_call_ns")
        programs[name] = StoredProgram(
            steps=tuple(marks),
            samples=(TimedSample(tuple(marks.values()), (wall or dispatch).median),),  # type: ignore[union-attr]
            first_call=None if first is None else TimedSample((first.median,), first.median),
            stopped_by="script output",
            kinds=tuple(k for k, f in (("wall", wall), ("dispatch", dispatch)) if f is not None),
            printed=tuple(asdict(f) for f in found.values()),
        )
    return programs, compiled


def lost_flags(harness: str, seen: str) -> list[str]:
    """The flags of ``harness`` (what it put in ``XLA_FLAGS``) that XLA did not get as set, from
    what the variable held when XLA read it (``seen``): a script that replaced the variable loses
    them all, one that appended to it none, one that set a flag again to another value that one."""

    def values(flags: str) -> dict[str, str]:  # the last one winning, as XLA reads them
        return dict(word[2:].partition("=")[::2] for word in flags.split() if word[:2] == "--")

    wanted, got = values(harness), values(seen)
    return [f"--{name}" for name, value in wanted.items() if got.get(name) != value]


def lost_in(stored_processes: Any) -> list[str]:
    """The harness's XLA flags a script's processes lost (``xla_flags_record``); [] for a case."""
    lost: dict[str, None] = {}
    for process in stored_processes:
        record = (process.script or {}).get("xla_flags")
        if isinstance(record, dict):
            lost.update(dict.fromkeys(str(name) for name in record.get("lost", ())))
    return list(lost)


def undeclared_import(stderr: str) -> str:
    """What to do when a script lacked a module: in its venv, only what it declares is."""
    found = MISSING_MODULE.findall(stderr)
    if not found:
        return ""
    module = found[-1].split(".")[0]
    if module in ("jax", "jaxlib"):  # in every venv the harness prepares
        if importlib.util.find_spec(module) is None:  # this process runs in the script's venv
            return f"{module} is not in the venv it was prepared with: the venv changed since"
        return f"{module} did not import where the script ran it (a Python other than its venv's?)"
    undeclared = f"the script imports {module}, which it does not declare: add it to the script's"
    block = f'`# /// script` block (dependencies = ["{module}"], by its name on the package index)'
    return f"{undeclared} {block} or give --with {module}"


def phase_figures(report: dict[str, Any]) -> tuple[dict[str, float], dict[str, Any]]:
    """The ``process.PHASE_ns`` figures of the hook's report, and the events as counted. An event
    that never fired is 0 only where the release's source names it; else the phase is missing, and
    so is ``run_ns``, which would hold it. Without jax, ``run_ns`` is the script's whole run."""
    figures: dict[str, float] = {}
    found = report.get("events")
    events: dict[str, Any] = found if isinstance(found, dict) else {}
    imported = report.get("imported_ns")
    if isinstance(imported, int) and isinstance(report.get("import_ns"), int):
        figures["process.import_ns"] = float(report["import_ns"])
    complete = True
    for phase in EVENT_PHASES:
        event = events.get(phase)
        if not isinstance(imported, int):
            break
        if not isinstance(event, dict) or not (event.get("count") or event.get("exists")):
            complete = False
            continue
        figures[f"process.{phase}_ns"] = float(event.get("total_ns", 0))
    ended = report.get("ended_ns")
    began = imported if isinstance(imported, int) else report.get("started_ns")
    listening = report.get("listening", True) is True
    if complete and listening and isinstance(ended, int) and isinstance(began, int):
        spent = sum(figures.get(f"process.{phase}_ns", 0.0) for phase in EVENT_PHASES)
        figures["process.run_ns"] = max(0.0, float(ended - began) - spent)
    return figures, {phase: events[phase] for phase in EVENT_PHASES if phase in events}


def run_script(
    path: Path, expected_sha256: str, timeout_s: float | None = None, *, args: tuple[str, ...] = ()
) -> ProcessRun:
    """Run the script once and time it. ``timeout_s`` is for tests: in a case process the
    harness's own timeout kills the case process with the script in its group."""
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        unread = f"script {path.name} cannot be read: {exc.strerror or exc}"
        return ProcessRun(0, RunStatus.FAILED, unread)
    if digest != expected_sha256:
        changed = (
            f"script {path.name} changed since this run began (sha256 {expected_sha256[:12]}, now "
            f"{digest[:12]}): results of two versions are never mixed"
        )
        return ProcessRun(0, RunStatus.FAILED, changed, script={"sha256": digest})
    env = script_environment(dict(os.environ))
    with (
        deaths.script_output(env, deaths.SCRIPT_STDOUT) as out,
        deaths.script_output(env, deaths.SCRIPT_STDERR) as err,
        tempfile.TemporaryDirectory() as scratch,
    ):
        report_path = Path(scratch) / "phases.json"
        env[BENCHMARK_JSON] = str(Path(scratch) / "benchmarks.json")
        if env.get(SUITE_PATH) and env.get(FAULT_AT):  # the suite stops before its time-out
            env[DEADLINE] = env[FAULT_AT]
        # An extra process of a why or a suite's floor: where its imports went, never a timed one.
        importtime = ["-X", "importtime"] if env.get(IMPORT_TIME) else []
        started = time.perf_counter_ns()
        child = subprocess.Popen(
            [sys.executable, *importtime, str(HOOK), str(report_path), path.name, *args],
            cwd=path.parent,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=env,
            preexec_fn=die_with_parent,
        )
        try:
            code = child.wait(timeout_s)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            died = deaths.timed_out(timeout_s or 0.0, "")
            return ProcessRun(
                0, RunStatus.TIMEOUT, f"no exit within {timeout_s:g} s; killed", died=died
            )
        wall_ns = time.perf_counter_ns() - started
        if importtime:
            err.seek(0)
            Path(env[IMPORT_TIME]).write_bytes(err.read(IMPORT_BYTES))
        out.seek(0)
        start = out.read(OUTPUT_BYTES + 1)
        stdout, cut = start[:OUTPUT_BYTES].decode(errors="replace"), len(start) > OUTPUT_BYTES
        stderr = deaths.tail_of(err, 64 * 1024)
        try:  # none, too large (read_bounded's DocumentProblem is a ValueError), or not JSON
            report = json.loads(read_bounded(report_path, limit=REPORT_BYTES))
        except (OSError, ValueError, RecursionError):
            report = {}
        report = report if isinstance(report, dict) else {}
        suite = read_suite_run(Path(env[BENCHMARK_JSON]))
        hooks = report.get("after_script_ns")  # the hook's scan after the script: not the script's
        if isinstance(hooks, int) and 0 <= hooks < wall_ns:
            wall_ns -= hooks
    record: dict[str, Any] = {
        "sha256": digest,
        "exit_status": code,
        "wall_ns": wall_ns,
        # Linux reports KiB
        "maxrss_bytes": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
    }
    if code == 0 and env.get(SUITE_PATH) and not suite.programs:
        said = "ran no benchmark (did a test end the process?)"
        failed = f"python {path.name} exited with code 0, but pytest-benchmark {said}"
        return ProcessRun(0, RunStatus.FAILED, failed, script=record)
    if code != 0:
        if code < 0:
            status, how = RunStatus.CRASHED, f"was killed by {deaths.signal_name(-code)}"
        else:
            status, how = RunStatus.FAILED, f"exited with code {code}"
        output = deaths.last_lines(stderr) or deaths.last_lines(stdout)
        shown = " ".join(["python", path.name, *args])
        detail = f"{shown} {how}\n{output}\n{undeclared_import(stderr)}".strip()
        died = deaths.ended(code, stderr if stderr.strip() else stdout)
        return ProcessRun(0, status, detail, script=record, died=died)
    return _measured(path, stdout, cut, report, suite, wall_ns, env, record)


def _measured(
    path: Path,
    stdout: str,
    cut: bool,
    report: dict[str, Any],
    suite: SuiteRun,
    wall_ns: int,
    env: dict[str, str],
    record: dict[str, Any],
) -> ProcessRun:
    figures = parse_output(stdout)
    reserved = dict.fromkeys(f.program for f in figures.lines if f.program in RESERVED_PROGRAMS)
    figures.lines = [f for f in figures.lines if f.program not in RESERVED_PROGRAMS]
    notes = [*figures.refused]
    notes += [
        f"figure line of program {name!r} left out: the name is the harness's own "
        f"({RESERVED_PROGRAMS[name]}); print it under another program name"
        for name in reserved
    ]
    notes += suite.notes
    programs, compiled = programs_from(figures.lines)
    judged = "printed figures" if programs or compiled else "whole process"
    record["judged_on"] = "pytest-benchmark rounds" if suite.programs else judged
    if suite.cut_short is not None:
        record["cut_short"] = {"ran": suite.cut_short[0], "planned": suite.cut_short[1]}
    if suite.programs:  # what a process of the suite costs, where (``harness.steps.suite_floor``)
        rounds_ns = sum(s.wall_ns for p in suite.programs.values() for s in p.samples)
        record["suite_phases"] = {**suite.phases, "benchmarks_ns": rounds_ns}
    if cut:
        record["output_cut"] = f"only the first {OUTPUT_BYTES} bytes of its output were read"
    if not (programs or compiled) and figures.lines:  # of metrics the statistics do not know
        record["printed"] = [asdict(f) for f in figures.lines]
    whole = StoredProgram(
        (f"python {path.name}",),
        (TimedSample((wall_ns,), wall_ns),),
        stopped_by="whole process",
        kinds=("wall",),
    )
    programs = {**suite.programs, **programs, PROCESS: whole}
    named, events = phase_figures(report)
    if events:
        record["events"] = events
    seen = report.get("xla_flags")  # as XLA read it (none where it never started)
    lost = lost_flags(env.get("XLA_FLAGS", ""), seen) if isinstance(seen, str) else []
    if lost:  # the script set XLA_FLAGS itself: what XLA read instead is kept
        read = scrub(str(seen)[:300])
        record["xla_flags"] = {"lost": lost, "read": read}
        notes.append(
            f"the script sets XLA_FLAGS itself: XLA read `{read}`, without the harness's "
            f"{', '.join(lost)} (append to the variable instead of replacing it)"
        )
    if not report:
        hook = "the start-up hook left no report (the script ended the process itself?)"
        record["phases"] = f"not measured: {hook}"
    numbers = script_numbers(stdout)
    named.update({f"{JSON}.{name}": value for name, value in numbers.values.items()})
    facts = bounded_facts(
        {**figures.facts, **{f"{JSON}.{n}": t for n, t in numbers.facts.items()}}, notes
    )
    configured = report.get("jax_config")
    if isinstance(configured, dict):  # jax options set for this process: a changed default tried
        facts |= {
            f"jax_config.{name}": str(value)[:200]
            for name, value in configured.items()
            if isinstance(name, str)
        }
    notes += [f"JSON line: {why}" for why in numbers.skipped]
    evidence = bounds.repaired(figures.evidence)
    claim = None if figures.holds is None else ProcessClaim(figures.holds, evidence)
    unique = list(dict.fromkeys(notes))
    more = [f"… and {len(unique) - MAX_NOTES} more"] if len(unique) > MAX_NOTES else []
    if suite.programs:
        # A suite is judged on its benchmarks alone: the pytest process around them (its import
        # and collection, most of a minute for some libraries, and noisy under load) stays in its
        # record (wall_ns, events), neither screened nor measured again until decided.
        programs, named = suite.programs, {}
    return ProcessRun(
        0,
        RunStatus.OK,
        programs=programs,
        compiled=compiled,
        facts=facts,
        claim=claim,
        script=record,
        figures=named,
        printed={} if suite.programs else {f"{JSON}.{n}": t for n, t in numbers.printed.items()},
        notes=(*unique[:MAX_NOTES], *more),
    )


def bounded_facts(facts: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """A script's ``fact`` lines as a result can hold them (``store.bounds``): a value no reader
    reads back left out, one over ``FACT_CHARS`` cut as text; a note for each."""
    kept: dict[str, Any] = {}
    for name, value in facts.items():
        label = bounds.repaired(scrub(name[:80]))
        # What the script printed may hold a credential: redacted as every page and draft is.
        secret = SECRET_NAME.search(name) and isinstance(value, str)
        value = REDACTED if secret else scrub_value(value)
        fitted = bounds.fit(value, f"fact {label}", notes.append, depth=FACT_DEPTH)
        if fitted is bounds.DROPPED:
            continue
        text = json.dumps(fitted, ensure_ascii=False)
        if len(text) > FACT_CHARS:
            notes.append(f"fact {label}: {len(text):,} characters, cut to the first {FACT_CHARS:,}")
            fitted = text[:FACT_CHARS] + "…"
        kept[label] = fitted
    return kept


class _Written(float):
    """A JSON number with a fraction or an exponent, or a constant (NaN...), with its text: a float
    of ``1e400`` is infinite, the text is what was printed."""

    text: str

    def __new__(cls, text: str) -> _Written:
        written = super().__new__(cls, text)
        written.text = text
        return written


@dataclass
class ScriptNumbers:
    values: dict[str, float] = field(default_factory=dict)  # each field's figure, if it has one
    # each field's values as written (JSON text), where the figure cannot say them (``literal``)
    printed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    facts: dict[str, str] = field(default_factory=dict)  # nested objects and lists
    skipped: list[str] = field(default_factory=list)  # fields left out, with why


def _objects(stdout: str, skipped: list[str]) -> list[dict[str, object]]:
    found = []
    for number, line in enumerate(stdout.splitlines(), 1):
        text = line.strip()
        if not (text.startswith("{") and text.endswith("}")):
            continue
        if len(text) > LINE_CHARS:
            over = f"over the {LINE_CHARS:,} a JSON line may have"
            skipped.append(f"line {number}: {len(text):,} characters, {over}")
            continue
        try:
            parsed = json.loads(text, parse_float=_Written, parse_constant=_Written)
        except RecursionError:
            skipped.append(f"line {number}: nested deeper than a JSON line may be read")
            continue
        except ValueError as exc:  # not JSON (a dict's repr), or an integer of thousands of digits
            if "digits" in str(exc):
                skipped.append(f"line {number}: {str(exc).split(':')[0]}")
            continue
        if isinstance(parsed, dict):
            found.append(parsed)
    return found


def literal(value: object) -> tuple[str, int | float | None] | None:
    """A printed value as written (JSON text) and its figure where a result can hold one: an integer
    exactly, a number in range as Python's shortest repr; None for a nested object or a list (a
    fact).  A number past a float's range (``1e400``) keeps its text; one of more than
    ``VALUE_CHARS`` characters is refused (ValueError)."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value), None
    text = str(value) if isinstance(value, int) else getattr(value, "text", "")
    if len(text) > VALUE_CHARS:  # a number of more digits than any measurement or checksum has
        raise ValueError(f"a number of {len(text):,} characters (at most {VALUE_CHARS})")
    if isinstance(value, int):
        return text, None if bounds.number_problem(value) else value
    if isinstance(value, _Written):
        number = float(value)
        underflow = number == 0 and re.search(r"[1-9]", text.lower().partition("e")[0])
        if not math.isfinite(number) or underflow:  # NaN, ±Infinity, 1e400, 1e-400 (not 0)
            return text, None
        return repr(number), None if bounds.number_problem(number) else number
    if isinstance(value, str):
        text = bounds.repaired(scrub(value))
        if len(text) > VALUE_CHARS:  # cut, its digest kept: two that differ past the cut still do
            digest = hashlib.sha256(text.encode()).hexdigest()[:12]
            text = f"{text[:VALUE_CHARS]}… ({len(text):,} characters, sha256 {digest})"
        return json.dumps(text, ensure_ascii=False), None
    return None


def script_numbers(stdout: str) -> ScriptNumbers:
    """The figures, values and facts of every JSON object line in ``stdout``, as first printed."""
    written: dict[str, dict[str, None]] = {}  # every distinct value of each field, in order
    numbers: dict[str, list[int | float]] = {}
    out = ScriptNumbers()
    past_bound: list[str] = []
    for obj in _objects(stdout, out.skipped):
        for name, value in obj.items():
            shown = bounds.repaired(scrub(name[:40]))
            try:
                found = literal(value)
            except ValueError as why:
                out.skipped.append(f"{shown}: {why}; left out")
                continue
            known = name in written or name in out.facts
            if not FIELD_NAME.fullmatch(name) or scrub(name) != name:  # a token is no name
                out.skipped.append(f"{shown!r}: not a name a metric can have")
            elif not known and len(written) + len(out.facts) >= MAX_FIELDS:
                past_bound.append(name)
            elif found is None:
                if not known:
                    out.facts[name] = _fact(value, name, out.skipped)
            else:
                if name not in written:  # a value where a nested one was printed: the value wins
                    out.facts.pop(name, None)
                    written[name] = {}
                text, number = found
                if SECRET_NAME.search(name) and isinstance(value, str):
                    text = json.dumps(REDACTED)
                written[name][text] = None
                if number is not None:
                    numbers.setdefault(name, []).append(number)
    if past_bound:
        names = list(dict.fromkeys(past_bound))
        shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
        out.skipped.append(f"{len(names)} fields past the first {MAX_FIELDS} left out ({shown})")
    for name, texts in written.items():
        figures = numbers.get(name, [])
        if len(set(figures)) == 1:
            out.values[name] = figures[0]  # as written: an integer stays exact
        elif figures:
            out.values[name] = statistics.median(float(figure) for figure in figures)
        if len(texts) > 1 or len(set(figures)) != 1:
            out.printed[name] = _kept(list(texts))
    return out


def _kept(texts: list[str]) -> tuple[str, ...]:
    """The first ``MAX_PRINTED`` values, then how many and their digest: later ones still differ."""
    if len(texts) <= MAX_PRINTED:
        return tuple(texts)
    digest = hashlib.sha256("\n".join(texts).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return (*texts[:MAX_PRINTED], f"… {len(texts):,} values, sha256 {digest}")


def _fact(value: object, name: str, skipped: list[str]) -> str:
    """A nested object or list as text, scrubbed and cut at ``VALUE_CHARS``."""
    try:
        text = json.dumps(scrub_value(value), ensure_ascii=False, default=str)
    except RecursionError:
        skipped.append(f"{name}: nested deeper than a fact may be written")
        return "…"
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS] + "…"
