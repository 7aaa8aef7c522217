"""The step an issue draft is about, one model for every shape (``Change``; an ending's dead side
``Dead``), so that the page formats what was judged here and judges nothing.  Pure.

The step comes from a stored bisect or triage answer (``read_steps``), from ``--good``/``--bad``
and their stored results (every metric compared once, by its shape's rule), or, last, from the
short script's output.  An answer is input: read bounded, its names kept only where plain.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness.analysis.metrics import compare_metric, metric_samples
from harness.analysis.significance import MOVED, Comparison, Shape, Thresholds, Verdict
from harness.analysis.statuses import compare_endings, ran, summarise
from harness.errors import UsageError
from harness.findings import Finding, finding_from
from harness.metric_names import JSON, PROCESS, Judged, MetricKey, names_ending, parse_metric_name
from harness.store.files import DocumentProblem, parse_document, read_bounded
from harness.store.results import StoredResult
from harness.store.schema import ProcessEnd, RunStatus
from harness.units import version_key

# A bisect answer is a few kB of JSON; a larger one is none, and whole could exhaust memory.
MAX_ANSWER_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class BisectAnswer:
    """One stored answer: its file name and JSON (None when it could not be read)."""

    name: str
    data: Any
    problem: str = ""


def read_bisect_answers(reports_dir: Path, case: str) -> list[BisectAnswer]:
    return _read_answers(reports_dir, "bisect", case)  # one per range


def read_steps(reports_dir: Path, case: str) -> list[BisectAnswer]:
    """Every stored step of ``case`` a draft can be about: bisect answers, and triages' steps."""
    triaged = _read_answers(reports_dir, "triage", case)  # ``triage-CASE-*.json``
    return [*read_bisect_answers(reports_dir, case), *(s for t in triaged for s in triage_steps(t))]


def triage_steps(answer: BisectAnswer) -> list[BisectAnswer]:
    """A triage answer's confirmed steps, each as its bisect answer would say it, the lead first."""
    data = answer.data
    first = data.get("first_round") if isinstance(data, dict) else None
    if not isinstance(first, dict):
        return []
    shared = {k: first.get(k) for k in ("case", "sizes", "profile", "thresholds")}
    shared |= {k: data.get(k) for k in ("compiled", "reproducer", "crash", "created_at")}
    steps = []
    for each in data.get("confirmations") or []:
        if not isinstance(each, dict) or each.get("outcome") != "confirmed":
            continue
        metric = each.get("metric")
        if Judged.named(str(metric)) is Judged.CLAIM:
            continue  # the claim's: nothing to draft
        # an ending's criterion is its name (``process.end``, or ``status`` in an older answer)
        step = {"criterion": metric if names_ending(metric) else "metric", "metric": metric}
        step |= {"last_good": each.get("before"), "first_bad": each.get("after")}
        step |= {"findings": each.get("findings"), "measured_again": True}
        steps.append(BisectAnswer(answer.name, shared | step))
    return steps


def _read_answers(reports_dir: Path, command: str, case: str) -> list[BisectAnswer]:
    """``COMMAND-CASE.json`` and ``COMMAND-CASE-*.json``: the one place that knows their names."""
    paths = [
        reports_dir / f"{command}-{case}.json",
        *sorted(reports_dir.glob(f"{command}-{case}-*.json")),
    ]
    found = []
    for path in paths:
        if not path.exists() and not path.is_symlink():
            continue
        try:
            # Bounded as results are: a FIFO, a link, a huge or deep file is named, never read.
            data = parse_document(read_bounded(path, limit=MAX_ANSWER_BYTES, follow_links=False))
            found.append(BisectAnswer(path.name, data))
        except (DocumentProblem, OSError) as exc:
            said = exc.strerror if isinstance(exc, OSError) else None
            found.append(BisectAnswer(path.name, None, said or str(exc)))
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
    """A reproducer with jax alone as a bisect answer names it."""

    folder: str  # ``<stem>-reproducer/``
    script: str  # ``repro_<digest>.py``
    exported_on: str
    lines: int
    measured: dict[MetricKey, tuple[str, float | None]]  # → (verdict, ratio) of its counterpart
    counterparts: dict[MetricKey, MetricKey]  # the reproducer's metric that shows each
    note: str = ""  # the capture's own: a cap reached, equinox's checks left out


