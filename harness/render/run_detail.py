"""One run in detail: its status, the evidence for its claim verdict, its metrics, environment."""

from __future__ import annotations

from collections.abc import Sequence

from harness.analysis.report_model import RunView
from harness.render.screen import ELLIPSIS, shorten
from harness.render.tables import markdown_table
from harness.render.text import Markdown, code_span, fenced, folded, inline
from harness.stats import summarize
from harness.store.results import StoredResult
from harness.store.schema import RunStatus
from harness.units import format_ns, short_machine, sizes_text


def _summary_row(
    program: str, label: str, values: Sequence[float], spread: bool = True
) -> list[object]:
    s = summarize(values)
    iqr = format_ns(s.iqr) if spread else ""
    low, high = format_ns(s.minimum), format_ns(s.maximum)
    return [program, label, format_ns(s.median), iqr, low, high, s.n]


def metrics_table(result: StoredResult) -> str:
    processes = result.result.finished()
    programs = list(dict.fromkeys(name for p in processes for name in p.programs))
    rows = []
    for name in programs:
        records = [p.programs[name] for p in processes if name in p.programs]
        first_calls = [r.first_call.wall_ns for r in records if r.first_call is not None]
        if first_calls:
            label = "first call (incl. compile)"
            if len(first_calls) == 1:
                rows.append([name, label, format_ns(first_calls[0]), "", "", "", 1])
            else:
                rows.append(
                    _summary_row(name, f"{label}, one per process", first_calls, spread=False)
                )
        samples = [s for r in records for s in r.samples]
        if not samples:
            continue
        if "dispatch" in records[0].kinds:
            dispatch = [s.dispatch_ns for s in samples]
            rows.append(_summary_row(name, "dispatch (Python regains control)", dispatch))
        rows.append(_summary_row(name, "wall (until ready)", [s.wall_ns for s in samples]))
        steps = records[0].steps
        for i, step in enumerate(steps[:-1]):  # the last one's return: dispatch
            marks = [s.marks_ns[i] for s in samples if len(s.marks_ns) > i]
            if marks:
                median = format_ns(summarize(marks).median)
                rows.append([name, f"returned from {step}", median, "", "", "", len(marks)])
    functions = list(dict.fromkeys(name for p in processes for name in p.compiled))
    for name in functions:
        compiled = [p.compiled[name] for p in processes if name in p.compiled]
        for label, values in (
            ("jit: trace + lower (cold)", [v for c in compiled for v in c.lower_ns]),
            ("jit: compile (cold)", [v for c in compiled for v in c.compile_ns]),
        ):
            if values:
                rows.append(_summary_row(name, label, values, spread=False))
    if not rows:
        return ""
    return markdown_table(rows, ["program", "metric", "median", "IQR", "min", "max", "n"])


def environment_block(result: StoredResult) -> str:
    stored = result.result
    host = stored.host
    jax_info = stored.jax
    revision = host.harness
    basis = host.machine.basis if host.machine is not None else "not recorded: an older result"
    facts = {
        "jax / jaxlib / numpy": " / ".join(
            host.packages.get(p, "?") for p in ("jax", "jaxlib", "numpy")
        ),
        "python": host.python or "?",
        "backend": (jax_info.backend if jax_info else None) or "?",
        "devices": "no JAX devices (JAX was not asked)"
        if jax_info is None or jax_info.device_count is None
        else f"{jax_info.device_count} × {', '.join(stored.device_kinds) or '?'}",
        "cpu": (
            f"{host.cpu_model or '?'} ({'?' if host.usable_cores is None else host.usable_cores} "
            "usable cores)"
        ),
        "machine": f"{result.result.machine} ({basis})",
        "harness": (revision.commit if revision else "?")[:12]
        + (" (uncommitted changes)" if revision and revision.dirty else ""),
        "settings": ", ".join(f"{k}={v}" for k, v in stored.settings.shown().items()),
    }
    if libtpu := host.packages.get("libtpu") or host.packages.get("libtpu-nightly"):
        facts["libtpu"] = libtpu  # the TPU runtime, released with its jax
    gpu = jax_info.gpu if jax_info else None
    if gpu:
        facts["gpu"] = "{kinds} (compute capability {caps}); driver {driver}, CUDA {cuda}".format(
            kinds=", ".join(gpu.device_kinds) or "?",
            caps=", ".join(gpu.compute_capabilities) or "?",
            driver=", ".join(gpu.driver_versions) or "?",
            cuda=gpu.cuda_driver or "?",
        )
        facts["CUDA wheels"] = ", ".join(f"{k} {v}" for k, v in gpu.cuda_packages.items()) or "none"
    rows: list[list[object]] = [[k, v] for k, v in facts.items()]
    # One line a variable: a driver image's NVIDIA_REQUIRE_CUDA alone runs to 4,000 characters.
    shown = {name: shorten(value, VARIABLE_COLUMNS) for name, value in host.variables.items()}
    rows += [
        [Markdown(code_span(name)), Markdown(code_span(v)) if v else "set, empty"]
        for name, v in shown.items()
    ] or [["variables", "none"]]
    table = markdown_table(rows, ["", ""])
    if any(v != host.variables[name] for name, v in shown.items()):
        table += f"\n\n{ELLIPSIS} ends a value shortened here; the result file holds it whole."
    info = jax_info.environment_info.strip() if jax_info else ""
    info_block = f"\n\n{fenced(info)}" if info else ""
    return folded("Environment", f"{table}{info_block}")


VARIABLE_COLUMNS = 80


def processes_line(result: StoredResult) -> str:
    processes = result.result.processes
    if len(processes) < 2:
        return ""
    counts = {status: sum(p.status is status for p in processes) for status in RunStatus}
    ended = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
    loaded = sum(p.load is not None and p.load.loaded for p in processes)
    under_load = f"; {loaded} measured under load" if loaded else ""
    return f"Measured in {len(processes)} processes: {ended}{under_load}."


def run_section(run: RunView) -> str:
    result = run.stored
    r = result.result
    title = (
        f"### jax {inline(r.release)} · {inline(r.profile)} · "
        f"{inline(sizes_text(r.sizes))} · machine {inline(short_machine(r.machine))}"
    )
    lines = [title, ""]
    status, older = result.result.status, run.older
    lines.append(
        f"Status: **{status}** in {result.result.duration_s:.1f} s"
        + (f" ({older} earlier run{'s' if older > 1 else ''} not shown)" if older else "")
    )
    several = processes_line(result)
    if several:
        lines += ["", several]
    # What was left out of what the script printed, so the file reads back: said where figures show.
    notes = result.result.all_notes()
    lines += (
        ["", "Left out of what was measured:", "", *(f"- {inline(note)}" for note in notes)]
        if notes
        else []
    )
    claim = run.claim
    if claim is not None and claim.settled:
        # A settled claim leans the way it settled: only "does not hold" is emphasised.
        verdict = claim.outcome if claim.hint else f"**{claim.outcome}**"
        lines += ["", f"Claim {verdict}: {inline(run.evidence)}"]
    elif claim is not None:  # the evidence starts "unsettled: ..."
        lines += ["", f"Claim {inline(run.evidence)}"]
    detail = result.result.detail
    if detail:
        lines += ["", fenced(detail)]
    table = metrics_table(result)
    if table:
        lines += ["", table]
    lines += ["", environment_block(result), ""]
    return "\n".join(lines)
