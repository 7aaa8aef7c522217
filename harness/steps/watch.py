"""A watch: two releases, each watched target's triage over them read as findings, the exit status,
and what is remembered between watches (docs/watch.md says each kind of finding and exit status).

A confirmed change is called one only where no process of either side was measured under load (work
that comes and goes can make one); what the statistics left open is undecided, never "no change".
A target settled on a pair is remembered under everything that would make a new watch measure
something else (``memory_key``); one left open is not, and the results it read are never read again
(``Memory.spent``), so the next watch measures it anew.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from harness.analysis.metrics import MetricKey, compare_metric, metric_samples
from harness.analysis.power import detectable_ratio, pooled_spreads
from harness.analysis.rank_test import smallest_p
from harness.analysis.significance import Comparison, Thresholds, Verdict
from harness.errors import UsageError
from harness.host.environment import holds_secret, redact
from harness.measure.benchmark_json import PREFIX as BENCH_PREFIX
from harness.measure.import_times import SAID as IMPORT_SAID
from harness.metric_names import Criterion, parse_metric_name
from harness.steps.confirm import ConfirmPairs
from harness.steps.probes import Probe
from harness.steps.triage import Confirmation, TriageOutcome, screening
from harness.store.bounds import string_problem
from harness.store.files import DocumentProblem, child, parse_document, read_bounded, replace_file
from harness.store.results import StoredResult
from harness.store.schema import RunStatus

REGRESSION, IMPROVEMENT = "regression", "improvement"
UNDER_LOAD, UNDECIDED = "under load", "undecided"
# broken: every process failed on the release where the baseline ran; not measured: a side could
# not be installed, or a suite's runner stopped some processes before their time-out.
BROKEN, NOT_MEASURED = "broken", "not measured"
# Every process of the baseline ran and failed, timed out or crashed: the watch watched nothing
# there, which fails it (a warning a weekly job ignores would measure nothing for ever).
MEASURED_NOTHING = "measured nothing"
# Skipped on both releases (a case that needs more devices than the profile has): nothing to watch
# there, not something left open.
NOT_APPLICABLE = "not applicable"
# The outcome of a whole target, worst first: what its findings add up to.
OUTCOMES = ("regression", "measured nothing", "undecided", "unchanged", "improved")
FAILING = {REGRESSION, BROKEN}
OPEN = {UNDER_LOAD, UNDECIDED, NOT_MEASURED}
# 2: a metric the first round left undecided is no longer filed as unchanged (issue 66).
MEMORY_VERSION = 2
MAX_SPENT = 2000  # results an open watch read, kept per target and key
# What a memory file that is not one raises as it is read (it is then measured again).
UNREADABLE = (OSError, DocumentProblem, ValueError, KeyError, TypeError, AttributeError)


@dataclass(frozen=True)
class Finding:
    """One thing a watch found on one target, in a line, with the metric it is about."""

    kind: str  # one of FINDING_KINDS
    criterion: Criterion | None  # None: about the whole target
    text: str
    ratio: float | None = None  # the release's figure over the baseline's, where a metric moved

    @property
    def metric(self) -> str:
        """As the memory and watch.json name it: the criterion's name, "" for the whole target."""
        return self.criterion.name if self.criterion is not None else ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "metric": self.metric, "text": self.text, "ratio": self.ratio}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Finding:
        criterion = Criterion.named(str(data["metric"])) if data["metric"] else None
        return cls(str(data["kind"]), criterion, str(data["text"]), _number(data.get("ratio")))


@dataclass(frozen=True)
class SideLoad:
    """How many of a release's processes (first round and confirmation) ran under load."""

    release: str
    loaded: int
    processes: int