REPRODUCER_SCRIPT = re.compile(r"^repro_[0-9a-f]{10}\.py$")


@dataclass(frozen=True)
class Change:
    metric: MetricKey | None  # None until a figure shows which (a bisect by the claim)
    last_good: str
    first_bad: str
    before_ns: float | None = None  # the metric's figure on the last good release
    after_ns: float | None = None
    source: str = ""  # where the releases come from, in words
    answer: str = ""  # the bisect's own one-line answer
    probes: list[ProbeRow] = field(default_factory=list)
    significant: bool | None = None  # the metric moved, by its rule; None: not compared
    below: str = ""  # a bisect over jax's commits: its answer, the commit or the jaxlib
    why: tuple[Finding, ...] = ()  # the bisect's findings (an older answer's sentences lead none)
    dumps: str = ""  # the folder, beside the bisect answer, holding XLA's dumps of both releases
    reproducer: Reproduced | None = None  # the reproducer with jax alone the bisect's why measured
    thresholds: Thresholds = field(default_factory=Thresholds)  # the answer's, else defaults
    # each metric of both releases' stored results, by its shape's rule; empty: not compared
    comparisons: Mapping[MetricKey, Comparison] = field(default_factory=dict)
    dead: Dead | None = None  # an ending's step: its dead side's facts, its counts judged
    workaround: str = ""  # an ending's: a setting that makes the dead side run, as a why found it

    @property
    def compared(self) -> Comparison | None:
        """The step's own comparison (an ending's counts, a metric's); None where not compared."""
        if self.dead is not None:
            return self.dead.compared
        return self.comparisons.get(self.metric) if self.metric is not None else None

    @property
    def shape(self) -> Shape:
        return self.compared.shape if self.compared is not None else Shape.COST

    def reproduced(self) -> bool:
        """Whether the reproducer moved as the change did on its metric: it can lead the draft."""
        found = self.reproducer
        if found is None or self.metric is None or self.ratio is None:
            return False
        verdict, ratio = found.measured.get(self.metric, ("", None))
        moved = verdict in (Verdict.SLOWER, Verdict.FASTER)
        return moved and ratio is not None and (ratio > 1) == (self.ratio > 1)

    @property
    def ratio(self) -> float | None:
        return self.after_ns / self.before_ns if self.before_ns and self.after_ns else None

    @property
    def ends(self) -> tuple[str, str]:
        return self.last_good, self.first_bad

    @property
    def moved(self) -> str:
        """``×1.33 slower`` (a duration), ``×2 lower``; "" without a ratio."""
        ratio, metric = self.ratio, self.metric
        if ratio is None or metric is None:
            return ""
        up, down = ("slower", "faster") if metric.is_duration else ("higher", "lower")
        return f"×{max(ratio, 1 / ratio):.3g} {up if ratio >= 1 else down}"


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
    ending: bool = False,
) -> Change | None:
    """The step to quote (``ending``'s or a metric's): ``good``/``bad``, else the newest stored."""
    usable = _about(answers, case, sizes, profile, status=ending)
    asked = [a for a in usable if metric is not None and a.data.get("metric") == metric.metric_name]
    usable = asked or usable  # a metric asked: the step of that metric where one is stored
    if good is not None and bad is not None:
        usable = [a for a in usable if answer_ends(a.data) == (good, bad)]
        change = _from_answer(usable[-1], metric) if usable else Change(metric, good, bad)
    elif usable:
        newest = max(usable, key=lambda a: str(a.data.get("created_at", "")))
        change = _from_answer(newest, metric)
    else:
        return None
    mine = [r for r in results if r.result.case == case]
    if ending:
        a, b = (newest_result(mine, v, sizes, profile, any_end=True) for v in change.ends)
        return replace(change, metric=None, dead=ending_between(a, b, change.thresholds))
    if change.metric is not None and change.before_ns is not None and change.after_ns is not None:
        return change
    return _with_stored_figures(change, mine, sizes, profile)


