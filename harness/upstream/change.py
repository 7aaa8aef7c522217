"""The change an issue draft is about: which metric, from which release to which, by how
much.  Pure.

It comes from a stored bisect answer (``read_bisect_answers`` reads them: the one place
that knows their file names), from ``--good``/``--bad`` and the stored results of
those releases, or, last, from the short script's own output on both releases.  A
bisect by the claim names no metric: of the metrics that changed significantly (by the
report's rule) between the two releases' stored results, the one that slowed down
most is quoted, else the one that changed most.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.analysis.metrics import compare_metric, metric_samples
from harness.analysis.significance import MOVED, Thresholds, Verdict, format_margin
from harness.findings import Finding, finding_from
from harness.metric_names import JSON, PROCESS, MetricKey, parse_metric_name
from harness.store.files import DocumentProblem, parse_document, read_bounded
from harness.store.results import StoredResult
from harness.store.schema import RunStatus
from harness.units import format_p, version_key

PLATFORMS = {"cpu": "CPU", "gpu": "GPU"}
MOVED_WORDS = {Verdict.SLOWER: "slower", Verdict.FASTER: "faster"}

# A bisect answer is a few kB of JSON; a larger file is no answer, and reading it whole could
# exhaust memory.
MAX_ANSWER_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class BisectAnswer:
    """One stored bisect answer: its file name and JSON (None when it could not be read)."""

    name: str
    data: Any
    problem: str = ""


def read_bisect_answers(reports_dir: Path, case: str) -> list[BisectAnswer]:
    """Every stored bisect answer of ``case``: ``bisect-CASE.json`` and ``bisect-CASE-*.json`` (one
    per range).

    The only code that knows where bisect answers are stored and what they are called.
    """
    return _read_answers(reports_dir, "bisect", case)


def read_triage_answers(reports_dir: Path, case: str) -> list[BisectAnswer]:
    """Every stored triage answer of ``case`` (``triage-CASE-*.json``), read as bisect answers
    are."""
    return _read_answers(reports_dir, "triage", case)


def _read_answers(reports_dir: Path, command: str, case: str) -> list[BisectAnswer]:
    paths = [
        reports_dir / f"{command}-{case}.json",
        *sorted(reports_dir.glob(f"{command}-{case}-*.json")),
    ]
    found = []
    for path in paths:
        if not path.exists() and not path.is_symlink():
            continue
        try:
            # Bounded as results are: a FIFO, a link, a huge or deeply nested file is named, never
            # read whole.
            data = parse_document(read_bounded(path, limit=MAX_ANSWER_BYTES, follow_links=False))
            found.append(BisectAnswer(path.name, data))
        except DocumentProblem as exc:
            found.append(BisectAnswer(path.name, None, str(exc)))
        except OSError as exc:
            found.append(BisectAnswer(path.name, None, exc.strerror or str(exc)))
    return found


@dataclass(frozen=True)
class ProbeRow:
    """One release a bisect measured, as a row of the draft's table shows it."""

    release: str
    median_ns: float | None
    verdict: str
    vs_good: str
    vs_bad: str


@dataclass(frozen=True)
class Reproduced:
    """A reproducer with jax alone as a bisect answer names it: its folder and script beside the
    answer, the release that exported its programs, and per metric of the script its counterpart's
    verdict."""

    folder: str  # ``<stem>-reproducer/``
    script: str  # ``repro_<digest>.py``
    exported_on: str
    lines: int
    measured: dict[str, tuple[str, float | None]]  # metric → (verdict, ratio) of its counterpart
    counterparts: dict[str, str]  # metric → the reproducer's metric that shows it
    note: str = ""  # the capture's own: a cap reached, equinox's checks left out


REPRODUCER_FOLDER = re.compile(r"^[A-Za-z0-9][\w.+=-]*-reproducer/$")
REPRODUCER_SCRIPT = re.compile(r"^repro_[0-9a-f]{10}\.py$")