@dataclass(frozen=True)
class TargetWatch:
    """What a watch says of one target."""

    target: str  # the case's name, ``script-<stem>`` for a script
    kind: str  # "case", "script" or "pytest-benchmark"
    findings: tuple[Finding, ...]
    loads: tuple[SideLoad, ...] = ()
    detectable: Mapping[MetricKey, float] = field(default_factory=dict)  # smallest ratio seen
    page: str = ""  # its triage page, in the output folder
    why: tuple[str, ...] = ()  # why a confirmed change happened, as triage asked
    # the ``nox -s issue`` posargs that draft an issue for its first regression
    issue: tuple[str, ...] = ()
    # release → library → version
    libraries: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    remembered: str = ""  # when it was watched, if reported from memory
    # A suite's benchmarks: each one's median round on the baseline and on the release, in ns.
    medians: Mapping[MetricKey, tuple[float, float]] = field(default_factory=dict)
    # A suite's: what a process cost and a verdict needs, said after its first process of each side
    # (``harness.steps.suite_floor.Floor``: its figures, and "said", its line).
    floor: Mapping[str, Any] = field(default_factory=dict)

    @property
    def judged(self) -> dict[MetricKey, float]:
        """The smallest change seen of the metrics a maintainer reads the target by: a suite's
        benchmarks (not the pytest process around them), every metric of a script or case."""
        if self.kind != "pytest-benchmark":
            return dict(self.detectable)
        return {k: r for k, r in self.detectable.items() if k.metric_name.startswith(BENCH_PREFIX)}

    @property
    def outcome(self) -> str:
        if (kinds := {finding.kind for finding in self.findings}) & FAILING:
            return "regression"
        if MEASURED_NOTHING in kinds:
            return "measured nothing"
        if kinds & OPEN:
            return "undecided"
        return "improved" if IMPROVEMENT in kinds else "unchanged"

    @property
    def settled(self) -> bool:
        """Whether a later watch of the same pair would only say the same: nothing left open."""
        return self.outcome not in ("undecided", "measured nothing")

    @property
    def smallest_change(self) -> float | None:
        """The median over its metrics of the smallest change it could see; None with no spread."""
        finite = [ratio for ratio in self.judged.values() if math.isfinite(ratio)]
        return statistics.median(finite) if finite else None

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "kind": self.kind,
            "outcome": self.outcome,
            "findings": [finding.to_json() for finding in self.findings],
            "loads": [dataclasses.asdict(load) for load in self.loads],
            "smallest_change": self.smallest_change,
            "detectable": {
                key.metric_name: (ratio if math.isfinite(ratio) else None)
                for key, ratio in self.detectable.items()
            },
            "page": self.page,
            "why": list(self.why),
            "issue": list(self.issue),
            "libraries": {release: dict(found) for release, found in self.libraries.items()},
            "remembered": self.remembered or None,
            "medians": {key.metric_name: list(pair) for key, pair in self.medians.items()},
            "floor": dict(self.floor) or None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TargetWatch:
        """As ``to_json`` wrote it; UsageError, ValueError, KeyError, TypeError if not."""
        findings = tuple(map(Finding.from_json, data["findings"]))
        loads = tuple(
            SideLoad(str(load["release"]), int(load["loaded"]), int(load["processes"]))
            for load in data["loads"]
        )
        detectable = {
            parse_metric_name(str(name)): math.inf if ratio is None else float(ratio)
            for name, ratio in dict(data["detectable"]).items()
        }
        libraries = {
            str(release): {str(k): str(v) for k, v in dict(found).items()}
            for release, found in dict(data["libraries"]).items()
        }
        medians = {
            parse_metric_name(str(name)): (float(pair[0]), float(pair[1]))
            for name, pair in dict(data.get("medians") or {}).items()
        }
        target, kind, page = str(data["target"]), str(data["kind"]), str(data["page"])
        why, issue = tuple(map(str, data["why"])), tuple(map(str, data["issue"]))
        when = str(data.get("remembered") or "")
        said = (target, kind, findings, loads, detectable, page, why, issue, libraries, when)
        return cls(*said, medians, dict(data.get("floor") or {}))


def _number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"not a number: {value!r}")
    return float(value)


def loaded_processes(stored: StoredResult | None, *, every: bool = False) -> tuple[int, int]:
    """(processes measured under load, processes) of a stored result: those that finished ok, whose
    figures a comparison reads, or ``every`` process that ran (one that timed out under load was
    measured under load too)."""
    if stored is None:
        return 0, 0
    ran = stored.result.processes if every else stored.result.finished()
    return sum(bool(p.load and p.load.loaded) for p in ran), len(ran)


