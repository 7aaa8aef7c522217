"""Measure one case at fixed sizes on one jax release, or reuse what the results folder holds.

A probe first looks for a stored result of the cell (case, release, profile, sizes);
only when there is none does it install the release into its cached venv and measure
it there, a side whose worker runs in that venv (``harness.measure.runner.measure``,
as ``run`` measures: same case process, same measurement lock, the result stored as
any run's).  A release that cannot be installed has no result: the search skips it.

Each measurement runs in ``processes`` case processes (``--processes``), since the
statistics and the claim are settled over processes: a stored result measured in fewer
(one from before several processes per cell, say) is measured anew, not reused.  A
second look runs twice the processes, which is what gives the statistics more to go
on (more samples within each process would not).
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.analysis.sequential import open_comparison
from harness.analysis.spending import CHANGES
from harness.catalogue.discovery import CaseInfo
from harness.catalogue.sizes import DEFAULT_SEED, Budget
from harness.errors import HarnessError
from harness.host.environment import machine_identity
from harness.install.environments import Environments
from harness.install.venvs import ReleaseEnv
from harness.measure import runner
from harness.measure.cells import PlannedRun
from harness.measure.sides import Side
from harness.measure.storing import same_script
from harness.steps.ready import Probe, Readiness
from harness.store.results import StoredResult, newest_result
from harness.store.schema import Settings
from harness.units import time_left

# The measurement a prober runs (``harness.measure.runner.measure``), as a test may stand in for it.
Measure = Callable[..., list[runner.Measured]]

Pair = tuple[str, str]  # the two releases around a step, older first


# (release, again) → the release's result; ``again``: measure anew, with more samples.
ProbeRelease = Callable[[str, bool], Probe]


@dataclass
class ReleaseProber:
    """Results of one case at one set of sizes under one profile, release by release."""

    envs: dict[str, ReleaseEnv]
    case: CaseInfo  # or a plain script in its place (``--script``)
    sizes: dict[str, int]
    profile: str
    results_dir: Path
    # How each case process samples, and ``processes`` of them per measurement: the statistics' unit.
    settings: Settings
    progress: Callable[[str], None] = field(
        default=lambda line: print(line, file=sys.stderr, flush=True)
    )
    # Only results measured here are reused: timings from another machine do not compare.
    machine: str = field(default_factory=lambda: machine_identity()["id"])
    together: set[str] = field(default_factory=set)  # releases measured in one interleaved run
    # Which stored results this prober counts at all (None: every one); see ``first_round``.
    accept: Callable[[StoredResult], bool] | None = None
    # Releases measured together get looks of ``processes`` rounds while a comparison of neighbours is open
    # (measured until decided), up to ``max_processes`` each and within ``time_budget`` seconds a measurement.
    max_processes: int | None = None  # None: ``processes`` only
    time_budget: float | None = None
    decide_metrics: tuple[str, ...] = ()  # the metrics judged (empty: every metric)
    measure: Measure = runner.measure  # the measurement itself; a test hands in a fake
    # Each release's environment: a case's release venv, a script's venv of its own (None: made from ``case``).
    environments: Environments | None = None
    readiness: Readiness = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.environments is None:
            self.environments = Environments(self.case, None, progress=self.progress)
        self.readiness = Readiness(
            self.environments,
            self.envs,
            self.profile,
            self.results_dir,
            self.settings,
            self._plan,
            self.stored,
        )

    @property
    def processes(self) -> int:
        return self.settings.processes

    def counts(self, release: str, stored: StoredResult) -> bool:
        """Whether a stored result counts at all: of this script's content and arguments (a run into the same
        folder may have stored another's meanwhile), measured in an environment like ``release``'s now, one this
        prober accepts, and not one that spent a smaller budget than this prober's on staying undecided."""
        assert self.environments is not None
        return (
            same_script(stored, self.case)
            and self.environments.matches(release, stored.result.libraries)
            and (self.accept is None or self.accept(stored))
            and not spent_a_smaller_budget(stored, self.max_processes)
        )

    def stored(self, release: str) -> StoredResult | None:
        return newest_result(
            self.results_dir,
            self.case.name,
            release,
            self.profile,
            self.sizes,
            self.machine,
            lambda stored: self.counts(release, stored),
        )

    def reusable(self, release: str) -> StoredResult | None:
        """The stored result of the cell on ``release``, if enough processes measured it."""
        previous = self.stored(release)
        return (
            previous
            if previous is not None and len(previous.result.processes) >= self.processes
            else None
        )

    def measure_together(
        self,
        releases: Sequence[str],
        *,
        anew: bool = False,
        decide: str = CHANGES,
        pairs: Mapping[Pair, tuple[str, ...]] | None = None,
    ) -> None:
        """Measure in one run every release of ``releases`` without a reusable result (``anew``: every one):
        one side each, their case processes alternating in rounds, so that load and drift fall on all of
        them alike.  Measuring until decided compares each release with the next, or, given ``pairs``,
        only the neighbours that make one of them, on that pair's metrics (a pair without any, whose
        claim alone flipped, gets no looks: the claim is settled over the planned processes).

        The probes then find the results stored; a release that cannot be installed is left to its
        probe, which says why.
        """
        wanted = [release for release in releases if anew or self.reusable(release) is None]
        self.together.update(self._interleaved(wanted, self.processes, decide, pairs))

    def measure_with_endpoints(
        self, release: str, good: str, bad: str, again: bool = False
    ) -> tuple[Probe, ...]:
        """``release`` measured anew in one interleaved run with both endpoints, also anew, so that it is
        judged against figures taken under the same load: (good, release, bad).

        A reusable stored result of ``release`` is reused (a bisect resumed), with the endpoints'
        newest; ``again`` measures all three in twice the processes.
        """
        if not again and self.reusable(release) is not None:
            return self(good), self(release), self(bad)
        processes = 2 * self.processes if again else self.processes
        started = time.monotonic()
        measured = self._interleaved([good, release, bad], processes, endpoints=True)
        if release not in measured:
            return self(good), self(release, again), self(bad)
        seconds = time.monotonic() - started
        probes = []
        for each in (good, release, bad):
            found = measured.get(each)
            if found is None:
                probes.append(Probe(each, None, "the interleaved run stored no result"))
            else:
                count = len(found.result.processes)
                note = f"measured ({count}) interleaved with both endpoints in {seconds:.0f} s (install included)"
                probes.append(Probe(each, found, note))
        return tuple(probes)

    def settings_for(
        self, processes: int, decide: str, sides: int, metrics: Sequence[str] = ()
    ) -> Settings:
        """The settings of one measurement of ``sides`` sides in ``processes`` processes each; with ``decide``
        (and sides to compare, and a most to go to), measured until decided: on ``metrics``, else on the
        prober's own."""
        deciding = decide != "off" and self.max_processes is not None and sides > 1
        return dataclasses.replace(
            self.settings,
            processes=processes,
            # With several processes the spread of cold compiles shows between them; one each is enough.
            compile_repeats=1 if processes >= 3 else Settings.compile_repeats,
            decide=decide if deciding else None,
            max_processes=max(processes, self.max_processes or 0) if deciding else None,
            decide_metrics=(tuple(metrics) or self.decide_metrics or None) if deciding else None,
            decide_budget_s=self.time_budget if deciding else None,
        )

    def prepared(self, release: str) -> Side | Probe:
        """A side for ``release``, its environment ready; else a probe that says why there is none."""
        return self.readiness.side(release)

    def _installed(self, releases: Sequence[str]) -> list[Side]:
        """A side for each release of ``releases`` whose environment could be made ready, in order."""
        sides, started = [], time.monotonic()
        for number, release in enumerate(releases, start=1):
            pace = time_left(number - 1, len(releases) - number + 1, time.monotonic() - started)
            self.progress(f"  ({number}/{len(releases)}) {release}:{' ' + pace if pace else ''}")
            prepared = self.prepared(release)
            if isinstance(prepared, Side):
                sides.append(prepared)
            else:
                self.progress(f"    {prepared.note}")
        return sides

    def _plan(self, settings: Settings) -> list[PlannedRun]:
        points = self.case.plan(
            settings.effort, self.sizes, seed=DEFAULT_SEED, budget=Budget.for_this_machine()
        )
        return [PlannedRun(self.case, point) for point in points]

    def _measured(self, sides: list[Side], settings: Settings) -> dict[str, StoredResult | None]:
        """One measurement of the case on ``sides``: each side's stored result, by release (None: it stored
        none).  A measurement the harness cannot carry out (a worker that does not start) says why."""
        return {side.release: stored for side, stored in self.measured_sides(sides, settings)}

    def measured_sides(
        self, sides: list[Side], settings: Settings, results_dir: Path | None = None
    ) -> list[tuple[Side, StoredResult | None]]:
        """One measurement of ``sides`` (stored under ``results_dir``, by default the prober's): each side
        with its stored result."""
        try:
            outcomes = self.measure(
                self._plan(settings),
                sides,
                settings,
                results_dir or self.results_dir,
                progress=self.progress,
                undecided=open_comparison,
            )
        except HarnessError as exc:
            self.progress(f"  not measured: {exc}")
            return [(side, None) for side in sides]
        return [(outcome.side, outcome.stored) for outcome in outcomes]

    def _interleaved(
        self,
        releases: Sequence[str],
        processes: int,
        decide: str = CHANGES,
        pairs: Mapping[Pair, tuple[str, ...]] | None = None,
        endpoints: bool = False,
    ) -> dict[str, StoredResult | None]:
        """One measurement of ``releases`` as sides, ``processes`` each (then until decided: ``decide``,
        each side against the next, or only within ``pairs``); what it stored, by release measured (none
        unless at least two releases could be installed).  ``endpoints``: the first and last releases are a
        bisect's endpoints, compared with each other as well, so that neither stops before their own
        comparison is decided (a resumed bisect judges them by this run's results)."""
        sides = self._installed(releases)
        if len(sides) < 2:
            return {}
        if endpoints and len(sides) > 2:
            sides = [*sides[:-1], dataclasses.replace(sides[-1], compare_with=sides[0].label)]
        if (
            pairs is not None
        ):  # a gap between two steps is no step: its looks would measure for nothing
            compared = [
                self._compared(side, following, pairs)
                for side, following in itertools.pairwise(sides)
            ]
            sides = [*compared, sides[-1]]
        settings = self.settings_for(processes, decide, len(sides))
        until = (
            f", then until decided (at most {settings.max_processes})" if settings.decide else ""
        )
        self.progress(
            f"  {len(sides)} releases measured together, {processes} processes each{until}, interleaved"
        )
        return self._measured(sides, settings)

    @staticmethod
    def _compared(side: Side, following: Side, pairs: Mapping[Pair, tuple[str, ...]]) -> Side:
        """``side`` compared with ``following`` on the metrics its step moved, if the two make a step."""
        moved = pairs.get((side.release, following.release), ())
        return dataclasses.replace(side, compare_next=bool(moved), compare_metrics=tuple(moved))

    def __call__(self, release: str, again: bool = False) -> Probe:
        previous = self.stored(release)
        if not again and self.reusable(release) is not None and previous is not None:
            if release in self.together:
                count = len(previous.result.processes)
                return Probe(
                    release, previous, f"measured ({count}) interleaved with the other releases"
                )
            return Probe(release, previous, f"stored result reused ({previous.path.name})")
        started = time.monotonic()
        prepared = self.prepared(release)
        if isinstance(prepared, Probe):
            return prepared
        # Measuring again doubles the processes (so the samples), so that a second look can settle
        # what the first could not.  A stored result too few processes measured is replaced.
        processes = 2 * self.processes if again else self.processes
        found = self._measured([prepared], self.settings_for(processes, "off", 1)).get(release)
        seconds = time.monotonic() - started
        if found is None:
            return Probe(release, None, "the measurement stored no result")
        how = "measured again in twice the processes" if again else "measured"
        return Probe(release, found, f"{how} ({processes}) in {seconds:.0f} s (install included)")


def first_round(processes: int) -> Callable[[StoredResult], bool]:
    """The results a triage's first round counts: measured with the planned processes only (not until
    decided; older confirmations: in fewer than twice ``processes``), so that on a resume a confirmation
    never stands in for the first look."""
    return lambda stored: (
        len(stored.result.processes) < 2 * processes and stored.result.settings.decide is None
    )


def spent_a_smaller_budget(stored: StoredResult, max_processes: int | None) -> bool:
    """Whether ``stored`` was measured until decided, used every process its ``--max-processes`` allowed (so it
    may have stopped undecided) and that was fewer than ``max_processes`` allow now: the advice to raise
    ``--max-processes`` measures it again, with the larger budget, instead of reading the same verdict back."""
    settings = stored.result.settings
    if max_processes is None or settings.decide is None:
        return False
    most = settings.most_processes
    return len(stored.result.processes) >= most and most < max_processes


def is_confirmation(stored: StoredResult, processes: int) -> bool:
    """Whether a stored result is a triage's confirmation (measured until decided; older ones: in twice the
    processes of the first round), not a first round's."""
    return (
        stored.result.settings.decide is not None or len(stored.result.processes) >= 2 * processes
    )