@dataclass(frozen=True)
class Change:
    # None until a figure shows which one (a bisect by the claim, nothing stored)
    metric: MetricKey | None
    last_good: str
    first_bad: str
    before_ns: float | None = None  # the metric's figure on the last good release
    after_ns: float | None = None
    source: str = ""  # where the releases come from, in words
    answer: str = ""  # the bisect's own one-line answer
    probes: list[ProbeRow] = field(default_factory=list)
    # The two releases' stored results compared by the report's rule, in words; empty when not
    # compared.
    significance: str = ""
    # whether that rule calls it slower or faster; None: not compared
    significant: bool | None = None
    # a bisect over jax's commits (``bisect --commits``): its answer, the commit or the jaxlib
    below: str = ""
    # The bisect's findings on why (changed defaults tried, compiled programs compared), each marked
    # leading or not; an older answer's plain sentences lead none.
    why: tuple[Finding, ...] = ()
    dumps: str = ""  # the folder, beside the bisect answer, holding XLA's dumps of both releases
    reproducer: Reproduced | None = None  # the reproducer with jax alone the bisect's why measured
    # What the figures are judged by: the run's thresholds (a bisect answer's own), else the
    # defaults.
    thresholds: Thresholds = field(default_factory=Thresholds)

    def reproduced(self) -> bool:
        """Whether the reproducer moved as the change did on its metric: it can lead the draft."""
        found = self.reproducer
        if found is None or self.metric is None or self.ratio is None:
            return False
        verdict, ratio = found.measured.get(self.metric.metric_name, ("", None))
        return (
            verdict in MOVED_WORDS.values()
            and ratio is not None
            and (ratio > 1) == (self.ratio > 1)
        )

    @property
    def ratio(self) -> float | None:
        if self.before_ns and self.after_ns:
            return self.after_ns / self.before_ns
        return None


def change_from(
    answers: Sequence[BisectAnswer],
    results: Sequence[StoredResult],
    *,
    case: str,
    sizes: dict[str, int],
    profile: str,
    good: str | None = None,
    bad: str | None = None,
    metric: MetricKey | None = None,
    thresholds: Thresholds | None = None,
) -> Change | None:
    """The change to quote: ``good``/``bad`` when given, else the newest usable bisect answer; None
    if neither."""
    usable = [a for a in answers if _matches(a.data, case, sizes, profile)]
    rule = thresholds or Thresholds()
    if good is not None and bad is not None:
        usable = [a for a in usable if answer_ends(a.data) == (good, bad)]
        change = (
            _from_answer(usable[-1], metric, rule)
            if usable
            else Change(metric, good, bad, source="--good/--bad", thresholds=rule)
        )
    elif usable:
        newest = max(usable, key=lambda a: str(a.data.get("created_at", "")))
        change = _from_answer(newest, metric, rule)
    else:
        return None
    if change.metric is not None and change.before_ns is not None and change.after_ns is not None:
        return change
    return _with_stored_figures(change, results, case, sizes, profile, change.thresholds)


def answer_ends(data: Any) -> tuple[str, str] | None:
    """The last release before the change and the first after it: a regression bisect's last good
    and first bad release, a fix bisect's (``--broken``/``--fixed``) last broken and first fixed
    one."""
    if not isinstance(data, dict):
        return None
    for before, after in (("last_good", "first_bad"), ("last_broken", "first_fixed")):
        if isinstance(data.get(before), str) and isinstance(data.get(after), str):
            return data[before], data[after]
    return None


def answer_about(data: Any, case: str, sizes: dict[str, int], profile: str) -> bool:
    """Whether a stored answer's document is about this case, at these sizes, on this profile."""
    return (
        isinstance(data, dict)
        and data.get("case") == case
        and data.get("sizes") == sizes
        and data.get("profile") == profile
    )


def _matches(data: Any, case: str, sizes: dict[str, int], profile: str) -> bool:
    return (
        answer_about(data, case, sizes, profile)
        and answer_ends(data) is not None
        and data.get("criterion") != "status"  # a crash's: drafted by ``issue --status``
    )


def _from_answer(answer: BisectAnswer, metric: MetricKey | None, rule: Thresholds) -> Change:
    data = answer.data
    named = data.get("metric")
    bisected = parse_metric_name(named) if isinstance(named, str) else None
    probes = []
    for probe in data.get("probes") or []:
        if isinstance(probe, dict) and isinstance(probe.get("release"), str):
            probes.append(
                ProbeRow(
                    probe["release"],
                    _number(probe.get("median_ns")),
                    str(probe.get("verdict", "–")),
                    _comparison_text(probe.get("vs_good")),
                    _comparison_text(probe.get("vs_bad")),
                )
            )
    probes.sort(key=lambda p: version_key(p.release))
    figures = (
        {p.release: p.median_ns for p in probes}
        if bisected is not None and metric in (None, bisected)
        else {}
    )
    ends = answer_ends(data)
    assert ends is not None  # only answers that _matches are read
    before, after = ends
    return Change(
        metric or bisected,
        before,
        after,
        figures.get(before),
        figures.get(after),
        source=f"`{answer.name}`",
        answer=" ".join(str(data.get("answer", "")).split()),
        below=" ".join(str(data.get("answer", "")).split()) if data.get("by") == "commits" else "",
        probes=probes,
        why=_findings(data),
        dumps=_dumps_folder(data.get("compiled"), (before, after)),
        reproducer=reproducer_named(data.get("reproducer"), (before, after)),
        thresholds=_thresholds(data.get("thresholds"), rule),
    )