def _under_load(confirmation: Confirmation, first: Mapping[str, Probe]) -> list[str]:
    """The releases of a confirmed step that had a process under load, in either measurement."""
    loaded: dict[str, int] = {}
    for probe in (confirmation.before, confirmation.after):
        earlier = first[probe.release].result if probe.release in first else None
        loaded[probe.release] = loaded_processes(probe.result)[0] + loaded_processes(earlier)[0]
    return [f"{release} ({count} processes)" for release, count in loaded.items() if count]


def _not_run(probe: Probe) -> str:
    if probe.result is None:
        return probe.note
    status, detail = probe.result.result.status, probe.result.result.detail.strip().splitlines()
    last = detail[-1][:300] if detail else ""
    if status is RunStatus.NOT_INSTALLABLE:  # its detail says so, with the resolver's reason
        return last
    return f"{status}" + (f": {last}" if last else "")


def _cut_short(probe: Probe | None) -> list[tuple[int, int]]:
    """(ran, planned) benchmarks of each process its suite's runner stopped before the time-out."""
    if probe is None or probe.result is None:
        return []
    cuts = [(process.script or {}).get("cut_short") for process in probe.result.result.finished()]
    return [
        (cut["ran"], cut["planned"])
        for cut in cuts
        if isinstance(cut, dict) and all(type(cut.get(k)) is int for k in ("ran", "planned"))
    ]


def more_time(probes: Sequence[Probe | None]) -> str:
    """What the time-out cost the sides, and the ``--timeout`` giving more; "" if none hit it."""
    results = [p.result.result for p in probes if p is not None and p.result is not None]
    timed_out = sum(p.status is RunStatus.TIMEOUT for result in results for p in result.processes)
    cut_by_side = [(p.release, _cut_short(p)) for p in probes if p is not None]
    cut = [counts for _, each in cut_by_side for counts in each]
    limits = [result.settings.timeout_s for result in results]
    if not (timed_out or cut) or not limits:
        return ""
    # The time the selection needs, from where a cut-short run stopped; at least twice the limit.
    shares = [planned / max(1, ran) for ran, planned in cut]
    needed = max(limits) * max(2.0, 1.2 * max(shares, default=0.0))
    said = [f"{timed_out} process(es) timed out"] if timed_out else []
    if cut:
        sides = [f"{len(each)} of jax {release}" for release, each in cut_by_side if each]
        ran, planned = cut[0]
        said += [
            f"{' and '.join(sides)} stopped before it (stopped after {ran} of {planned} "
            "benchmarks, the benchmarks after not measured there)"
        ]
    return (
        f"at the time-out of {max(limits):g} s a process, {' and '.join(said)}: give each process "
        f"more time with --timeout {60 * math.ceil(needed / 60)}"
    )


def _probes(found: TriageOutcome) -> dict[str, Probe]:
    return {m.release: m for m in found.first_round.measurements}


def called_changes(found: TriageOutcome) -> list[Confirmation]:
    """The confirmed steps a watch calls changes: with no process under load in either round."""
    return [c for c in found.changes() if not _under_load(c, _probes(found))]


