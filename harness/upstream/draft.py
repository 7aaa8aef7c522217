"""An upstream issue draft in the shape of JAX's bug-report form.  ``render`` is pure.

The form asks for a description with self-contained code to reproduce, and the
output of ``jax.print_environment_info()``.  The draft gives what was expected (the
case's claim) and what was observed (stored results, and the exported script run
here), the script and its output, a table across the releases measured, the bisect
answer when one is stored, and the environment.  Long parts sit in ``<details>``
blocks so that the issue reads short.  Every text that comes from outside the
harness passes ``scrub``, and only allow-listed variables are shown.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.analysis.claims import DOES_NOT_HOLD, HOLDS, UNSETTLED, claim_evidence, outcome
from harness.analysis.groups import latest_runs, release_key
from harness.analysis.metric_names import MetricKey
from harness.analysis.metrics import metric_samples, program_names
from harness.catalogue.discovery import CaseInfo
from harness.host.environment import scrub, shareable_variables
from harness.measure.runner import tail
from harness.render.tables import markdown_table
from harness.store.results import StoredResult, newest_runs
from harness.store.schema import RunStatus
from harness.units import format_ns, sizes_text
from harness.upstream.standalone import parse_output

FORM = "https://github.com/jax-ml/jax/issues/new?template=bug-report.yml"
HEADERS = ["jax", "profile", "sizes", "status", "claim", "medians"]
# Bisect answers are stored by another tool; these keys, when present, are its answer.
BISECT_ANSWER_KEYS = ("answer", "summary", "result", "verdict")


@dataclass(frozen=True)
class ScriptRun:
    """The exported script, run in the session's environment."""

    release: str
    profile: str
    variables: dict[str, str]
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    timeout_s: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0


@dataclass(frozen=True)
class Bisect:
    """One stored bisect answer: its file name and JSON (None when it could not be read)."""

    name: str
    data: Any
    problem: str = ""


@dataclass(frozen=True)
class DraftInputs:
    case: CaseInfo
    sizes: dict[str, int]
    script_name: str
    script: str
    run: ScriptRun
    environment_info: str
    results: list[StoredResult]
    bisects: list[Bisect] = field(default_factory=list)


def render(d: DraftInputs) -> str:
    runs = [result for result, _ in latest_runs(r for r in d.results if r.case == d.case.name)]
    sections = [
        f"<!-- Issue draft by jax-repro-harness for case {d.case.name}. Paste the two sections below into the "
        f"fields of the same name in JAX's bug-report form ({FORM}); the script is also saved as "
        f"{d.script_name} beside this file. -->",
        f"**Title:** {title(d.case, runs)}",
        "### Description",
        description(d, runs),
        reproduction(d),
        across_releases(runs, d.sizes),
        bisect_section(d.bisects),
        system_info(d.run, d.environment_info),
    ]
    return "\n\n".join(s for s in sections if s) + "\n"


def headline(claim: str) -> str:
    """The claim's first clause: the statement without how the case checks it."""
    return re.split(r"[:.;]\s", claim, maxsplit=1)[0].rstrip(".")


def title(case: CaseInfo, runs: Sequence[StoredResult]) -> str:
    failing = _releases([r for r in runs if _holds(r) is False])
    where = f"not so on {failing}" if failing else "as expected on every release measured"
    return f"{headline(case.claim)} — {where}"


def description(d: DraftInputs, runs: Sequence[StoredResult]) -> str:
    expected = f"**Expected** (from a user discussion): {d.case.claim}"
    return " ".join([expected, observed(runs, d.sizes, d.run.profile), script_finding(d)])


def observed(runs: Sequence[StoredResult], sizes: dict[str, int], profile: str) -> str:
    if not runs:
        return "**Observed**: nothing stored for this case yet, so only the script's own run below."
    verdicts = []
    for label, wanted in (("does not hold", DOES_NOT_HOLD), ("holds", HOLDS), ("is unsettled", UNSETTLED)):
        group = [r for r in runs if outcome(r) == wanted]
        if group:
            verdicts.append(f"it {label} on {_counted(group, runs)}")
    unfinished = [r for r in runs if r.status not in (RunStatus.OK, RunStatus.SKIPPED)]
    if unfinished:
        statuses = ", ".join(sorted({r.status for r in unfinished}))
        verdicts.append(f"{len(unfinished)} run(s) did not finish ({statuses})")
    text = f"**Observed** over {len(runs)} stored run(s): " + ("; ".join(verdicts) or "no verdict yet") + "."
    examples = _examples(runs, sizes, profile)
    if examples:
        text += " For example, " + "; ".join(
            f"on jax {r.release} ({r.profile}, {sizes_text(r.sizes)}): {_evidence(r)}" for r in examples
        ) + "."  # fmt: skip
    return text


