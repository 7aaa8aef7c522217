"""A triage's confirmation: the two releases around each candidate step measured again, together.

Both halves of a pair come from one interleaved run (a stored result confirms a pair only when it
was measured with the pair's other release), looked at until the steps' metrics are decided.  The
prober it is given is never changed: the looks' metrics go to a copy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from harness.measure.cells import PlannedRun
from harness.measure.runner import Reuse
from harness.measure.sides import Side
from harness.metric_names import Criterion
from harness.steps.probes import Pair, Probe, ReleaseProber
from harness.steps.reuse import is_confirmation
from harness.store.results import StoredResult

# Each pair with the metrics its steps moved (none: only the claim flipped) → each pair's two
# releases measured again, together, until those metrics are decided: the probes of (older, newer).
ConfirmPairs = Callable[[Mapping[Pair, tuple[Criterion, ...]]], dict[Pair, tuple[Probe, Probe]]]


@dataclass
class PairConfirmer:
    """Measures the two releases around each step again, interleaved, ``prober.processes`` each,
    then until the steps' metrics are decided (``prober.max_processes``), or reuses a confirmation
    stored before: enough processes interleaved with the pair's other (``interleaved_with``)."""

    prober: ReleaseProber

    def confirmation(self, release: str, partner: str) -> StoredResult | None:
        label = Side(partner, self.prober.profile, "").label
        processes = self.prober.processes
        return self.prober.reuse.stored(
            release,
            also=lambda r: is_confirmation(r, processes) and label in r.result.interleaved_with,
        )

    def stored_meanwhile(
        self, missing: Mapping[Pair, tuple[Criterion, ...]], reused: set[str]
    ) -> Reuse:
        """What the confirmation reuses, asked under the folder lock: every pair's two results,
        where another run into the folder (a triage or watch of the same pair) stored them while
        this one waited on the lock; all or none, since both halves of a pair come from one run."""

        def found(item: PlannedRun, side: Side) -> StoredResult | None:
            halves: dict[str, StoredResult] = {}
            for pair in missing:
                for release, partner in (pair, pair[::-1]):
                    if (result := self.confirmation(release, partner)) is None:
                        return None
                    halves.setdefault(release, result)
            reused.add(side.release)
            return halves.get(side.release)

        return found

    def __call__(
        self, pairs: Mapping[Pair, tuple[Criterion, ...]]
    ) -> dict[Pair, tuple[Probe, Probe]]:
        reused: set[str] = set()
        missing = {
            (a, b): moved
            for (a, b), moved in pairs.items()
            if self.confirmation(a, b) is None or self.confirmation(b, a) is None
        }
        if releases := list(dict.fromkeys(release for pair in missing for release in pair)):
            self.prober.progress(
                f"  confirming {len(missing)} pair(s) of releases: {len(releases)} releases "
                f"measured again together, {self.prober.processes} processes each, then until "
                f"decided (at most {self.prober.max_processes})"
            )
            judged = tuple(dict.fromkeys(c for moved in missing.values() for c in moved))
            deciding = dataclasses.replace(self.prober, decide_on=judged)
            taken = self.stored_meanwhile(missing, reused)
            deciding.measure_together(releases, anew=True, pairs=missing, taken=taken)

        def probe(release: str, partner: str, pair: Pair) -> Probe:
            if (result := self.confirmation(release, partner)) is None:
                return Probe(release, None, f"no result measured together with jax {partner}")
            how = "stored by another run meanwhile" if release in reused else "measured again"
            how = how if pair in missing else "stored"
            processes = len(result.result.processes)
            return Probe(release, result, f"{how} with jax {partner} ({processes} processes)")

        return {(a, b): (probe(a, b, (a, b)), probe(b, a, (a, b))) for a, b in pairs}
