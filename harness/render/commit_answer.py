"""A commit bisect's answer: one screen, markdown for reports/, JSON for issue drafts, read as a
release bisect's (its ends the two releases, ``probes`` theirs); ``commit``/``jaxlib_change`` carry
the answer as data, every probe under ``commit_probes``."""

from __future__ import annotations

from collections import Counter
from typing import Any

from harness.analysis.significance import Comparison
from harness.explain.defaults import JAX
from harness.explain.tried import DefaultsAnswer
from harness.findings import Finding
from harness.install.commit_venvs import commit_label
from harness.metric_names import Criterion
from harness.render import screen
from harness.render.range_screen import Block, frame, head_line, metric_row
from harness.render.release_answers import (
    CLASSIFICATION,
    Answer,
    answer_head,
    findings_json,
    judged_cells,
    judged_json,
)
from harness.render.tables import markdown_table, rule_text
from harness.render.text import inline
from harness.render.why import issue_follow_up, why_json, why_lines
from harness.steps.answers import Setting
from harness.steps.commit_bisect import JAXLIB, CommitBisect, CommitProbe, expected_commit_probes
from harness.steps.evidence import of_kind


def _what(probe: CommitProbe) -> str:
    commit = probe.commit
    return f"release {probe.name}" if commit is None else f"{commit.short} {commit.title[:60]}"


def _count_line(found: CommitBisect, setting: Setting) -> str:
    n = len(found.commits)
    tried = {(p.name, p.jaxlib) for p in found.probes if p.commit is not None}
    installs = len(tried) + len(found.not_installed)
    return (
        f"{n} jax commits from {found.first} to {found.last} along the first parents; "
        f"{len(found.probes)} probes (⌈log2 {n + 1}⌉ + 4 = {expected_commit_probes(n)} expected "
        f"for one change), {installs} commit installs ({len(found.not_installed)} did not install "
        f"or import); wall time {setting.wall_s:.0f} s, installs included"
    )


def commit_bisect_screen(found: CommitBisect, setting: Setting, report: str) -> str:
    head = [
        head_line("Bisect over jax commits", setting, found.first, found.last),
        *screen.wrap(_count_line(found, setting)),
    ]
    if found.attribution.note:
        head += screen.wrap(f"Attribution: {found.attribution.note}")
    verdicts = Counter(found.terms.word(p.judgement.verdict) for p in found.probes)
    head.append(f"probed: {', '.join(f'{n} {w}' for w, n in verdicts.items())}")
    step, metric = found.step(), setting.metric
    comparison = None if step is None else _step_comparison(found, step[1])
    answer = screen.wrap(f"Answer: {found.answer()}")
    if step is None or metric is None or comparison is None:
        return frame(head, [], answer, setting, [f"Report: {report}"])
    bad = found.first_bad_commit
    head += [*answer, *([f"Commit: {bad.url}"] if bad is not None else [])]
    purpose = "the upstream issue, drafted (it quotes this answer)"
    draft = issue_follow_up(setting, found.first, found.last, setting.criterion, purpose)
    against = f"The step, against the {found.terms.old} release:"
    rows = [metric_row(Criterion.of(metric), comparison)]
    block = Block(against, f"{step[0]} → {step[1]}", rows, commit_why(found, setting), [draft])
    return frame(head, [block], [], setting, [f"Report: {report}"])


def _step_comparison(found: CommitBisect, after: str) -> Comparison | None:
    for probe in reversed(found.probes):
        label = probe.name if probe.commit is None else commit_label(probe.name, probe.jaxlib)
        if label == after:
            return probe.judgement.vs_good
    return None


def commit_why(found: CommitBisect, setting: Setting) -> list[Finding]:
    """Why the step moved, led by what it needs where a jaxlib and a jax default both take part."""
    step = found.step()
    if step is None or setting.metric is None or step not in setting.evidence:
        return []
    comparison = _step_comparison(found, step[1])
    lines = why_lines(setting, *step, comparison, setting.criterion, unwanted=True)
    defaults = of_kind(setting.evidence[step], DefaultsAnswer)
    jaxlib = found.attribution.newer if found.attribution.cause == JAXLIB else None
    jaxlib = jaxlib or (found.jaxlibs[found.last] if found.jaxlib_change else None)
    if defaults is None or jaxlib is None or comparison is None:
        return lines
    back = defaults.workarounds(setting.metric, comparison)
    options = [t for t in back if t.trial.change.kind == JAX]
    if options:
        trial = options[0].trial
        commit = defaults.commits.get(trial.change.name)
        where = f" ({commit.words()})" if commit is not None else ""
        said = f"needs both: jaxlib {jaxlib} and jax's `{trial.change.name}` default{where}"
        lines.insert(0, Finding(said, leads=True))
    return lines


