"""``python -m harness compare A [B]``: two result sets paired and compared metric by metric.

A and B are results folders (B defaults to A), narrowed with ``--a-release`` / ``--b-release``,
``--a-profile`` / ``--b-profile`` and ``--case``.  Runs pair up by case and sizes, and by profile
unless the two sides name different profiles on purpose.  A pair on different backends, or on
different device counts without that purpose, is not compared: the output says what differs.  Each
pair is judged through the one comparison of every shape: a cost's ratio, a value by equality,
whether a number was printed (a metric only in A is one printed in none of B's processes) and how
the processes ended (their counts of processes that died).  Something got worse when B is the worse
side of any of them (``Comparison.worse``): slower, a value changed, a number gone, more processes
dying.

Each side's newest result of a cell is taken; a result file that could not be read is said, and a
pair whose cell holds one says which result it compared instead.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.analysis.groups import group_key, host_differences, latest_runs, release_key
from harness.analysis.metrics import (
    MetricComparison,
    MetricKey,
    compare_metric,
    compare_runs,
    metric_samples,
)
from harness.analysis.shapes import separate_invocations
from harness.analysis.significance import Comparison, Thresholds, Verdict
from harness.analysis.statuses import compare_endings, measured, ran, summarise
from harness.errors import UsageError
from harness.store.results import LoadProblem, StoredResult, load_results
from harness.units import short_machine, sizes_text


@dataclass(frozen=True)
class ResultSet:
    label: str  # "A" or "B"
    folder: Path
    release: str | None = None
    profile: str | None = None
    flags: str = ""  # what the side's profile label stands for (``flags``: its flags)

    def describe(self) -> str:
        given = (("jax", self.release), ("profile", self.profile), ("flags", self.flags))
        return " · ".join(
            [str(self.folder), *(f"{name} {value}" for name, value in given if value)]
        )


@dataclass
class Pair:
    a: StoredResult
    b: StoredResult
    metrics: list[MetricComparison]
    only_a: list[MetricKey]
    only_b: list[MetricKey]
    notes: list[str] = field(default_factory=list)
    ending: Comparison | None = None  # how the processes ended, where any died on either side

    def title(self) -> str:
        ka, kb = group_key(self.a), group_key(self.b)
        both = f"{ka.profile} (A) vs {kb.profile} (B)"
        profile = ka.profile if ka.profile == kb.profile else both
        da, db = devices_text(ka.device_count), devices_text(kb.device_count)
        devices = f"devices {da} (A) vs {db} (B) · " if da != db else f"devices {da} · "
        if ka.device_count is None and kb.device_count is None:  # a script that never ran JAX
            devices = ""
        a, b = self.a.result, self.b.result
        return (
            f"{a.case} · {sizes_text(a.sizes)} · profile {profile} · {ka.backend} "
            f"backend · {devices}A jax {a.release}, B jax {b.release}"
        )


def script_differences(a: StoredResult, b: StoredResult) -> list[str]:
    """Notes where A and B ran two versions of a plain script, or one with two command lines: then a
    change may be the script's own, not JAX's."""
    sa, sb = a.result.script, b.result.script
    if sa is None or sb is None:
        return []
    notes = []
    if sa.sha256 != sb.sha256:
        notes.append(
            f"two versions of {sa.file}: A ran sha256 {sa.sha256[:12]}, B sha256 {sb.sha256[:12]}; "
            "a change may be the script's own, not JAX's"
        )
    if sa.args != sb.args:
        shown = [" ".join(args) or "none" for args in (sa.args, sb.args)]
        notes.append(f"{sa.file} ran with other arguments: A {shown[0]}, B {shown[1]}")
    return notes


def devices_text(count: int | None) -> str:
    """A count of JAX devices; "no JAX devices" where no process imported JAX."""
    return "no JAX devices" if count is None else str(count)


@dataclass
class SetComparison:
    a: ResultSet
    b: ResultSet
    thresholds: Thresholds
    pairs: list[Pair] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)
    # more processes dying in B than in A (every one, or counts that decide it), metrics unread
    broken: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # result files that could not be read
    # pairs judged by how their processes ended alone (none of one side ran ok: no metric to read)
    endings_judged: int = 0

    def verdicts(self) -> Counter[str]:
        return Counter(m.comparison.verdict for p in self.pairs for m in p.metrics)

    def worse(self, *, short: bool = False) -> list[str]:
        """What got worse in B, a line each: a cost's ratio, any other shape in its words
        (``short``: a metric by its name, not its label)."""
        found = [
            f"{p.a.result.case} {sizes_text(p.a.result.sizes)}: {worse_words(key, c, short)}"
            for p in self.pairs
            for key, c in [*((m.key, m.comparison) for m in p.metrics), (None, p.ending)]
            if c is not None and c.worse
        ]
        return found + self.broken

    def summary(self) -> str:
        counts = self.verdicts()
        noisy = sum(m.comparison.noisy for p in self.pairs for m in p.metrics)
        shown = (
            Verdict.SLOWER,
            Verdict.FASTER,
            Verdict.CHANGED,
            Verdict.UNCHANGED,
            Verdict.UNDECIDED,
        )
        parts = ", ".join(
            f"{counts[v]} {v}" for v in shown if counts[v] or v is not Verdict.CHANGED
        )
        return f"{len(self.pairs)} run pair(s) compared: {parts} ({noisy} noisy)."


def worse_words(key: MetricKey | None, comparison: Comparison, short: bool = False) -> str:
    """``eager · wall (until ready) ×1.25``; a value, a presence or an ending in its own words."""
    name = "how its processes ended" if key is None else key.metric_name if short else key.label()
    if comparison.cost and not comparison.constant:
        return f"{name} {comparison.ratio_cell}"
    return f"{name} {comparison.said}"


def select(
    results: Sequence[StoredResult], side: ResultSet, cases: Sequence[str]
) -> list[StoredResult]:
    return [
        r
        for r, _ in latest_runs(results)
        if (side.release is None or r.result.release == side.release)
        and (side.profile is None or r.result.profile == side.profile)
        and (not cases or r.result.case in cases)
    ]


def unread_beside(taken: StoredResult, label: str, problems: Sequence[LoadProblem]) -> list[str]:
    """A note for each result file in the folder of the one taken that could not be read: it may be
    the cell's newest, so the comparison says which one it took instead."""
    return [
        f"{label}: {problem.path.name} beside it could not be read ({problem.reason}); this "
        f"compares {taken.path.name}, which may be an older result of the cell"
        for problem in problems
        if problem.path.parent == taken.path.parent
    ]