def script_finding(d: DraftInputs) -> str:
    where = f"on jax {d.run.release} (profile {d.run.profile}) at {sizes_text(d.sizes)}"
    if d.run.returncode is None:
        return f"The script below did not finish within {d.run.timeout_s:g} s {where}."
    if not d.run.ok:
        return f"The script below exited with code {d.run.returncode} {where} (output below)."
    figures = parse_output(d.run.stdout)
    if figures.holds is None:
        return f"The script below ran {where} but printed no verdict."
    verdict = "holds" if figures.holds else "does not hold"
    return f"The script below, run {where}, finds that the claim {verdict}: {scrub(figures.evidence)}."


def reproduction(d: DraftInputs) -> str:
    lines = len(d.script.splitlines())
    variables = shareable_variables(d.run.variables)
    env = " ".join(f"{k}={v}" for k, v in variables.items())
    command = f"{env} python {d.script_name}" if env else f"python {d.script_name}"
    script = "\n".join(
        [
            f"<details><summary>{d.script_name}: self-contained, {lines} lines, imports only jax, numpy and the "
            "standard library</summary>",
            "",
            fenced(d.script, "python"),
            "",
            "</details>",
        ]
    )
    output = [f"Run as `{command}`, it printed:", "", fenced(scrub(d.run.stdout).strip() or "(nothing)", "text")]
    if not d.run.ok and d.run.stderr.strip():
        output += ["", "and on stderr (last lines):", "", fenced(tail(d.run.stderr), "text")]
    return script + "\n\n" + "\n".join(output)


def medians_cell(result: StoredResult) -> str:
    """Each metric's figure: the median of the process medians, the number comparisons judge."""
    if result.status is not RunStatus.OK:
        return "–"
    series = metric_samples(result)
    parts = []
    for program in program_names(result):
        dispatch, wall = series.get(MetricKey(program, "dispatch")), series.get(MetricKey(program, "wall"))
        if dispatch is not None and wall is not None:
            parts.append(f"{program}: dispatch {format_ns(dispatch.figure)}, wall {format_ns(wall.figure)}")
    for key, samples in series.items():
        if key.kind == "compile":
            parts.append(f"{key.name}: compile {format_ns(samples.figure)}")
    return "; ".join(parts) or "–"


def runs_table(runs: Sequence[StoredResult]) -> str:
    verdicts = {HOLDS: "holds", DOES_NOT_HOLD: "**does not hold**", UNSETTLED: "unsettled"}
    rows = [
        [r.release, r.profile, sizes_text(r.sizes), r.status, verdicts.get(outcome(r), "–"), medians_cell(r)]
        for r in runs
    ]
    return markdown_table([[scrub(str(value)) for value in row] for row in rows], HEADERS)


def across_releases(runs: Sequence[StoredResult], sizes: dict[str, int]) -> str:
    if not runs:
        return ""
    at_sizes = [r for r in runs if r.sizes == sizes]
    if at_sizes:
        caption = f"Stored runs at the script's sizes ({sizes_text(sizes)}), newest per release and profile"
        shown = at_sizes
    else:
        caption = f"No stored run at the script's sizes ({sizes_text(sizes)}); the newest run per release and profile"
        newest = newest_runs(runs, lambda r: (r.release, r.profile))
        shown = sorted((item.result for item in newest.values()), key=lambda r: (release_key(r.release), r.profile))
    return "\n".join(
        [
            "#### Across releases",
            "",
            f"{caption} (a run's median is the median of its process medians):",
            "",
            runs_table(shown),
            "",
            f"<details><summary>All {len(runs)} stored runs (newest per release, profile and sizes)</summary>",
            "",
            runs_table(runs),
            "",
            "</details>",
        ]
    )