def commit_bisect_markdown(found: CommitBisect, setting: Setting) -> str:
    terms, bad = found.terms, found.first_bad_commit
    ends = [f"vs {terms.old}", f"vs {terms.new}"]
    rows = [
        [str(i), p.stage, _what(p), p.jaxlib, *judged_cells(p.judgement, terms, setting.metric)]
        for i, p in enumerate(found.probes, 1)
    ]
    lines = [
        f"# Bisect over jax commits: {inline(setting.case)}, jax {found.first} → {found.last}",
        "",
        f"**{inline(found.answer())}**",
        "",
        f"- {inline(setting.header())}",
        f"- {found.terms.old} release {found.first} (jaxlib {found.jaxlibs[found.first]}), "
        f"{found.terms.new} release {found.last} (jaxlib {found.jaxlibs[found.last]})",
        f"- {_count_line(found, setting)}",
        f"- attribution: {found.attribution.note or 'not reached'}",
        *([f"- the commit: [{bad.sha}]({bad.url})"] if bad else []),
        *(f"- {inline(line.markdown())}" for line in commit_why(found, setting)),
        "",
        "## Every probe, in the order probed",
        "",
        markdown_table(
            rows, ["#", "stage", "jax", "jaxlib", "verdict", "median", *ends, "why", "source"]
        ),
        "",
        "Each commit is measured interleaved with both releases and judged against them. "
        + rule_text(setting.thresholds)
        + (" " + CLASSIFICATION if setting.metric else ""),
        "",
    ]
    if found.not_installed:
        lines += ["## Commits that did not install or import", ""]
        lines += [f"- {sha[:10]} with jaxlib {lib}: {why}" for sha, lib, why in found.not_installed]
        lines.append("")
    return "\n".join(lines)


def commit_bisect_json(found: CommitBisect, setting: Setting) -> dict[str, Any]:
    old, new = found.terms.old, found.terms.new
    data: dict[str, Any] = {
        **answer_head(setting, found.terms, found.first, found.last),
        "by": "commits",
        "answer": found.answer(),
        "attribution": {"cause": found.attribution.cause, "note": found.attribution.note},
    }
    bad = found.first_bad_commit
    if bad is not None or found.jaxlib_change:
        data.update({f"last_{old}": found.first, f"first_{new}": found.last})
    if bad is not None:
        data["commit"] = {
            "sha": bad.sha,
            "title": bad.title,
            "date": bad.date,
            "pull_request": bad.pull_request,
            "url": bad.url,
            "jaxlib": found.jaxlib_of(bad.sha),
        }
    if found.jaxlib_change:
        data["jaxlib_change"] = found.jaxlib_change
    data.update(findings_json(commit_why(found, setting)))
    data.update(why_json(setting))
    data.update(
        probe_count=len(found.probes),
        expected_probes=expected_commit_probes(len(found.commits)),
        commits=len(found.commits),
        probes=[_probe_json(p, found, setting) for p in found.probes if p.commit is None],
        commit_probes=[_probe_json(p, found, setting) for p in found.probes],
        not_installed=[
            {"sha": sha, "jaxlib": jaxlib, "why": why} for sha, jaxlib, why in found.not_installed
        ],
    )
    return data


def _probe_json(probe: CommitProbe, found: CommitBisect, setting: Setting) -> dict[str, Any]:
    return {
        "release": probe.name,
        "commit": probe.commit.sha if probe.commit else None,
        "stage": probe.stage,
        "jaxlib": probe.jaxlib,
        **judged_json(probe.judgement, found.terms, setting.metric),
    }


def commit_bisect_answer(found: CommitBisect, setting: Setting, report: str = "") -> Answer:
    return Answer(
        commit_bisect_screen(found, setting, report),
        commit_bisect_markdown(found, setting),
        commit_bisect_json(found, setting),
    )
