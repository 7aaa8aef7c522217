"""Bisect and sweep answers as markdown for reports/ and as JSON for issue drafts (a bisect's
``last_good`` and ``first_bad`` only where both are known: ``upstream.change`` reads them back)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from harness.analysis.claims import claim_evidence, claim_verdict, outcome
from harness.analysis.metrics import MetricKey, metric_samples
from harness.analysis.significance import Comparison
from harness.findings import Finding
from harness.host.environment import redact
from harness.render.bisect_screen import Bisected, bisect_follow_ups, bisect_screen, bisect_why
from harness.render.json_out import comparison_json, leaves_mapped, thresholds_json
from harness.render.range_screen import status_words, sweep_screen, unmeasured_line
from harness.render.tables import markdown_table, rule_text
from harness.render.text import inline
from harness.render.why import why_json
from harness.steps.answers import Setting
from harness.steps.bisection import BisectOutcome, SweepOutcome, expected_probes
from harness.steps.judge import FIX, Judgement, Terms
from harness.steps.probes import Probe
from harness.store.results import StoredResult
from harness.store.schema import RunStatus
from harness.units import format_p


@dataclass(frozen=True)
class Answer:
    """A range command's answer for the terminal, the reports folder and as data, redacted: it
    quotes stored results, and a result merged from another machine or edited by hand is input."""

    text: str
    markdown: str
    data: dict[str, Any]

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", redact(self.text))
        object.__setattr__(self, "markdown", redact(self.markdown))
        # every string of the data, its keys left as they are (the answer's own names)
        data = leaves_mapped(self.data, lambda s: redact(s) if isinstance(s, str) else s)
        object.__setattr__(self, "data", data)


CLASSIFICATION = (
    "A probe is *bad* when it is significantly different from the good endpoint in the direction "
    "the bad endpoint differs, and not significantly different from the bad endpoint back towards "
    "the good one; *good* the other way round; otherwise it is measured once more in twice the "
    "processes and, if still ambiguous, *inconclusive*. Inconclusive and skipped releases (not "
    "installable, or not ok) are set aside, as `git bisect skip` does."
)


def median_ns(result: StoredResult | None, metric: MetricKey | None) -> float | None:
    if result is None or result.result.status is not RunStatus.OK or metric is None:
        return None
    samples = metric_samples(result).get(metric)
    return samples.figure if samples else None


DRIFT = (
    "Each release is measured in several case processes (a sweep measures all its releases in one "
    "interleaved run) and a step needs them to differ beyond their spread; still, read a step with "
    "its size and with the metrics that move with it (`jax-repro calibrate` says how noisy this "
    "machine is)."
)


def median_cell(result: StoredResult | None, metric: MetricKey | None) -> str:
    value = median_ns(result, metric)
    return "–" if value is None or metric is None else metric.format(value)


def against_cell(comparison: Comparison | None) -> str:
    if comparison is None:
        return "–"
    if not comparison.shape.ratio:  # no ratio: what each side showed
        return comparison.said
    if comparison.constant:  # known exactly: no interval, no test; from or to zero, no ratio either
        return f"{comparison.ratio_cell} {comparison.said}"
    return (
        f"{comparison.ratio_cell} [{comparison.interval_cell}] "
        f"p={format_p(comparison.p_value)} {comparison.said}"
    )


def judged_cells(judged: Judgement, terms: Terms, metric: MetricKey | None) -> list[str]:
    return [
        terms.word(judged.verdict),
        median_cell(judged.result, metric),
        against_cell(judged.vs_good),
        against_cell(judged.vs_bad),
        judged.reason,
        judged.note,
    ]


def judged_json(judged: Judgement, terms: Terms, metric: MetricKey | None) -> dict[str, Any]:
    return {
        "verdict": terms.word(judged.verdict),
        "reason": judged.reason,
        "source": judged.note,
        "median_ns": median_ns(judged.result, metric),
        "vs_good": comparison_json(judged.vs_good),
        "vs_bad": comparison_json(judged.vs_bad),
    }


def _probe_rows(found: BisectOutcome, setting: Setting) -> tuple[list[str], list[list[str]]]:
    probes, terms = found.probes, setting.terms
    ran = [[str(i), j.release, setting.jaxlib.get(j.release, "?")] for i, j in enumerate(probes, 1)]
    if setting.metric is None:
        said = [(claim_evidence(j.result) if j.result is not None else "") for j in probes]
        cells = [
            [terms.word(j.verdict), j.claim or "–", evidence or j.reason, j.note]
            for j, evidence in zip(probes, said, strict=True)
        ]
        heads = ["claim", "evidence", "source"]
    else:
        cells = [judged_cells(j, terms, setting.metric) for j in probes]
        heads = ["median", f"vs {terms.old} endpoint", f"vs {terms.new} endpoint", "why", "source"]
    rows = [[*row, *cell] for row, cell in zip(ran, cells, strict=True)]
    return ["#", "jax", "jaxlib", "verdict", *heads], rows


def _count_line(found: BisectOutcome, setting: Setting) -> str:
    n = len(found.releases)
    return (
        f"{n} releases in the range ({', '.join(found.releases)}); {len(found.probes)} probes "
        f"(⌈log2 {n}⌉ + 2 = {expected_probes(n)} expected for one change; set-aside releases add "
        f"probes); wall time {setting.wall_s:.0f} s, installs included"
    )


def _headline(found: BisectOutcome) -> str:
    if not found.found:
        return f"**No answer**: {inline(found.stopped)}"
    terms = found.terms
    if terms == FIX:
        return f"**Fixed in: jax {found.first_bad} · last broken: jax {found.last_good}**"
    return f"**First {terms.new}: jax {found.first_bad} · last {terms.old}: jax {found.last_good}**"


def bisect_markdown(found: BisectOutcome, setting: Setting, hint: Finding | None = None) -> str:
    headers, rows = _probe_rows(found, setting)
    probed = {j.release: setting.terms.word(j.verdict) for j in found.probes}
    span = [
        [r, setting.jaxlib.get(r, "?"), *library_cells(setting, r), probed.get(r, "not probed")]
        for r in found.releases
    ]
    old, new = setting.terms.old, setting.terms.new
    lines = [
        f"# Bisect: {inline(setting.case)}",
        "",
        _headline(found),
        "",
        *([hint.markdown(), ""] if hint is not None else []),
        f"- {inline(setting.header())}",
        f"- {old} endpoint {found.releases[0]}, {new} endpoint {found.releases[-1]}",
        f"- {_count_line(found, setting)}",
        f"- answer: {inline(found.answer())}",
        *(f"- {inline(line.markdown())}" for line in bisect_why(found, setting)),
        *(
            f"- next, {inline(line.markdown())}"
            for line in (bisect_follow_ups(Bisected(found, setting)) if found.found else [])
        ),
        "",
        "## Evidence, in the order probed",
        "",
        markdown_table(rows, headers),
        "",
        rule_text(setting.thresholds) + (" " + CLASSIFICATION if setting.metric else ""),
        "",
        "## The range",
        "",
        markdown_table(span, ["jax", "jaxlib", *library_cells(setting), "verdict"]),
        "",
    ]
    return "\n".join(lines)


def findings_json(why: list[Finding]) -> dict[str, Any]:
    return {"why": [f.markdown() for f in why], "findings": [f.data() for f in why]} if why else {}


def answer_head(setting: Setting, terms: Terms, first: str, last: str) -> dict[str, Any]:
    return {
        "case": setting.case,
        "sizes": setting.sizes,
        "profile": setting.profile,
        "criterion": "metric" if setting.metric else setting.criterion.name,  # or its name
        "metric": setting.metric.metric_name if setting.metric else None,
        "terms": {"old": terms.old, "new": terms.new},
        terms.old: first,
        terms.new: last,
        "wall_s": round(setting.wall_s, 1),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def bisect_json(
    found: BisectOutcome, setting: Setting, hint: Finding | None = None
) -> dict[str, Any]:
    """The answer as data, the endpoints' keys in its terms (``last_broken``/``first_fixed``...)."""
    old, new = found.terms.old, found.terms.new
    data: dict[str, Any] = {
        **answer_head(setting, found.terms, found.releases[0], found.releases[-1]),
        "releases": found.releases,
        "answer": found.answer(),
    }
    if hint is not None:
        data["hint"] = hint.markdown()
    if found.found:
        data.update({f"last_{old}": found.last_good, f"first_{new}": found.first_bad})
        data.update(untested_between=found.between())
        data.update(findings_json(bisect_why(found, setting)))
        data["next"] = [each.data() for each in bisect_follow_ups(Bisected(found, setting))]
        data.update(why_json(setting))
    data.update(
        probe_count=len(found.probes),
        expected_probes=expected_probes(len(found.releases)),
        thresholds=thresholds_json(setting.thresholds),
        probes=[
            {
                "release": j.release,
                "jaxlib": setting.jaxlib.get(j.release),
                **judged_json(j, setting.terms, setting.metric),
                "result": j.result.path.name if j.result is not None else None,
                "claim": j.claim,
            }
            for j in found.probes
        ],
    )
    return data