PairKey = tuple[str, str, str]  # case, sizes as JSON, profile ("" when profiles differ on purpose)


def _index(
    runs: Sequence[StoredResult], side: ResultSet, by_profile: bool
) -> dict[PairKey, StoredResult]:
    found: dict[PairKey, list[StoredResult]] = {}
    for run in runs:
        r = run.result
        key = (r.case, json.dumps(r.sizes, sort_keys=True), r.profile if by_profile else "")
        found.setdefault(key, []).append(run)
    for key, several in found.items():
        releases = sorted({r.result.release for r in several}, key=release_key)
        cell = f"{key[0]} {sizes_text(several[0].result.sizes)}"
        if len(releases) > 1:
            raise UsageError(
                f"{side.label} holds {cell} for several releases "
                f"({', '.join(releases)}): choose one with --{side.label.lower()}-release"
            )
        if len(several) > 1:
            machines = ", ".join(sorted(short_machine(r.result.machine) for r in several))
            raise UsageError(
                f"{side.label} holds {cell} of jax {releases[0]} "
                f"from several machines ({machines}): give it one machine's results (timings of "
                "two machines are not one sample)"
            )
    return {key: runs[0] for key, runs in found.items()}


def pair_up(
    a_runs: Sequence[StoredResult],
    b_runs: Sequence[StoredResult],
    comparison: SetComparison,
    problems: Sequence[Sequence[LoadProblem]] = ((), ()),
) -> None:
    profiles = (comparison.a.profile, comparison.b.profile)
    cross_profile = profiles[0] != profiles[1] and None not in profiles
    a_index = _index(a_runs, comparison.a, by_profile=not cross_profile)
    b_index = _index(b_runs, comparison.b, by_profile=not cross_profile)
    for key in [*a_index, *(k for k in b_index if k not in a_index)]:
        a, b = a_index.get(key), b_index.get(key)
        case, sizes, profile = key
        where = f"{case} {sizes_text(json.loads(sizes))}" + (f" ({profile})" if profile else "")
        if a is None or b is None:
            comparison.not_compared.append(f"{where}: only in {'B' if a is None else 'A'}")
            continue
        unread = unread_beside(a, "A", problems[0]) + unread_beside(b, "B", problems[1])
        if not (ran(a) and ran(b)):
            said = f"{where}: {_status(a)} in A, {_status(b)} in B"
            comparison.not_compared.append("; ".join([said, *unread]))
            continue
        was, now = summarise(a), summarise(b)
        ending = compare_endings(was, now, comparison.thresholds)
        faults = [f"{side}: {s.fault()}" for side, s in (("A", was), ("B", now)) if s.fault()]
        ends = f"{where}: A {was.words()}; B {now.words()}"
        if faults:  # a fault of the machine: neither a change nor "no change"
            comparison.not_compared.append("; ".join([ends, *faults, *unread]))
        elif not (measured(a) and measured(b)):
            listed = comparison.broken if ending.worse else comparison.not_compared
            listed.append("; ".join([f"{ends} ({ending.said})", *unread]))
            comparison.endings_judged += 1
        else:
            died = was.ok < was.processes or now.ok < now.processes
            pair = _compare_pair(a, b, where, cross_profile, comparison)
            if pair is not None:
                pair.ending = ending if died else None
                pair.notes[:0] = unread


