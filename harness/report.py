"""Markdown reports from stored results.  ``render`` is pure: results in, markdown out."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from tabulate import tabulate

from harness.results import LoadProblem, StoredResult, load_results

VERDICT_MARK = {True: "holds", False: "**does not hold**"}


def release_key(release: str) -> tuple[tuple[int, ...], str]:
    numbers = tuple(int(n) for n in re.findall(r"\d+", release))
    return numbers, release


def format_ns(value: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} ns"


def sizes_text(sizes: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(sizes.items())) or "–"


def claim_text(result: StoredResult) -> str:
    claim = result.data.get("claim")
    if result.status != "ok" or not claim:
        return "–"
    return VERDICT_MARK[bool(claim["holds"])]


def latest_runs(results: Iterable[StoredResult]) -> list[tuple[StoredResult, int]]:
    """The newest result per (case, release, profile, sizes), with the count of older ones."""
    groups: dict[tuple[str, str, str, str], list[StoredResult]] = defaultdict(list)
    for result in results:
        key = (result.case, result.release, result.profile, json.dumps(result.sizes, sort_keys=True))
        groups[key].append(result)
    chosen = []
    for runs in groups.values():
        runs.sort(key=lambda r: (r.created_at, r.data["id"]))
        chosen.append((runs[-1], len(runs) - 1))
    chosen.sort(
        key=lambda item: (
            item[0].case,
            release_key(item[0].release),
            item[0].profile,
            sorted(item[0].sizes.items()),
        )
    )
    return chosen


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
    return tabulate(rows, headers=["program", "metric", "median", "IQR", "min", "max", "n"], tablefmt="github")


def environment_block(result: StoredResult) -> str:
    host = result.data.get("host", {})
    jax_info = result.data.get("jax", {})
    facts = {
        "jax / jaxlib / numpy": " / ".join(host.get("packages", {}).get(p, "?") for p in ("jax", "jaxlib", "numpy")),
        "python": host.get("python", "?"),
        "backend": jax_info.get("backend", "?"),
        "devices": f"{jax_info.get('device_count', '?')} × {', '.join(jax_info.get('device_kinds', [])) or '?'}",
        "cpu": f"{host.get('cpu_model', '?')} ({host.get('usable_cores', '?')} usable cores)",
        "variables": ", ".join(f"`{k}={v}`" for k, v in host.get("variables", {}).items()) or "none",
        "harness": "{commit}{dirty}".format(
            commit=str(host.get("harness", {}).get("commit", "?"))[:12],
            dirty=" (uncommitted changes)" if host.get("harness", {}).get("dirty") else "",
        ),
        "settings": ", ".join(f"{k}={v}" for k, v in result.data.get("settings", {}).items()),
    }
    table = tabulate(list(facts.items()), headers=["", ""], tablefmt="github")
    info = jax_info.get("environment_info", "").strip()
    info_block = f"\n\n```\n{info}\n```" if info else ""
    return f"<details><summary>Environment</summary>\n\n{table}{info_block}\n\n</details>"


def run_section(result: StoredResult, older: int) -> str:
    title = f"#### jax {result.release} · {result.profile} · {sizes_text(result.sizes)}"
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


def render(results: list[StoredResult], problems: list[LoadProblem], generated_at: datetime) -> str:
    chosen = latest_runs(results)
    lines = [
        "# JAX reproduction report",
        "",
        f"Generated {generated_at:%Y-%m-%d %H:%M} UTC from {len(results)} stored result(s). "
        "Times are medians of raw `perf_counter_ns` samples taken after warm-up; IQR is the interquartile "
        "range. *Dispatch* is when Python regained control, *wall* is when `block_until_ready` returned.",
        "",
    ]
    if problems:
        lines += ["> [!WARNING]", f"> {len(problems)} result file(s) could not be used:"]
        lines += [f"> - `{p.path.name}`: {p.reason}" for p in problems]
        lines.append("")
    if not chosen:
        lines += ["No results yet: run `nox` (or a `repro` session) first.", ""]
        return "\n".join(lines)
    overview = [[r.case, r.release, r.profile, sizes_text(r.sizes), r.status, claim_text(r)] for r, _ in chosen]
    lines += [
        "## Overview",
        "",
        tabulate(overview, headers=["case", "jax", "profile", "sizes", "status", "claim"], tablefmt="github"),
        "",
    ]
    by_case: dict[str, list[tuple[StoredResult, int]]] = defaultdict(list)
    for result, older in chosen:
        by_case[result.case].append((result, older))
    for case, runs in by_case.items():
        first = runs[0][0].data
        lines += [f"## {case}", "", f"**Claim.** {first.get('claim_statement', '')}", ""]
        if first.get("discussion"):
            lines += [f"Source discussion: `{first['discussion']}`", ""]
        lines += [run_section(result, older) for result, older in runs]
    return "\n".join(lines)


def write_report(results_dir: Path, out_dir: Path) -> tuple[list[Path], list[LoadProblem]]:
    results, problems = load_results(results_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    index = out_dir / "index.md"
    text = render(results, problems, datetime.now(UTC))
    tmp = index.with_suffix(".md.tmp")
    tmp.write_text(text)
    tmp.replace(index)
    return [index], problems