def findings(
    found: TriageOutcome,
    answered: Sequence[tuple[str, Confirmation]] = (),
    again: Mapping[MetricKey, Comparison] = MappingProxyType({}),
    beyond: Mapping[MetricKey, str] = MappingProxyType({}),
) -> list[Finding]:
    """Its sides that did not run, then each confirmed step (``answered``: each change with its
    triage answer's sentence), each undecided (``beyond``: why one was not measured again)."""
    answers = {id(confirmation): text for text, confirmation in answered}
    first = found.first_round
    probes = _probes(found)
    said: list[Finding] = []
    baseline, release = first.releases[0], first.releases[-1]
    base, new = probes.get(baseline), probes.get(release)
    ran = {m.release for m in first.ok()}
    # A step confirmed where the release did not run ok is a status step (a metric's needs it to):
    # it says how it broke, with where it died, and a "fails on" finding would say it again.
    stepped = any(c.confirmed for c in found.confirmations)
    if base and new and baseline in ran and release not in ran and not stepped:
        status = new.result.result.status if new.result is not None else None
        failed = status in (RunStatus.FAILED, RunStatus.CRASHED, RunStatus.TIMEOUT)
        kind, what = (BROKEN, "fails") if failed else (NOT_MEASURED, "could not be measured")
        hint = more_time([new])
        text = f"{what} on jax {release} (ran on {baseline}): {_not_run(new)}"
        said.append(Finding(kind, None, text + (f"; {hint}" if hint else "")))
    elif baseline not in ran and base is not None:
        ends = {p.result.result.status if p is not None and p.result else None for p in (base, new)}
        if ends == {RunStatus.SKIPPED}:
            text = f"skipped on both releases: {_not_run(base)}"
            said.append(Finding(NOT_APPLICABLE, None, text))
        elif base.ends is not None:
            # how each side's processes ended (``timed out at 300 s in 5 of 5``), or why not
            ended = [(p, p.ends) for p in (base, new) if p is not None]
            sides = [f"jax {p.release}: {e.words() if e else _not_run(p)}" for p, e in ended]
            hint = more_time([base, new])
            text = "measured nothing: " + "; ".join(sides) + (f"; {hint}" if hint else "")
            said.append(Finding(MEASURED_NOTHING, None, text))
        else:
            text = f"could not be measured on jax {baseline}: {_not_run(base)}"
            said.append(Finding(NOT_MEASURED, None, text))
    # Both ran: a process that timed out, or a suite stopped before its time-out, is said with the
    # time that would let it finish (what finished is judged).
    if baseline in ran and release in ran and (hint := more_time([base, new])):
        said.append(Finding(NOT_MEASURED, None, f"not everything was measured: {hint}"))
    said += first_round_undecided(found, again, beyond)
    for confirmation in found.confirmations:
        step = confirmation.step
        if confirmation.confirmed:
            # Load slows a process; it neither makes processes die nor changes what they print.
            exact = confirmation.comparison is not None and not confirmation.comparison.shape.ratio
            loaded = [] if exact else _under_load(confirmation, probes)
            text = answers.get(id(confirmation), f"{step.criterion.name}: {step.said}")
            if loaded:
                text += f"; not called a change: measured under load on {', '.join(loaded)}"
            kind = UNDER_LOAD if loaded else REGRESSION if confirmation.regression else IMPROVEMENT
            said.append(Finding(kind, step.criterion, text, _ratio_of(confirmation.comparison)))
        else:
            said += _left_open(confirmation)
    return said


def _left_open(confirmation: Confirmation) -> list[Finding]:
    """A candidate measured again and not confirmed, where it stays open: undecided (or never
    measured again), or a new ending the first round saw (a crash in 1 of 5 processes) and the
    second did not, which together are undecided counts.  A new ending, or a number gone, in
    some processes is red until its counts say it is no change (``Comparison.leans_worse``)."""
    step, compared = confirmation.step, confirmation.comparison
    first = step.comparison if step.criterion.ending else None
    seen_once = not confirmation.undecided and first is not None and first.leans_worse
    # never measured again (a side not installable, the time cap spent): no change, nor none
    unmeasured = None in (confirmation.before.result, confirmation.after.result)
    if not (confirmation.undecided or seen_once or unmeasured):
        return []
    leans_worse = seen_once or (compared is not None and compared.leans_worse)
    said = f"{step.said} in the first round ({first.said}); " if seen_once and first else ""
    text = f"{step.criterion.name} {step.before} → {step.after}: {said}undecided"
    text += f" ({confirmation.reason})"
    kind = BROKEN if leans_worse else UNDECIDED
    return [Finding(kind, step.criterion, text, _ratio_of(compared))]


def first_round_open(found: TriageOutcome) -> list[MetricKey]:
    """The metrics the first round left undecided that no candidate step measures again."""
    first = found.first_round
    stepped = {step.criterion.metric for step in first.steps}
    release = first.releases[-1]
    return [
        key
        for key in first.metrics
        if key not in stepped
        and (comparison := first.comparisons.get((key, release))) is not None
        and comparison.verdict == Verdict.UNDECIDED
    ]


def measured_again(
    confirm_pairs: ConfirmPairs,
    found: TriageOutcome,
    keys: Sequence[MetricKey],
    thresholds: Thresholds,
) -> tuple[dict[MetricKey, Comparison], set[str]]:
    """Each metric of ``keys`` on the two releases measured again together, until decided, as a
    candidate step's are; and the results read."""
    pair = (found.first_round.releases[0], found.first_round.releases[-1])
    before, after = confirm_pairs({pair: tuple(Criterion.of(key) for key in keys)})[pair]
    read = {probe.result.result.id for probe in (before, after) if probe.result is not None}
    return compared_on(before, after, keys, thresholds), read


