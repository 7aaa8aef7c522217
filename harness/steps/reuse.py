"""Which stored results of a cell a prober counts, and which it reuses instead of measuring.

A stored result counts only when it was measured on this machine (timings from another do not
compare), of the script's content and arguments, in an environment like the release's now, and not
in a smaller budget of looks than the prober's where it spent all of it; it is reused only when
enough processes measured it, since the statistics and the claim are settled over
processes.  Another run into the same folder may store one between a prober's own look and its
measurement's turn at the folder lock, so the look is taken again there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.catalogue.discovery import CaseInfo
from harness.install.environments import Environments
from harness.measure.cells import PlannedRun
from harness.measure.runner import Reuse
from harness.measure.sides import Side
from harness.measure.storing import same_script
from harness.store.results import StoredResult, newest_result

Accept = Callable[[StoredResult], bool]


@dataclass(frozen=True)
class ReusePolicy:
    """The stored results of one case, sizes and profile that a prober counts and reuses."""

    results_dir: Path
    case: CaseInfo  # or a plain script in its place
    sizes: dict[str, int]
    profile: str
    machine: str  # only results measured here count
    environments: Environments
    processes: int  # the fewest processes a reused result was measured in
    # which stored results count at all (None: every one); see ``first_round``
    accept: Accept | None = None
    max_processes: int | None = None  # the most processes a measurement until decided may take now

    def counts(self, release: str, stored: StoredResult) -> bool:
        """Whether a stored result counts at all (a run into the same folder may have stored another
        script's meanwhile)."""
        return (
            same_script(stored, self.case)
            and self.environments.matches(release, stored.result.libraries)
            and (self.accept is None or self.accept(stored))
            and not spent_a_smaller_budget(stored, self.max_processes)
        )

    def stored(self, release: str, also: Accept | None = None) -> StoredResult | None:
        """The newest stored result of the cell on ``release`` that counts (and is ``also`` one)."""
        cell = (self.results_dir, self.case.name, release, self.profile, self.sizes, self.machine)
        return newest_result(
            *cell, lambda stored: self.counts(release, stored) and (also is None or also(stored))
        )

    def reusable(self, release: str) -> StoredResult | None:
        """The stored result of the cell on ``release``, if enough processes measured it."""
        previous = self.stored(release)
        if previous is not None and len(previous.result.processes) >= self.processes:
            return previous
        return None

    def under_lock(self, reused: set[str]) -> Reuse:
        """What ``measure`` asks under the folder lock: a release's reusable result (``reused``)."""

        def found(item: PlannedRun, side: Side) -> StoredResult | None:
            if (stored := self.reusable(side.release)) is not None:
                reused.add(side.release)
            return stored

        return found


def first_round(processes: int) -> Accept:
    """The results a triage's first round counts: no confirmation, so that on a resume none stands
    in for the first look."""
    return lambda stored: not is_confirmation(stored, processes)


def spent_a_smaller_budget(stored: StoredResult, max_processes: int | None) -> bool:
    """Whether ``stored`` was measured until decided, used every process its ``--max-processes``
    allowed (so it may have stopped undecided) and that was fewer than ``max_processes`` allow now:
    the advice to raise ``--max-processes`` measures it again, with the larger budget, instead of
    reading the same verdict back."""
    settings = stored.result.settings
    if max_processes is None or settings.decide is None:
        return False
    most = settings.most_processes
    return len(stored.result.processes) >= most and most < max_processes


def is_confirmation(stored: StoredResult, processes: int) -> bool:
    """Whether a stored result is a triage's confirmation (measured until decided; older ones: in
    twice the processes of the first round), not a first round's."""
    decided = stored.result.settings.decide is not None
    return decided or len(stored.result.processes) >= 2 * processes