def answer_ends(data: Any) -> tuple[str, str] | None:
    """The releases before and after the change (a fix bisect's: last broken and first fixed)."""
    if not isinstance(data, dict):
        return None
    for before, after in (("last_good", "first_bad"), ("last_broken", "first_fixed")):
        if isinstance(data.get(before), str) and isinstance(data.get(after), str):
            return data[before], data[after]
    return None


def _about(
    answers: Sequence[BisectAnswer], case: str, sizes: dict[str, int], profile: str, *, status: bool
) -> list[BisectAnswer]:
    """The stored steps of this cell that name both ends: an ending's (``status``) or a metric's."""
    return [
        a
        for a in answers
        if isinstance(a.data, dict)
        and [a.data.get(k) for k in ("case", "sizes", "profile")] == [case, sizes, profile]
        and answer_ends(a.data) is not None
        and names_ending(a.data.get("criterion")) is status
    ]


def _from_answer(answer: BisectAnswer, metric: MetricKey | None) -> Change:
    data = answer.data
    named, ending = data.get("metric"), names_ending(data.get("criterion"))
    bisected = parse_metric_name(named) if isinstance(named, str) and not ending else None
    probes = []
    for probe in data.get("probes") or []:
        if isinstance(probe, dict) and isinstance(probe.get("release"), str):
            median, verdict = _number(probe.get("median_ns")), str(probe.get("verdict", "–"))
            vs_good, vs_bad = (_comparison_text(probe.get(k)) for k in ("vs_good", "vs_bad"))
            probes.append(ProbeRow(probe["release"], median, verdict, vs_good, vs_bad))
    probes.sort(key=lambda p: version_key(p.release))
    of_metric = bisected is not None and metric in (None, bisected)
    figures = {p.release: p.median_ns for p in probes} if of_metric else {}
    ends = answer_ends(data)
    assert ends is not None  # only answers ``_about`` keeps are read
    before, after = ends
    source, said = f"`{answer.name}`", " ".join(str(data.get("answer", "")).split())
    if ending and data.get("measured_again"):  # where the two releases come from, in words
        source = f"a triage of jax releases, its step measured again ({source})"
    elif ending:
        source = f"a bisect of jax releases by how the script's processes end ({source})"
    found = data.get("reproducer")
    if ending:  # only a reproducer whose run on both releases died where the script did
        found = [e for e in _of_step(found, ends) if _get(e, "status", "reproduces") is True]
    return Change(
        metric or bisected,
        before,
        after,
        figures.get(before),
        figures.get(after),
        source=source,
        answer=said,
        below=said if data.get("by") == "commits" else "",
        probes=probes,
        why=_findings(data),
        dumps=_dumps_folder(data.get("compiled"), (before, after)),
        reproducer=reproducer_named(found, ends),
        thresholds=_thresholds(data.get("thresholds")),
        workaround=workaround_of(data, ends) if ending else "",
    )


def _findings(data: dict[str, Any]) -> tuple[Finding, ...]:
    """The answer's findings as data (``findings``); an older answer's are sentences (``why``)."""
    stored = data.get("findings") if isinstance(data.get("findings"), list) else data.get("why")
    found = (finding_from(each) for each in (stored if isinstance(stored, list) else []))
    return tuple(each for each in found if each is not None)


