"""``python -m harness compare A [B]``: two result sets paired and compared metric by metric.

A and B are results folders (B defaults to A), narrowed with ``--a-release`` /
``--b-release``, ``--a-profile`` / ``--b-profile`` and ``--case``.  Runs pair up by
case and sizes, and by profile unless the two sides name different profiles on
purpose.  A pair on different backends, or on different device counts without
that purpose, is not compared: the output says what differs.  Something got worse
when a metric is significantly slower in B, or a run that was ok in A failed in B.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.analysis.groups import group_key, host_differences, latest_runs, release_key
from harness.analysis.metrics import MetricComparison, MetricKey, compare_runs, separate_invocations
from harness.analysis.significance import Thresholds, Verdict
from harness.errors import UsageError
from harness.store.results import StoredResult, load_results
from harness.store.schema import RunStatus
from harness.units import format_ratio, short_machine, sizes_text

BROKEN = (RunStatus.FAILED, RunStatus.TIMEOUT, RunStatus.CRASHED)


@dataclass(frozen=True)
class ResultSet:
    label: str  # "A" or "B"
    folder: Path
    release: str | None = None
    profile: str | None = None
    flags: str = ""  # what the side's profile label stands for (``flags``: its flags)

    def describe(self) -> str:
        narrowed = [
            f"jax {self.release}" if self.release else "",
            f"profile {self.profile}" if self.profile else "",
            f"flags {self.flags}" if self.flags else "",
        ]
        return " · ".join([str(self.folder), *filter(None, narrowed)])


@dataclass
class Pair:
    a: StoredResult
    b: StoredResult
    metrics: list[MetricComparison]
    only_a: list[MetricKey]
    only_b: list[MetricKey]
    notes: list[str] = field(default_factory=list)

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
    broken: list[str] = field(default_factory=list)  # ok in A, failed / timed out / crashed in B

    def verdicts(self) -> Counter[str]:
        return Counter(m.comparison.verdict for p in self.pairs for m in p.metrics)

    def worse(self) -> list[str]:
        slower = [
            f"{p.a.result.case} {sizes_text(p.a.result.sizes)}: {m.key.label()} "
            f"{format_ratio(m.comparison.ratio)}"
            for p in self.pairs
            for m in p.metrics
            if m.comparison.verdict == Verdict.SLOWER
        ]
        return slower + self.broken

    def summary(self) -> str:
        counts = self.verdicts()
        noisy = sum(m.comparison.noisy for p in self.pairs for m in p.metrics)
        parts = ", ".join(
            f"{counts[v]} {v}"
            for v in (Verdict.SLOWER, Verdict.FASTER, Verdict.UNCHANGED, Verdict.UNDECIDED)
        )
        return f"{len(self.pairs)} run pair(s) compared: {parts} ({noisy} noisy)."


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
    a_runs: Sequence[StoredResult], b_runs: Sequence[StoredResult], comparison: SetComparison
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
        elif a.result.status is not RunStatus.OK or b.result.status is not RunStatus.OK:
            if a.result.status is RunStatus.OK and b.result.status in BROKEN:
                comparison.broken.append(f"{where}: ok in A, {b.result.status} in B")
            else:
                comparison.not_compared.append(
                    f"{where}: {a.result.status} in A, {b.result.status} in B"
                )
        else:
            _compare_pair(a, b, where, cross_profile, comparison)


def _compare_pair(
    a: StoredResult, b: StoredResult, where: str, cross_profile: bool, comparison: SetComparison
) -> None:
    ka, kb = group_key(a), group_key(b)
    if ka.backend != kb.backend:
        comparison.not_compared.append(f"{where}: backend {ka.backend} in A, {kb.backend} in B")
        return
    if ka.device_count != kb.device_count and not cross_profile:
        comparison.not_compared.append(
            f"{where}: {ka.device_count} device(s) in A, {kb.device_count} in B under the same "
            "profile label"
        )
        return
    metrics, only_a, only_b = compare_runs(a, b, comparison.thresholds)
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
    notes += [f"only in A: {k.label()}" for k in only_a]
    notes += [f"only in B: {k.label()}" for k in only_b]
    notes += [
        f"{side}: {note}" for side, run in (("A", a), ("B", b)) for note in run.result.all_notes()
    ]
    comparison.pairs.append(Pair(a, b, metrics, only_a, only_b, notes))


def compare_sets(
    a: ResultSet, b: ResultSet, cases: Sequence[str], thresholds: Thresholds
) -> SetComparison:
    same_folder = a.folder.resolve() == b.folder.resolve()
    if same_folder and (a.release, a.profile) == (b.release, b.profile):
        raise UsageError(
            "A and B are the same results: tell them apart with --a-release/--b-release or "
            "--a-profile/--b-profile"
        )
    loaded = {}
    for side in (a, b):
        if not side.folder.is_dir():
            raise UsageError(f"results folder not found: {side.folder}")
        results, _ = load_results(side.folder)
        loaded[side.label] = select(results, side, cases)
        if not loaded[side.label]:
            raise UsageError(f"no results in {side.label}: {side.describe()}")
    comparison = SetComparison(a, b, thresholds)
    pair_up(loaded["A"], loaded["B"], comparison)
    if not comparison.pairs and not comparison.broken:
        reasons = "; ".join(comparison.not_compared[:3])
        raise UsageError(f"nothing in A and B is comparable: {reasons}")
    return comparison