def _findings(data: dict[str, Any]) -> tuple[Finding, ...]:
    """The answer's findings as data (``findings``); an older answer has its sentences only
    (``why``)."""
    stored = data.get("findings") if isinstance(data.get("findings"), list) else data.get("why")
    found = (finding_from(each) for each in (stored if isinstance(stored, list) else []))
    return tuple(each for each in found if each is not None)


def _thresholds(stored: Any, rule: Thresholds) -> Thresholds:
    """The thresholds the answer's run judged by (as ``render.json_out.thresholds_json`` wrote
    them), over ``rule``; ``rule`` where it stored none or what it stored is not numbers."""
    if not isinstance(stored, dict):
        return rule
    numbers: dict[str, Any] = {
        name: float(stored[name])
        for name in ("factor", "alpha", "confidence", "invocation_spread")
        if (_number(stored.get(name)) or 0) > 0 and not isinstance(stored.get(name), bool)
    }
    for declared in ("higher_is_better", "values", "costs"):
        names = stored.get(declared)
        if isinstance(names, list):
            numbers[declared] = tuple(name for name in names if isinstance(name, str))
    return replace(rule, **numbers)


def reproducer_named(found: Any, ends: tuple[str, str]) -> Reproduced | None:
    """The reproducer of the change's two releases the answer names, where its folder and script are
    plain names of the shape the harness writes (never a path elsewhere) and it was measured."""
    for entry in found if isinstance(found, list) else []:
        if not isinstance(entry, dict) or (entry.get("before"), entry.get("after")) != ends:
            continue
        folder, script = entry.get("folder"), entry.get("script")
        if not (isinstance(folder, str) and REPRODUCER_FOLDER.match(folder) and ".." not in folder):
            continue
        if not (isinstance(script, str) and REPRODUCER_SCRIPT.match(script)):
            continue
        measured, counterparts = {}, {}
        for metric, said in (entry.get("measured") or {}).items():
            if isinstance(metric, str) and isinstance(said, dict):
                verdict = said.get("verdict")
                measured[metric] = (
                    verdict if isinstance(verdict, str) else "",
                    _number(said.get("ratio")),
                )
                counterparts[metric] = str(said.get("counterpart", ""))[:64]
        lines = entry.get("lines")
        return Reproduced(
            folder,
            script,
            str(entry.get("exported_on", ""))[:64],
            lines if isinstance(lines, int) else 0,
            measured,
            counterparts,
            " ".join(str(entry.get("note", "")).split())[:300],
        )
    return None


# What a bisect answer may name as its dumps' folder: one plain name beside it, never a path
# elsewhere.
DUMPS_FOLDER = re.compile(r"^[A-Za-z0-9][\w.+=-]*-compiled/$")


def _dumps_folder(compiled: Any, ends: tuple[str, str]) -> str:
    """The folder of XLA's dumps of the change's two releases that the answer names, if it is a
    plain name."""
    for entry in compiled if isinstance(compiled, list) else []:
        if (
            isinstance(entry, dict)
            and (entry.get("before"), entry.get("after")) == ends
            and not entry.get("problem")
        ):
            folder = entry.get("folder")
            if isinstance(folder, str) and DUMPS_FOLDER.match(folder) and ".." not in folder:
                return folder
    return ""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def _comparison_text(value: Any) -> str:
    if not isinstance(value, dict) or _number(value.get("ratio")) is None:
        return "–"
    p = _number(value.get("p_value"))
    return f"×{value['ratio']:.3g}" + (f", p={p:.2g}" if p is not None else "")


def newest_result(
    results: Sequence[StoredResult], release: str, sizes: dict[str, int], profile: str
) -> StoredResult | None:
    found = [
        r
        for r in results
        if r.release == release
        and r.sizes == sizes
        and r.profile == profile
        and r.status is RunStatus.OK
    ]
    return max(found, key=lambda r: r.created_at) if found else None