def _steps_lines(found: SweepOutcome) -> list[str]:
    if found.unmeasured():
        return [unmeasured_line(found)]
    if not found.steps:
        return ["No significant step between consecutive releases."]
    lines = []
    for step in found.steps:
        detail = against_cell(step.comparison)  # a cost's said beside its way; the rest say it
        detail = f"{step.said} {detail}" if step.comparison.shape.ratio else detail
        said = f"{step.criterion.name}: {step.before} → {step.after}: {detail}"
        lines.append(f"- {inline(said)}")
    if several := found.stepped_more_than_once():
        lines += [
            "",
            f"More than one step in {', '.join(several)}: a bisection between the endpoints would "
            "report only one.",
        ]
    return lines


METRIC_HEADERS = ["jax", "median", "vs previous: ratio [interval] p verdict"]


def library_cells(setting: Setting, release: str | None = None) -> list[str]:
    """A plain script's libraries at ``release`` (none: the column's header), or no column."""
    if not setting.libraries.versions:
        return []
    if release is None:
        return ["the script's libraries"]
    versions = setting.libraries.versions.get(release, {})
    return [", ".join(f"{name} {version}" for name, version in sorted(versions.items())) or "–"]


def died_json(probe: Probe) -> list[dict[str, Any]]:
    if probe.result is None:
        return []
    return [
        {"process": p.index, **p.died.to_json()}
        for p in probe.result.result.processes
        if p.died is not None
    ]