def _thresholds(stored: Any) -> Thresholds:
    """The thresholds the answer's run judged by (``json_out.thresholds_json``), else defaults."""
    if not isinstance(stored, dict):
        return Thresholds()
    numbers: dict[str, Any] = {
        name: float(stored[name])
        for name in ("factor", "alpha", "confidence", "invocation_spread")
        if (_number(stored.get(name)) or 0) > 0 and not isinstance(stored.get(name), bool)
    }
    for declared in ("higher_is_better", "values", "costs"):
        names = stored.get(declared)
        if isinstance(names, list):
            numbers[declared] = tuple(name for name in names if isinstance(name, str))
    return replace(Thresholds(), **numbers)


def reproducer_named(found: Any, ends: tuple[str, str]) -> Reproduced | None:
    """The reproducer of the change's two releases the answer names, where its names are plain."""
    for entry in _of_step(found, ends):
        folder, script = entry.get("folder"), entry.get("script")
        if not (_plain(folder, "reproducer") and REPRODUCER_SCRIPT.match(str(script))):
            continue
        assert isinstance(folder, str) and isinstance(script, str)
        measured, counterparts = {}, {}
        for metric, said in (entry.get("measured") or {}).items():
            try:  # a name no metric has is no figure of the change's
                key, counterpart = parse_metric_name(metric), parse_metric_name(said["counterpart"])
            except (UsageError, TypeError, KeyError, AttributeError):
                continue
            verdict = said.get("verdict") if isinstance(said.get("verdict"), str) else ""
            measured[key] = (verdict, _number(said.get("ratio")))
            counterparts[key] = counterpart
        lines = entry["lines"] if isinstance(entry.get("lines"), int) else 0
        exported_on = str(entry.get("exported_on", ""))[:64]
        note = " ".join(str(entry.get("note", "")).split())[:300]
        return Reproduced(folder, script, exported_on, lines, measured, counterparts, note)
    return None


def _of_step(entries: Any, ends: tuple[str, str] | None) -> list[dict[str, Any]]:
    """An answer's entries (``compiled``, ``reproducer``, ``crash``) about the step ``ends``."""
    listed = entries if isinstance(entries, list) else []
    return [e for e in listed if isinstance(e, dict) and (e.get("before"), e.get("after")) == ends]


def _plain(folder: Any, suffix: str) -> bool:
    """A folder an answer names beside it: one plain name of the harness's shape, never a path."""
    named = isinstance(folder, str) and re.fullmatch(rf"[A-Za-z0-9][\w.+=-]*-{suffix}/", folder)
    return bool(named) and ".." not in folder


def _get(entry: dict[str, Any], key: str, inner: str) -> Any:
    return entry[key].get(inner) if isinstance(entry.get(key), dict) else None


def _dumps_folder(compiled: Any, ends: tuple[str, str]) -> str:
    """The folder of XLA's dumps of the change's two releases the answer names, if a plain name."""
    found = [e.get("folder") for e in _of_step(compiled, ends) if not e.get("problem")]
    return next((str(folder) for folder in found if _plain(folder, "compiled")), "")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def _comparison_text(value: Any) -> str:
    if not isinstance(value, dict) or _number(value.get("ratio")) is None:
        return "–"
    p = _number(value.get("p_value"))
    return f"×{value['ratio']:.3g}" + (f", p={p:.2g}" if p is not None else "")


def newest_result(
    results: Sequence[StoredResult],
    release: str,
    sizes: dict[str, int],
    profile: str,
    *,
    any_end: bool = False,
) -> StoredResult | None:
    """The newest stored result of the cell that ran ok (``any_end``: however it ended)."""
    found = [
        r
        for r in results
        if (r.result.release, r.result.sizes, r.result.profile) == (release, sizes, profile)
        and (ran(r) if any_end else r.result.status is RunStatus.OK)
    ]
    return max(found, key=lambda r: r.result.created_at) if found else None


