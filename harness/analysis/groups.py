"""Which results may stand side by side, and in what order.

Timings are comparable only when the same case ran at the same sizes under the same profile on the
same backend with the same number of devices, on the same machine: a *comparison group*.  Within a
group the columns are releases, oldest first; across groups the report says what differs instead of
comparing.  Compiled-structure facts are counted, not timed, so their groups
(``across_machines=True``) span machines.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from harness.errors import UsageError
from harness.store.results import Newest, StoredResult, cell_of, newest_runs
from harness.store.schema import RunStatus
from harness.units import VersionKey, short_machine, sizes_text, version_key


def release_key(release: str) -> tuple[VersionKey, str]:
    return version_key(release), release


def ordered_releases(results: Iterable[StoredResult]) -> list[str]:
    return sorted({r.result.release for r in results}, key=release_key)


def latest_runs(results: Iterable[StoredResult]) -> list[Newest]:
    """Each cell's newest result (``cell_of``), older ones counted, in report order."""

    def order(item: Newest) -> tuple[object, ...]:
        case, release, *rest = cell_of(item.result)
        return (case, release_key(release), *rest)

    return sorted(newest_runs(results, cell_of).values(), key=order)


ANY_MACHINE = ""  # the machine of a group that spans machines (compiled-structure facts)


@dataclass(frozen=True)
class GroupKey:
    case: str
    profile: str
    sizes: tuple[tuple[str, int], ...]
    backend: str
    device_count: int | None
    machine: str

    def describe(self) -> str:
        devices = "no JAX devices" if self.device_count is None else f"{self.device_count} device"
        plural = "s" if self.device_count not in (None, 1) else ""
        machine = "" if self.machine == ANY_MACHINE else f" · machine {short_machine(self.machine)}"
        return (
            f"profile {self.profile} · {sizes_text(dict(self.sizes))} · {self.backend} backend · "
            f"{devices}{plural}{machine}"
        )

    def raw_slug(self) -> str:
        """The key as text, e.g. ``cpu-N1000-cpu-1dev-3f2a1b9c``: a plain script's result, which ran
        no JAX device the harness counted, is ``nodev`` (never ``Nonedev``)."""
        sizes = "-".join(f"{k}{v}" for k, v in self.sizes) or "nosizes"
        devices = "no" if self.device_count is None else str(self.device_count)
        machine = short_machine(self.machine) or "any"
        return f"{self.profile}-{sizes}-{self.backend}-{devices}dev-{machine}"

    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9._-]", "_", self.raw_slug())

    def order(self) -> tuple[str, str, tuple[tuple[str, int], ...], str, int, str]:
        return (
            self.case,
            self.profile,
            self.sizes,
            self.backend,
            self.device_count or 0,
            self.machine,
        )


def group_key(result: StoredResult, *, with_machine: bool = True) -> GroupKey:
    r = result.result
    machine = r.machine if with_machine else ANY_MACHINE
    return GroupKey(
        r.case, r.profile, tuple(sorted(r.sizes.items())), r.backend, r.device_count, machine
    )


DIMENSIONS = (
    ("profile", lambda k: k.profile),
    ("sizes", lambda k: sizes_text(dict(k.sizes))),
    ("backend", lambda k: k.backend),
    ("device count", lambda k: str(k.device_count)),
    ("machine", lambda k: short_machine(k.machine)),
)


def differences(keys: Sequence[GroupKey]) -> list[str]:
    """What differs between groups, e.g. ``["profile (cpu, cpu8)", "device count (1, 8)"]``."""
    found = ((name, list(dict.fromkeys(value(k) for k in keys))) for name, value in DIMENSIONS)
    return [f"{name} ({', '.join(values)})" for name, values in found if len(values) > 1]


@dataclass
class ComparisonGroup:
    key: GroupKey
    runs: list[StoredResult] = field(default_factory=list)  # one per release, oldest release first

    @property
    def releases(self) -> list[str]:
        return [r.result.release for r in self.runs]

    def run(self, release: str) -> StoredResult:
        return next(r for r in self.runs if r.result.release == release)


def comparison_groups(
    latest: Iterable[Newest], *, across_machines: bool = False
) -> list[ComparisonGroup]:
    """The newest runs (``latest_runs``) that finished ok, one per release, grouped by what must be
    equal for a comparison. Timings need one machine per group.  ``across_machines`` groups without
    the machine, for facts that do not depend on its speed; a release measured on several machines
    is then represented by its newest run."""
    ok = [item.result for item in latest if item.result.result.status is RunStatus.OK]
    chosen = newest_runs(
        ok, lambda r: (group_key(r, with_machine=not across_machines), r.result.release)
    )
    by_group: dict[GroupKey, list[StoredResult]] = defaultdict(list)
    for (key, _), item in chosen.items():
        by_group[key].append(item.result)
    return [
        ComparisonGroup(key, sorted(by_group[key], key=lambda r: release_key(r.result.release)))
        for key in sorted(by_group, key=GroupKey.order)
    ]


def choose_baseline(releases: Sequence[str], requested: str | None) -> tuple[str, str]:
    """The baseline of a group's releases (every group has one at least) and why it was chosen."""
    if requested is None:
        return releases[0], "the oldest release present"
    if requested in releases:
        return requested, "chosen with --baseline"
    return releases[0], f"the oldest release present: {requested} (--baseline) has no result here"


def check_baseline(requested: str | None, results: Iterable[StoredResult]) -> None:
    present = ordered_releases(results)
    if requested is not None and requested not in present:
        raise UsageError(
            f"no result of release {requested} to use as baseline; releases present: "
            f"{', '.join(present)}"
        )


RunFact = tuple[str, Callable[[StoredResult], object]]
DEVICE_FACT: RunFact = ("devices", lambda r: ", ".join(r.result.device_kinds) or "?")
# What makes timings of two runs not like for like.
HOST_FACTS: tuple[RunFact, ...] = (
    ("machine", lambda r: short_machine(r.result.machine)),
    ("CPU", lambda r: r.result.host.cpu_model or "?"),
    ("usable cores", lambda r: "?" if (n := r.result.host.usable_cores) is None else n),
    DEVICE_FACT,
)


def host_differences(
    runs: Sequence[tuple[str, StoredResult]], facts: Sequence[RunFact] = HOST_FACTS
) -> list[str]:
    """Facts that differ between labelled runs (by default the machine's: not like for like)."""
    found = []
    for label, fact in facts:
        by_value: dict[str, list[str]] = defaultdict(list)
        for name, run in runs:
            by_value[str(fact(run))].append(name)
        if len(by_value) > 1:
            found.append(
                f"{label}: " + "; ".join(f"{v} ({', '.join(rs)})" for v, rs in by_value.items())
            )
    return found