def compared_on(
    before: Probe, after: Probe, keys: Sequence[MetricKey], thresholds: Thresholds
) -> dict[MetricKey, Comparison]:
    """Each of ``keys`` compared on two releases measured together; none where either side did
    not run, or neither ran ok."""
    ran = [probe.result for probe in (before, after) if probe.result is not None]
    if len(ran) < 2 or RunStatus.OK not in (stored.result.status for stored in ran):
        return {}
    a, b = (metric_samples(stored) for stored in ran)
    both = [key for key in keys if key in a and key in b]
    return {key: compare_metric(a[key], b[key], thresholds, key) for key in both}


def decided_in_confirmations(
    found: TriageOutcome, keys: Sequence[MetricKey], thresholds: Thresholds
) -> dict[MetricKey, Comparison]:
    """Each of ``keys`` a confirmation of the watched pair decided on its own: its processes timed
    every metric, not only its step's (a suite's process runs every benchmark), so what they
    decide is not measured again."""
    pair = (found.first_round.releases[0], found.first_round.releases[-1])
    for confirmation in found.confirmations:
        if (confirmation.before.release, confirmation.after.release) == pair:
            compared = compared_on(confirmation.before, confirmation.after, keys, thresholds)
            return {k: c for k, c in compared.items() if c.verdict != Verdict.UNDECIDED}
    return {}


def results_read(found: TriageOutcome) -> set[str]:
    """The stored results a triage read: its first round's and its confirmations'."""
    return {probe.result.result.id for probe in _every_probe(found) if probe.result is not None}


def _every_probe(found: TriageOutcome) -> list[Probe]:
    again = [p for c in found.confirmations for p in (c.before, c.after)]
    return [*found.first_round.measurements, *again]


def first_round_undecided(
    found: TriageOutcome,
    again: Mapping[MetricKey, Comparison] = MappingProxyType({}),
    beyond: Mapping[MetricKey, str] = MappingProxyType({}),
) -> list[Finding]:
    """A finding per metric the first round left undecided (``first_round_open``) that measuring
    again (``again``) did not show unchanged: "no change found" would claim the unshown
    (``beyond``: why one was not measured again)."""
    first = found.first_round
    baseline, release = first.releases[0], first.releases[-1]
    said = []
    for key in first_round_open(found):
        comparison = first.comparisons[(key, release)]
        if (later := again.get(key)) is not None and later.verdict == Verdict.UNCHANGED:
            continue
        how = "not measured again" + (f": {beyond[key]}" if key in beyond else "")
        if later is not None:
            at = min(later.processes)
            how = f"{later.said} when measured again at {at} processes a side, not confirmed"
        text = (
            f"{key.metric_name} {baseline} → {release}: {comparison.ratio_cell or 'n/a'}, "
            f"{comparison.said or 'no test'} at {min(comparison.processes)} processes a side "
            f"in the first round; {how}: undecided (the next watch measures it again)"
        )
        said.append(Finding(UNDECIDED, Criterion.of(key), text, _ratio_of(later or comparison)))
    return said


def _ratio_of(comparison: Comparison | None) -> float | None:
    """A finding's ratio: a cost's; None for a value, a presence or an ending, which have none (a
    NaN would be refused when the memory is recalled, and the finding measured and drafted
    again)."""
    ratio = comparison.cost.ratio if comparison is not None and comparison.cost else None
    return None if _ratio_problem(ratio) else ratio


def benchmark_medians(found: TriageOutcome) -> dict[MetricKey, tuple[float, float]]:
    """Each benchmark the first round compared: its median round on the baseline and the release."""
    release = found.first_round.releases[-1]
    return {
        key: (comparison.baseline.median, comparison.candidate.median)
        for (key, after), comparison in found.first_round.comparisons.items()
        if after == release and key.metric_name.startswith(BENCH_PREFIX)
    }


