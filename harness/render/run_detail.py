"""One run in detail: its status, the evidence for its claim verdict, its metrics and environment."""

from __future__ import annotations

from harness.analysis.claims import DOES_NOT_HOLD, HOLDS
from harness.render.tables import markdown_table
from harness.store.results import StoredResult
from harness.units import format_ns, short_machine, sizes_text

VERDICT_MARK = {True: HOLDS, False: f"**{DOES_NOT_HOLD}**"}


def metrics_table(result: StoredResult) -> str:
    rows = []
    for program, record in result.data.get("programs", {}).items():
        samples = record["samples"]
        rows.append([program, "first call (incl. compile)", format_ns(record["first_call"]["wall_ns"]), "", "", "", 1])
        for metric in ("dispatch_ns", "wall_ns"):
            s = record["summary"][metric]
            label = "dispatch (Python regains control)" if metric == "dispatch_ns" else "wall (until ready)"
            rows.append(
                [
                    program,
                    label,
                    format_ns(s["median"]),
                    format_ns(s["iqr"]),
                    format_ns(s["minimum"]),
                    format_ns(s["maximum"]),
                    s["n"],
                ]
            )
        for i, step in enumerate(record["steps"][:-1] if len(record["steps"]) > 1 else []):
            marks = sorted(sample["marks_ns"][i] for sample in samples)
            rows.append([program, f"returned from {step}", format_ns(marks[len(marks) // 2]), "", "", "", len(marks)])
    for name, record in result.data.get("compiled", {}).items():
        for metric, label in (
            ("lower_ns", "jit: trace + lower (cold)"),
            ("compile_ns", "jit: compile (cold)"),
        ):
            values = sorted(record[metric])
            rows.append(
                [
                    name,
                    label,
                    format_ns(values[len(values) // 2]),
                    "",
                    format_ns(values[0]),
                    format_ns(values[-1]),
                    len(values),
                ]
            )
    if not rows:
        return ""
    return markdown_table(rows, ["program", "metric", "median", "IQR", "min", "max", "n"])


def environment_block(result: StoredResult) -> str:
    host = result.data.get("host", {})
    jax_info = result.data.get("jax", {})
    facts = {
        "jax / jaxlib / numpy": " / ".join(host.get("packages", {}).get(p, "?") for p in ("jax", "jaxlib", "numpy")),
        "python": host.get("python", "?"),
        "backend": jax_info.get("backend", "?"),
        "devices": f"{jax_info.get('device_count', '?')} × {', '.join(jax_info.get('device_kinds', [])) or '?'}",
        "cpu": f"{host.get('cpu_model', '?')} ({host.get('usable_cores', '?')} usable cores)",
        "machine": f"{result.machine} ({host.get('machine', {}).get('basis', 'not recorded: an older result')})",
        "variables": ", ".join(f"`{k}={v}`" for k, v in host.get("variables", {}).items()) or "none",
        "harness": "{commit}{dirty}".format(
            commit=str(host.get("harness", {}).get("commit", "?"))[:12],
            dirty=" (uncommitted changes)" if host.get("harness", {}).get("dirty") else "",
        ),
        "settings": ", ".join(f"{k}={v}" for k, v in result.data.get("settings", {}).items()),
    }
    gpu = jax_info.get("gpu")
    if gpu:
        facts["gpu"] = "{kinds} (compute capability {caps}); driver {driver}, CUDA {cuda}".format(
            kinds=", ".join(gpu.get("device_kinds", [])) or "?",
            caps=", ".join(gpu.get("compute_capabilities", [])) or "?",
            driver=", ".join(gpu.get("driver_versions", [])) or "?",
            cuda=gpu.get("cuda_driver") or "?",
        )
        facts["CUDA wheels"] = ", ".join(f"{k} {v}" for k, v in gpu.get("cuda_packages", {}).items()) or "none"
    table = markdown_table(list(facts.items()), ["", ""])
    info = jax_info.get("environment_info", "").strip()
    info_block = f"\n\n```\n{info}\n```" if info else ""
    return f"<details><summary>Environment</summary>\n\n{table}{info_block}\n\n</details>"


def run_section(result: StoredResult, older: int, level: str = "###") -> str:
    title = (
        f"{level} jax {result.release} · {result.profile} · {sizes_text(result.sizes)} · "
        f"machine {short_machine(result.machine)}"
    )
    lines = [title, ""]
    status = result.status
    lines.append(
        f"Status: **{status}** in {result.data.get('duration_s', 0):.1f} s"
        + (f" ({older} earlier run{'s' if older > 1 else ''} not shown)" if older else "")
    )
    claim = result.data.get("claim")
    if status == "ok" and claim:
        lines += ["", f"Claim {VERDICT_MARK[bool(claim['holds'])]}: {claim['evidence']}"]
    detail = result.data.get("detail")
    if detail:
        lines += ["", "```", detail, "```"]
    table = metrics_table(result)
    if table:
        lines += ["", table]
    lines += ["", environment_block(result), ""]
    return "\n".join(lines)