def _with_stored_figures(
    change: Change, mine: Sequence[StoredResult], sizes: dict[str, int], profile: str
) -> Change:
    """Both releases' stored results' figures; the metric that changed most when none is named."""
    before, after = (newest_result(mine, v, sizes, profile) for v in change.ends)
    if before is None or after is None:
        return change
    a, b, rule = metric_samples(before), metric_samples(after), change.thresholds
    compared = {key: compare_metric(a.of(key), b.of(key), rule, key) for key in a.keys() | b.keys()}
    metric = change.metric
    if metric is None:
        changed = [key for key, c in compared.items() if c.verdict in MOVED]
        if not changed:
            return replace(change, comparisons=compared)
        metric = max(changed, key=lambda key: _how_much(compared[key], key))
    step = compared.get(metric)
    judged = replace(
        change,
        metric=metric,
        comparisons=compared,
        significant=step.verdict in MOVED if step is not None else None,
    )
    if metric not in a or metric not in b or not judged.shape.ratio:
        return judged
    # A bisect by the claim stores no figure per probe: that release's stored result gives it.
    stored = {p.release: newest_result(mine, p.release, sizes, profile) for p in change.probes}
    figures = {
        release: samples.figure
        for release, found in stored.items()
        if found is not None and (samples := metric_samples(found).get(metric)) is not None
    }
    probes = [
        replace(p, median_ns=figures.get(p.release)) if p.median_ns is None else p
        for p in change.probes
    ]
    return replace(judged, before_ns=a[metric].figure, after_ns=b[metric].figure, probes=probes)


def _how_much(compared: Comparison, key: MetricKey) -> tuple[bool, float, str, str]:
    """An issue reports what got worse, when anything did; a value changed or a number gone is
    exact, ahead of any ratio."""
    cost = compared.cost
    size = abs(math.log(cost.ratio)) if cost and cost.ratio > 0 else math.inf
    return compared.worse, size, key.name, key.kind


def with_script_figures(change: Change, medians: dict[str, dict[tuple[str, str], float]]) -> Change:
    """What stored results did not give, from the short script's output (release → figures)."""
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


def title(change: Change | None, case_headline: str, platform_kind: str, name: str = "") -> str:
    """``two_scans wall ×8.1 slower since jax 0.4.33 (1.2 ms → 9.8 ms) on CPU``, or the case's
    headline; an ending's ``repro.py crashes since jax 0.10.2 on CPU: SIGSEGV (exit 139)``."""
    where = platform_kind.upper()
    if change is not None and change.dead is not None:
        dead = change.dead
        since = f"since jax {dead.crashes}" if dead.regression else f"on jax {dead.crashes}"
        if dead.shares is not None:
            (k, n), (k_ok, n_ok) = dead.shares
            since += f" in {k} of {n} processes ({k_ok} of {n_ok} on {dead.runs})"
        again = "" if dead.regression else f", runs again since {dead.runs}"
        return f"{name} {dead.verb} {since} on {where}{again}: {dead.how}"
    metric = change.metric if change is not None else None
    shaped = change is not None and not change.shape.ratio and change.significant
    if change is None or metric is None or (change.ratio is None and not shaped):
        return f"{case_headline} (jax, {where})"
    # A script's number or phase by full name (`json.reg_ms`); a case's program and kind.
    named = (
        f"`{metric.metric_name}`"
        if metric.name in (JSON, PROCESS)
        else f"`{metric.name}` {metric.kind}"
    )
    if shaped:
        return f"{named} {shape_words(change)} since jax {change.first_bad} on {where}"
    assert change.before_ns is not None and change.after_ns is not None
    figures = f"{metric.format(change.before_ns)} → {metric.format(change.after_ns)}"
    if change.significant is False:  # the stored runs of both releases do not tell it from noise
        return (
            f"{named} {figures} from jax {change.last_good} to {change.first_bad}, within noise, "
            f"on {where}"
        )
    return f"{named} {change.moved} since jax {change.first_bad} ({figures}) on {where}"


MAX_WORKAROUND_CHARS = 300