def side_loads(found: TriageOutcome) -> list[SideLoad]:
    """Per release, its processes under load over the first round and each confirmation it had."""
    counts = {release: (0, 0) for release in found.first_round.releases}
    # each stored result once, however many probes read it
    read = {id(p.result): p for p in _every_probe(found) if p.result is not None}
    for probe in read.values():
        loaded, total = loaded_processes(probe.result, every=True)
        was = counts.get(probe.release, (0, 0))
        counts[probe.release] = (was[0] + loaded, was[1] + total)
    return [SideLoad(release, loaded, total) for release, (loaded, total) in counts.items()]


def first_round_spreads(found: TriageOutcome) -> dict[MetricKey, float]:
    """Per metric, the spread of log process medians within each release of the first round,
    pooled: the process, not the round, is the unit (rounds in one process are not independent)."""
    ok = [m.result for m in found.first_round.ok() if m.result is not None]
    return pooled_spreads(metric_samples(result) for result in ok) if len(ok) >= 2 else {}


def detectable(
    found: TriageOutcome, thresholds: Thresholds, processes: int, most: int
) -> dict[MetricKey, float]:
    """Per metric of the first round, the smallest change this watch would have flagged reliably at
    the spread its processes showed: it must pass the screen (``processes`` a side, the screen's
    level, no rank guard) and the confirmation (up to ``most`` a side, the strict level)."""
    spreads = first_round_spreads(found)
    levels = ((processes, screening(thresholds)), (most, thresholds))
    return {key: max(detectable_ratio(s, *level) for level in levels) for key, s in spreads.items()}


def blind(detected: Mapping[MetricKey, float], most: int, thresholds: Thresholds) -> Finding | None:
    """A finding where no change of any size could have been seen (every metric's ratio infinite):
    too few processes a side for the rank guard at the level: "nothing found" would be untested."""
    if not detected or any(math.isfinite(ratio) for ratio in detected.values()):
        return None
    enough = next(k for k in range(2, 200) if smallest_p(k, k) < thresholds.alpha)
    text = (
        f"no change of any size could have been confirmed: at most {most} processes a side cannot "
        f"pass the rank test at level {thresholds.alpha:g}; give --max-processes {enough} or more"
    )
    return Finding(UNDECIDED, None, text)


def exit_status(watched: Sequence[TargetWatch]) -> int:
    """1 when any target regressed (broke, measured nothing), else 3 if any stayed open, else 0."""
    if (outcomes := {target.outcome for target in watched}) & {"regression", "measured nothing"}:
        return 1
    return 3 if "undecided" in outcomes else 0


def first_regression(watched: TargetWatch) -> Finding | None:
    """The regression an issue draft would be about: the first of a metric (not the claim's)."""
    for f in watched.findings:
        if f.kind == REGRESSION and f.criterion is not None and f.criterion.figures is not None:
            return f
    return None


TARGET_KINDS = ("case", "script", "pytest-benchmark")
FINDING_KINDS = frozenset({*FAILING, *OPEN, IMPROVEMENT, NOT_APPLICABLE, MEASURED_NOTHING})
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}")  # docs/watch.schema.json's names
# A page in the output folder, by its name.
PAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,200}\.md")
WATCHED_AT = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC")


def _ratio_problem(ratio: float | None) -> bool:
    return ratio is not None and not (math.isfinite(ratio) and ratio > 0)


def _figure_or_none(value: Any) -> bool:
    if value is None:
        return True
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return number and math.isfinite(value) and value >= 0