def _with_stored_figures(
    change: Change,
    results: Sequence[StoredResult],
    case: str,
    sizes: dict[str, int],
    profile: str,
    rule: Thresholds,
) -> Change:
    """The figures of the stored results of both releases; the metric that changed most when none is
    named."""
    mine = [r for r in results if r.case == case]
    before, after = (
        newest_result(mine, v, sizes, profile) for v in (change.last_good, change.first_bad)
    )
    if before is None or after is None:
        return change
    a, b = metric_samples(before), metric_samples(after)
    metric = change.metric
    if metric is None:
        changed = []
        for key in a.keys() & b.keys():
            comparison = compare_metric(a[key], b[key], rule, key)
            if comparison.verdict in MOVED and comparison.ratio > 0:
                # an issue reports what got worse, when anything did
                slower = comparison.verdict is Verdict.SLOWER
                changed.append((slower, abs(math.log(comparison.ratio)), key.name, key.kind, key))
        if not changed:
            return change
        metric = max(changed)[-1]
    if metric not in a or metric not in b:
        return replace(change, metric=metric)
    probes = [
        p
        if p.median_ns is not None
        else replace(p, median_ns=_figure(mine, p.release, sizes, profile, metric))
        for p in change.probes
    ]
    compared = compare_metric(a[metric], b[metric], rule, metric)
    p = format_p(compared.p_value)
    # Said as a maintainer reads it: what was timed, the test, and where a change begins; no harness
    # terms.
    ranks = "" if math.isnan(compared.rank_p) else " and Mann–Whitney's rank test on them"
    outcome = (
        MOVED_WORDS.get(compared.verdict) or format_margin(compared.margin) or "not told from noise"
    )
    significance = (
        f"×{compared.ratio:.3g} at p{'' if p.startswith('<') else '='}{p}, over "
        f"{compared.processes[0]} and {compared.processes[1]} separate Python processes (Welch's "
        f"t-test on the log of each process's median{ranks}): {outcome}, where a change means a "
        f"ratio beyond ×{rule.factor:g} at p < {rule.alpha:g}"
    )
    return replace(
        change,
        metric=metric,
        before_ns=a[metric].figure,
        after_ns=b[metric].figure,
        probes=probes,
        significance=significance,
        significant=compared.verdict in MOVED,
    )


def _figure(
    results: Sequence[StoredResult],
    release: str,
    sizes: dict[str, int],
    profile: str,
    metric: MetricKey,
) -> float | None:
    """A bisect by the claim stores no figure per probe: the stored result of that release gives
    it."""
    found = newest_result(results, release, sizes, profile)
    samples = metric_samples(found).get(metric) if found is not None else None
    return samples.figure if samples is not None else None


def with_script_figures(change: Change, medians: dict[str, dict[tuple[str, str], float]]) -> Change:
    """Fill what stored results did not give from the short script's output on each release (release
    → figures)."""
    before, after = medians.get(change.last_good, {}), medians.get(change.first_bad, {})
    metric = change.metric
    if metric is None:
        both = [k for k in before.keys() & after.keys() if before[k] > 0 and after[k] > 0]
        ratios = [(abs(math.log(after[k] / before[k])), k) for k in both]
        if not ratios:
            return change
        name, kind = max(ratios)[1]
        metric = MetricKey(name, kind.removesuffix("_ns"))
    key = (metric.name, f"{metric.kind}_ns")
    if change.before_ns is not None and change.after_ns is not None:
        return replace(change, metric=metric)
    return replace(change, metric=metric, before_ns=before.get(key), after_ns=after.get(key))


def title(change: Change | None, case_headline: str, platform_kind: str) -> str:
    """``two_scans wall ×8.1 slower since jax 0.4.33 (1.2 ms → 9.8 ms) on CPU``, or the case's
    headline.

    A change the stored runs of both releases do not tell from noise is titled as such.
    """
    where = PLATFORMS.get(platform_kind, platform_kind.upper())
    if change is None or change.metric is None or change.ratio is None:
        return f"{case_headline} (jax, {where})"
    assert change.before_ns is not None and change.after_ns is not None
    ratio, metric = change.ratio, change.metric
    figures = f"{metric.format(change.before_ns)} → {metric.format(change.after_ns)}"
    # A script's own number or phase by its full name (`json.reg_ms`); a case's program and kind as
    # before.
    named = (
        f"`{metric.metric_name}`"
        if metric.name in (JSON, PROCESS)
        else f"`{metric.name}` {metric.kind}"
    )
    # the stored runs of both releases do not tell it from noise: say so
    if change.significant is False:
        return (
            f"{named} {figures} from jax {change.last_good} to {change.first_bad}, within noise, "
            f"on {where}"
        )
    if metric.is_duration:
        how = f"×{ratio:.3g} slower" if ratio >= 1 else f"×{1 / ratio:.3g} faster"
    else:
        how = f"×{ratio:.3g} higher" if ratio >= 1 else f"×{1 / ratio:.3g} lower"
    return f"{named} {how} since jax {change.first_bad} ({figures}) on {where}"