def _status(stored: StoredResult) -> str:
    """A result's status, and that no process ran where none did."""
    status = stored.result.status
    return f"{status} (no process ran)" if not stored.result.processes else str(status)


def _compare_pair(
    a: StoredResult, b: StoredResult, where: str, cross_profile: bool, comparison: SetComparison
) -> Pair | None:
    ka, kb = group_key(a), group_key(b)
    if ka.backend != kb.backend:
        comparison.not_compared.append(f"{where}: backend {ka.backend} in A, {kb.backend} in B")
        return None
    if ka.device_count != kb.device_count and not cross_profile:
        comparison.not_compared.append(
            f"{where}: {ka.device_count} device(s) in A, {kb.device_count} in B under the same "
            "profile label"
        )
        return None
    metrics, only_a, only_b = compare_runs(a, b, comparison.thresholds)
    # A metric one side printed in none of its processes: a presence, judged on its counts.
    in_a, in_b = metric_samples(a), metric_samples(b)
    metrics += [
        MetricComparison(
            key, compare_metric(in_a.of(key), in_b.of(key), comparison.thresholds, key)
        )
        for key in (*only_a, *only_b)
    ]
    notes = [
        f"measured on different machines: {text}" for text in host_differences([("A", a), ("B", b)])
    ]
    if separate_invocations(a.result, b.result):
        notes.append(
            f"measured in separate runs: the test allows their levels a spread of "
            f"{comparison.thresholds.invocation_spread:.1%}, and a side measured under load gives "
            "no verdict; measure both in one run (`--sides`) for finer verdicts"
        )
    notes += script_differences(a, b)
    notes += [
        f"{side}: {note}" for side, run in (("A", a), ("B", b)) for note in run.result.all_notes()
    ]
    pair = Pair(a, b, metrics, only_a, only_b, notes)
    comparison.pairs.append(pair)
    return pair


def compare_sets(
    a: ResultSet, b: ResultSet, cases: Sequence[str], thresholds: Thresholds
) -> SetComparison:
    same_folder = a.folder.resolve() == b.folder.resolve()
    if same_folder and (a.release, a.profile) == (b.release, b.profile):
        raise UsageError(
            "A and B are the same results: tell them apart with --a-release/--b-release or "
            "--a-profile/--b-profile"
        )
    loaded, problems = {}, {}
    for side in (a, b):
        if not side.folder.is_dir():
            raise UsageError(f"results folder not found: {side.folder}")
        results, problems[side.label] = load_results(side.folder)
        loaded[side.label] = select(results, side, cases)
        if not loaded[side.label]:
            raise UsageError(f"no results in {side.label}: {side.describe()}")
    comparison = SetComparison(a, b, thresholds)
    # one folder read twice: each file said once
    said = [
        str(p) if same_folder else f"{label}: {p}" for label in problems for p in problems[label]
    ]
    comparison.left_out = list(dict.fromkeys(said))
    pair_up(loaded["A"], loaded["B"], comparison, (problems["A"], problems["B"]))
    if not comparison.pairs and not comparison.endings_judged:
        reasons = "; ".join(comparison.not_compared[:3])
        raise UsageError(f"nothing in A and B is comparable: {reasons}")
    return comparison