def recalled_problem(watched: TargetWatch, target: str, when: str) -> str | None:
    """What makes a memory file's watch one no watch wrote (its fields reach watch.md, stdout and
    watch.json, which must pass docs/watch.schema.json), or None."""
    strings = [f.text for f in watched.findings] + [f.metric for f in watched.findings]
    strings += [*watched.why, *watched.issue]
    strings += [v for found in watched.libraries.values() for pair in found.items() for v in pair]
    said, imports = watched.floor.get("said", ""), watched.floor.get("imports", {})
    strings += [said] if isinstance(said, str) else []
    figures = [v for k, v in watched.floor.items() if k not in ("said", "imports")]
    imported = isinstance(imports, dict) and all(
        NAME.fullmatch(str(release))
        and isinstance(lines, list)
        and all(isinstance(line, str) and IMPORT_SAID.fullmatch(line) for line in lines)
        for release, lines in imports.items()
    )
    checks = {
        "its target": watched.target == target and bool(NAME.fullmatch(target)),
        "its kind": watched.kind in TARGET_KINDS,
        "a finding's kind": all(f.kind in FINDING_KINDS for f in watched.findings),
        "a ratio": not any(_ratio_problem(f.ratio) for f in watched.findings)
        and not any(_ratio_problem(r) for r in watched.detectable.values() if r != math.inf),
        "a median": all(
            NAME.fullmatch(key.metric_name) and not any(_ratio_problem(v) for v in pair)
            for key, pair in watched.medians.items()
        ),
        "a load": all(
            NAME.fullmatch(load.release) and 0 <= load.loaded <= load.processes
            for load in watched.loads
        ),
        "its floor": isinstance(said, str) and imported and all(map(_figure_or_none, figures)),
        "its page": not watched.page or bool(PAGE.fullmatch(watched.page)),
        "its time": bool(WATCHED_AT.fullmatch(when)),
        "its releases": all(NAME.fullmatch(release) for release in watched.libraries),
        "a string": not any(string_problem(text) for text in strings),
    }
    return next((what for what, holds in checks.items() if not holds), None)


def memory_key(material: Mapping[str, Any]) -> str:
    """The digest a remembered watch is filed under (``material`` as canonical JSON)."""
    canonical = json.dumps({"memory": MEMORY_VERSION, **material}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class Memory:
    """The targets already watched, one file each under ``folder``: ``<target>-<key>.json``."""

    folder: Path

    def _file(self, target: str, key: str, ending: str = ".json") -> Path:
        # Never followed: a link planted at the file is not read, and is replaced when it is filed.
        return child(self.folder, f"{target}-{key[:32]}{ending}")

    def _read(self, target: str, key: str, ending: str = ".json") -> Any:
        read = read_bounded(self._file(target, key, ending), limit=4 * 2**20, follow_links=False)
        return parse_document(read)

    def recall(self, target: str, key: str) -> TargetWatch | None:
        """The watch filed under ``key``, or None: none, or a file that is not one (remeasured)."""
        try:
            if (data := self._read(target, key)).get("key") != key:
                return None
            watched = TargetWatch.from_json(data["watch"])
            when = data.get("watched_at")
        except (UsageError, *UNREADABLE):
            return None
        if not isinstance(when, str) or recalled_problem(watched, target, when):
            return None  # a file tampered with is no memory: measured again
        named = [f.metric for f in watched.findings] + [k.metric_name for k in watched.detectable]
        if any(map(holds_secret, named)):  # a metric named like a token, which none is
            return None
        findings = tuple(dataclasses.replace(f, text=redact(f.text)) for f in watched.findings)
        why = tuple(map(redact, watched.why))  # as a watch writes them: a token edited in redacted
        return dataclasses.replace(watched, findings=findings, why=why, remembered=when)

    def spent(self, target: str, key: str) -> frozenset[str]:
        """The stored results a watch of this key read and left open: never read again, so the next
        watch measures what stayed undecided anew."""
        try:
            data = self._read(target, key, ".open.json")
            ids = data["results"] if data.get("key") == key else []
        except UNREADABLE:
            return frozenset()
        ids = ids if isinstance(ids, list) else []
        return frozenset(i for i in ids[:MAX_SPENT] if isinstance(i, str))

    def remember_open(self, target: str, key: str, read: set[str]) -> None:
        """File the results a watch left open read, beside those earlier open watches read."""
        ids = sorted(self.spent(target, key) | read)[-MAX_SPENT:]
        self._write(target, key, {"key": key, "results": ids}, ".open.json")

    def remember(
        self, key: str, material: Mapping[str, Any], watched: TargetWatch, when: str
    ) -> None:
        """File a settled watch under ``key``, with what the key is made of (for a reader)."""
        filed = {"key": key, "material": material, "watched_at": when}
        self._write(watched.target, key, {**filed, "watch": watched.to_json()})

    def _write(self, target: str, key: str, document: Any, ending: str = ".json") -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        replace_file(self._file(target, key, ending), json.dumps(document, indent=1) + "\n")