def bisect_section(bisects: Sequence[Bisect]) -> str:
    if not bisects:
        return ""
    lines = ["#### Bisect"]
    for b in bisects:
        if b.data is None:
            lines += ["", f"`{b.name}` could not be read: {scrub(b.problem)}"]
            continue
        raw = scrub(json.dumps(b.data, indent=1, sort_keys=True))
        lines += [
            "",
            f"From `{b.name}`: {scrub(bisect_answer(b.data))}",
            "",
            f"<details><summary>{b.name}</summary>",
            "",
            fenced(raw, "json"),
            "",
            "</details>",
        ]
    return "\n".join(lines)


def bisect_answer(data: Any) -> str:
    """The answer of a stored bisect, in one line, whatever shape the file has."""
    if not isinstance(data, dict):
        return _one_line(json.dumps(data))
    if "last_good" in data and "first_bad" in data:
        return f"last good {data['last_good']}, first bad {data['first_bad']}"
    for key in BISECT_ANSWER_KEYS:
        if isinstance(data.get(key), str):
            return _one_line(data[key])
    scalars = [f"{k}: {v}" for k, v in data.items() if isinstance(v, str | int | float | bool)]
    return _one_line("; ".join(scalars[:6])) or "(no answer recorded)"


def system_info(run: ScriptRun, environment_info: str) -> str:
    variables = shareable_variables(run.variables)
    shown = ", ".join(f"`{k}={v}`" for k, v in variables.items()) or "none"
    return "\n".join(
        [
            "### System info (python version, jaxlib version, accelerator, etc.)",
            "",
            f"jax {run.release}, harness profile `{run.profile}`; environment variables set: {shown}.",
            "",
            "<details><summary>Output of <code>jax.print_environment_info()</code></summary>",
            "",
            fenced(scrub(environment_info).strip() or "(unavailable)", "text"),
            "",
            "</details>",
        ]
    )


def fenced(text: str, language: str) -> str:
    """A code block whose fence is longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _holds(result: StoredResult) -> bool | None:
    return {HOLDS: True, DOES_NOT_HOLD: False}.get(outcome(result))


def _evidence(result: StoredResult) -> str:
    return scrub(_one_line(claim_evidence(result)))


def _releases(runs: Sequence[StoredResult]) -> str:
    """``jax 0.4.26 (cpu, cpu8), jax 0.4.30 (cpu)``."""
    profiles: dict[str, set[str]] = defaultdict(set)
    for r in runs:
        profiles[r.release].add(r.profile)
    ordered = sorted(profiles, key=release_key)
    return ", ".join(f"jax {release} ({', '.join(sorted(profiles[release]))})" for release in ordered)


def _counted(group: Sequence[StoredResult], runs: Sequence[StoredResult]) -> str:
    """``jax 0.4.26 (cpu: 2 of 2 sizes), ...``: per release and profile, out of the sizes judged there
    (settled or not)."""
    judged: dict[tuple[str, str], int] = defaultdict(int)
    for r in runs:
        if outcome(r) in (HOLDS, DOES_NOT_HOLD, UNSETTLED):
            judged[(r.release, r.profile)] += 1
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for r in group:
        counts[(r.release, r.profile)] += 1
    ordered = sorted(counts, key=lambda p: (release_key(p[0]), p[1]))
    return ", ".join(f"jax {rel} ({prof}: {counts[rel, prof]} of {judged[rel, prof]} sizes)" for rel, prof in ordered)


def _examples(runs: Sequence[StoredResult], sizes: dict[str, int], profile: str) -> list[StoredResult]:
    """A run where the claim fails and one where it holds: at the script's sizes and profile where possible."""

    def best(candidates: list[StoredResult], prefer: dict[str, int]) -> StoredResult | None:
        ranked = sorted(candidates, key=lambda r: (r.sizes == prefer, r.profile == profile, r.created_at))
        return ranked[-1] if ranked else None

    failing = best([r for r in runs if _holds(r) is False], sizes)
    prefer = failing.sizes if failing else sizes
    holding = best([r for r in runs if _holds(r) is True], prefer)
    return [r for r in (failing, holding) if r is not None]