def release_rows(found: SweepOutcome, setting: Setting) -> tuple[list[list[str]], list[str]]:
    """The releases table's rows and columns: a plain script's libraries beside each release; the
    claim only where a release has one (a watched suite states none)."""
    shown = any(m.result is not None and claim_verdict(m.result) for m in found.measurements)
    rows = []
    for m in found.measurements:
        ran = [m.release, setting.jaxlib.get(m.release, "?"), status_words(m, "{}: {}")]
        # A run that finished ok without a verdict (a plain script prints none): no claim to show.
        claim = outcome(m.result) if m.result is not None else "–"
        claims = ["–" if claim == RunStatus.OK else claim] if shown else []
        rows.append([*ran, *library_cells(setting, m.release), *claims, m.note])
    headers = ["jax", "jaxlib", "status", *library_cells(setting)]
    return rows, [*headers, *(["claim"] if shown else []), "source"]


def sweep_markdown(found: SweepOutcome, setting: Setting) -> str:
    lines = [
        f"# Sweep: {inline(setting.case)}, jax {found.releases[0]} → {found.releases[-1]}",
        "",
        f"- {inline(setting.header())}",
        f"- {len(found.releases)} releases, {len(found.ok())} ran ok; wall time "
        f"{setting.wall_s:.0f} s, installs included",
        "",
        "## Steps",
        "",
        "Each release against the previous one that ran ok. " + DRIFT,
        "",
        *_steps_lines(found),
        "",
        *releases_markdown(found, setting, "## Releases"),
    ]
    return "\n".join(lines)


def releases_markdown(found: SweepOutcome, setting: Setting, heading: str) -> list[str]:
    lines = [heading, "", markdown_table(*release_rows(found, setting)), ""]
    for key in found.metrics:
        compared = [(m, found.comparisons.get((key, m.release))) for m in found.ok()]
        rows = [[m.release, median_cell(m.result, key), against_cell(c)] for m, c in compared]
        title = f"### {inline(key.metric_name)} · {inline(key.label())}"  # a script's name: text
        lines += [title, "", markdown_table(rows, METRIC_HEADERS), ""]
    return [*lines, rule_text(setting.thresholds), ""]


def sweep_json(found: SweepOutcome, setting: Setting) -> dict[str, Any]:
    return {
        "case": setting.case,
        "sizes": setting.sizes,
        "profile": setting.profile,
        "metric": setting.metric.metric_name if setting.metric else None,
        "thresholds": thresholds_json(setting.thresholds),
        "wall_s": round(setting.wall_s, 1),
        "in_range": len(found.releases),  # ``releases``: those measured (a triage's grid: some)
        "releases": [
            {
                "release": m.release,
                "jaxlib": setting.jaxlib.get(m.release),
                "status": m.result.result.status if m.result is not None else "not installed",
                "died": died_json(m),
                "source": m.note,
                "result": m.result.path.name if m.result is not None else None,
            }
            for m in found.measurements
        ],
        "steps": [
            {
                "metric": step.criterion.name,
                "before": step.before,
                "after": step.after,
                "change": step.said,
                "comparison": comparison_json(step.comparison),
            }
            for step in found.steps
        ],
        "comparisons": [
            {
                "metric": key.metric_name,
                "release": release,
                "vs_previous": comparison_json(compared),
            }
            for (key, release), compared in found.comparisons.items()
        ],
    }


def bisect_answer(
    found: BisectOutcome, setting: Setting, hint: Finding | None = None, report: str = ""
) -> Answer:
    """One bisect's answer; its screen names ``report`` last (``bisect_screen`` joins several)."""
    text = bisect_screen([Bisected(found, setting, hint)], setting, [report])
    return Answer(text, bisect_markdown(found, setting, hint), bisect_json(found, setting, hint))


def sweep_answer(found: SweepOutcome, setting: Setting, report: str = "") -> Answer:
    return Answer(
        sweep_screen(found, setting, report),
        sweep_markdown(found, setting),
        sweep_json(found, setting),
    )