@dataclass(frozen=True)
class Dead:
    """An ending's step, its dead side's facts: ``runs`` the release whose processes died fewer,
    ``crashes`` the other; their counts, judged; its first death; the machine it ran on."""

    runs: str
    crashes: str
    compared: Comparison  # the counts of processes that died, as every ending is judged
    ok_words: str  # "ok in 5 of 5 processes"
    dead_words: str  # "SIGSEGV (exit 139) in 5 of 5 processes"
    how: str  # "SIGSEGV (exit 139)": how the dead side's processes ended (its commonest)
    verb: str  # ``crashes``, ``hangs``, ``fails``, ``is killed``
    end: ProcessEnd | None  # its first dead process's end: last lines, stack
    cpu_model: str = ""
    platform: str = ""
    environment_info: str = ""  # ``jax.print_environment_info()`` as that release's process said

    @property
    def regression(self) -> bool:
        """Whether it stopped running ok (else it runs again since ``runs``)."""
        return version_key(self.crashes) > version_key(self.runs)

    @property
    def shares(self) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """(died, processes) on ``crashes`` then on ``runs``; None where each side ended alike."""
        counts = self.compared.counts
        if self.compared.sides is not None or counts is None:
            return None
        return (counts[1], counts[0]) if self.regression else counts


def ending_between(
    before: StoredResult | None, after: StoredResult | None, rule: Thresholds
) -> Dead | None:
    """The ending's step between two releases' stored results (``before`` the older), if any."""
    if before is None or after is None or not (ran(before) and ran(after)):
        return None
    was, now = summarise(before), summarise(after)
    compared = compare_endings(was, now, rule)
    if compared.verdict is not Verdict.CHANGED or was.outside or now.outside:
        return None
    ok, dead = (before, after) if compared.leans_worse else (after, before)
    summary = summarise(dead)
    host, jax = dead.result.host, dead.result.jax
    return Dead(
        runs=ok.result.release,
        crashes=dead.result.release,
        compared=compared,
        ok_words=summarise(ok).words(),
        dead_words=summary.words(),
        how=summary.alike or summary.commonest,
        verb=summary.verb,
        end=summary.first,
        cpu_model=(host.cpu_model or "") if host is not None else "",
        platform=(host.platform or "") if host is not None else "",
        environment_info=(jax.environment_info if jax is not None else "") or "",
    )


def workaround_of(data: Any, ends: tuple[str, str] | None = None) -> str:
    """The workaround a stored why found for the step ``ends``, in a line; "" if none."""
    if not isinstance(data, dict):
        return ""
    for entry in _of_step(data.get("crash"), ends):
        runs, setting = (_get(entry, "workaround", key) for key in ("runs", "setting"))
        if runs is not False and isinstance(setting, str) and setting.strip():
            return _bounded(setting)
    offered = list(data.get("next") or []) if isinstance(data.get("next"), list) else []
    for finding in data.get("findings") or [] if isinstance(data.get("findings"), list) else []:
        if isinstance(finding, dict) and isinstance(finding.get("follow_ups"), list):
            offered += finding["follow_ups"]
    for each in offered:
        # A setting to make, not a command line to run: a workaround's (``FollowUp.shell``).
        if (
            isinstance(each, dict)
            and each.get("shell") is False
            and isinstance(each.get("command"), str)
        ):
            return _bounded(each["command"])
    return ""


def _bounded(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_WORKAROUND_CHARS else line[: MAX_WORKAROUND_CHARS - 1] + "…"


def shape_words(change: Change) -> str:
    """A value's or a presence's step in a title's words: "no longer printed (in 0 of 5 …)"."""
    compared = change.compared
    assert compared is not None
    if compared.counts is None:  # a value: as ``Comparison.said`` says it
        return compared.said
    (k_a, n_a), (k_b, n_b) = compared.counts
    how = "no longer printed" if compared.worse else "printed again"
    return f"{how} (in {k_b} of {n_b} processes, was {k_a} of {n_a})"
