"""Measure one case at fixed sizes on one jax release, or reuse what the results folder holds.

A probe first looks for a stored result of the cell (case, release, profile, sizes) that counts
(``harness.steps.reuse``); only when there is none does it make the release's environment ready
(``Readiness``) and measure it there (``SideMeasurement``), looking again under the results folder's
lock, where another run into the same folder may have stored it meanwhile.  A release whose
environment could not be tried (the index out of reach, a failed sync, a write refused) is answered
by a ``Probe`` without a result and nothing is stored; one that is not installable (the resolver
proved it cannot be had) is stored as such, once, so that a later run reads the answer back; the
search skips both.  Installs stand beside measuring, not between it (``Ahead``); each venv's own
lock keeps two preparations of one venv apart.

A measurement is ``harness.measure.runner.measure``: the same case process and measurement lock, the
result stored as any run's.  It runs ``processes`` case processes a side (``--processes``), since
the statistics and the claim are settled over processes: a stored result measured in fewer (one
from before several processes per cell, say) is measured anew, not reused.  Where sides are
compared and a most is given, looks follow until the comparison is decided.  A second look runs
twice the processes, which is what gives the statistics more to go on (more samples within each
process would not).  Several releases measured in one run take turns in rounds, so that load and
drift fall on all of them alike.  A prober is never changed by those it is handed to: one that
measures otherwise (other stored results accepted, other metrics decided) is a copy
(``dataclasses.replace``), which keeps its own record of what it measured together.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.analysis.power import open_comparison
from harness.analysis.spending import CHANGES
from harness.analysis.statuses import StatusSummary, ends_of
from harness.catalogue.discovery import CaseInfo
from harness.catalogue.sizes import DEFAULT_SEED, Budget
from harness.errors import HarnessError, WriteRefused
from harness.host.environment import host_facts, machine_identity
from harness.install.environments import Environments, Failed, Outcome, Prepared, Unavailable
from harness.install.venvs import ReleaseEnv
from harness.measure import runner
from harness.measure.cells import PlannedRun
from harness.measure.launch import venv_gone
from harness.measure.locks import ASIDE
from harness.measure.runner import Reuse
from harness.measure.sides import Side
from harness.measure.stopping import SettledCell
from harness.measure.storing import RunContext, not_installable_result, store
from harness.metric_names import Criterion, MetricKey
from harness.pins import HOST, device_class
from harness.steps.reuse import Accept, ReusePolicy
from harness.store.results import StoredResult
from harness.store.schema import (
    COUNT_CEILING,
    HostFacts,
    Libraries,
    RunStatus,
    Settings,
    read_record,
)
from harness.units import time_left


@dataclass(frozen=True)
class Probe:
    release: str
    result: StoredResult | None  # None: no result (the release could not be installed or run)
    note: str  # where the result came from, or why there is none

    @cached_property
    def ends(self) -> StatusSummary | None:
        """How its processes ended, summed once for every page that says it; None where none ran."""
        return ends_of(self.result)


# Installs at once in the background: each waits mostly on the network and the disk.
INSTALLS_AHEAD = 2


class Ahead:
    """Environments prepared in the background, in the order asked, ``INSTALLS_AHEAD`` at once,
    while others are measured.  Its workers are daemon threads: a command that ends leaves what was
    not started, and the installer a worker waits on is ended with the harness (``guarded``). On
    Linux they run at a lower CPU priority, as do their installers, so a measurement gets the CPU
    first."""

    def __init__(self, prepare: Callable[[str], Outcome]) -> None:
        self._prepare = prepare
        self._queue: queue.SimpleQueue[tuple[str, Future[Outcome]]] = queue.SimpleQueue()
        self._futures: dict[str, Future[Outcome]] = {}
        self._workers = 0
        self._lock = threading.Lock()

    def start(self, releases: Sequence[str]) -> None:
        """Prepare ``releases`` in the background, in order, after those asked before."""
        with self._lock:
            for release in releases:
                if release not in self._futures:
                    self._futures[release] = Future()
                    self._queue.put((release, self._futures[release]))
            for _ in range(self._workers, min(INSTALLS_AHEAD, len(self._futures))):
                threading.Thread(target=self._work, name="install-ahead", daemon=True).start()
                self._workers += 1

    def take(self, release: str) -> Outcome | None:
        """``release``'s environment prepared in the background, waited for; None if not asked."""
        with self._lock:
            future = self._futures.pop(release, None)
        if future is None:
            return None
        with ASIDE.span():  # an install this run waits for: none of its own measuring
            return future.result()

    def _work(self) -> None:
        if sys.platform == "linux":  # niceness is a thread's own there, and its children inherit it
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        while True:
            with self._lock:  # a worker with nothing left ends: none waits on for a later ask
                try:
                    release, future = self._queue.get_nowait()
                except queue.Empty:
                    self._workers -= 1
                    return
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(self._prepare(release))
                except BaseException as exc:  # raised where it is taken
                    future.set_exception(exc)


@dataclass(frozen=True)
class Readiness:
    """Each release's side, in the environment its case or script runs in."""

    environments: Environments
    envs: dict[str, ReleaseEnv]
    profile: str
    results_dir: Path
    settings: Settings
    plan: Callable[[Settings], list[PlannedRun]]  # the cells a measurement of these settings runs
    stored: Callable[[str], StoredResult | None]  # the newest stored result a prober counts
    ahead: Ahead = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        prepare = Ahead(lambda release: self.environments.prepare(release, self.envs[release]))
        object.__setattr__(self, "ahead", prepare)  # a frozen dataclass's own field, set once

    def side(self, release: str) -> Side | Probe:
        """A side for ``release``, its environment ready; else a probe that says why not."""
        if (prepared := self.ahead.take(release)) is None:
            prepared = self.environments.prepare(release, self.envs[release])
        if isinstance(prepared, Prepared):
            interpreter = str(prepared.interpreter)
            return Side(release, self.profile, interpreter, libraries=prepared.libraries)
        if isinstance(prepared, Failed):  # could not be tried: no answer, nothing stored
            return Probe(release, None, prepared.line)
        previous, said = self.stored(release), (RunStatus.NOT_INSTALLABLE, prepared.line)
        if previous is None or (previous.result.status, previous.result.detail) != said:
            previous = self._store_not_installable(release, prepared)
        return Probe(release, previous, prepared.line)

    def measured(
        self, side: Side, by_release: Callable[..., dict[str, StoredResult | None]], *how: Any
    ) -> StoredResult | None:
        """``side`` measured (``by_release([side], *how)``); where its venv vanished as it ran
        (``VenvGone``: a clean-up outside the harness), made anew and measured again, once."""
        was_there = not venv_gone(side)
        found = by_release([side], *how).get(side.release)
        if found is not None or not was_there or not venv_gone(side):
            return found
        again = self.side(side.release)
        return by_release([again], *how).get(side.release) if isinstance(again, Side) else None

    def sides(self, releases: Sequence[str], progress: Callable[[str], None]) -> list[Side]:
        """A side for each release whose environment could be made ready; the others said."""
        self.ahead.start(releases)
        sides, started = [], time.monotonic()
        for number, release in enumerate(releases, start=1):
            pace = time_left(number - 1, len(releases) - number + 1, time.monotonic() - started)
            progress(f"  ({number}/{len(releases)}) {release}:{' ' + pace if pace else ''}")
            if isinstance(prepared := self.side(release), Side):
                sides.append(prepared)
            else:
                progress(f"    {prepared.note}")
        return sides

    def _store_not_installable(self, release: str, unavailable: Unavailable) -> StoredResult:
        # What was asked of the release (its libraries, holding nothing): a later probe finds it.
        side = Side(release, self.profile, sys.executable, libraries=unavailable.libraries)
        budget = Budget.for_this_machine((), device_class(self.profile))
        context = RunContext(self.results_dir, self.settings, DEFAULT_SEED, budget, "")
        cell = self.plan(self.settings)[0]
        host = read_record(HostFacts, host_facts(), "host")
        result = not_installable_result(context, cell, side, unavailable.line, host)
        return store(self.results_dir, result)


# The measurement itself (``harness.measure.runner.measure``), as a test may stand in for it.
Measure = Callable[..., list[runner.Measured]]

Pair = tuple[str, str]  # the two releases around a step, older first


@dataclass(frozen=True)
class SideMeasurement:
    """Measures one case at one set of sizes on the sides given, and says what settles each one."""

    case: CaseInfo  # or a plain script in its place (``--script``)
    sizes: dict[str, int]
    results_dir: Path
    # How each case process samples, and ``processes`` of them a measurement: the statistics' unit.
    settings: Settings
    progress: Callable[[str], None]
    # Sides compared get looks while a comparison is open (until decided), up to ``max_processes``
    # each and ``time_budget`` seconds a measurement, on ``decide_on`` (empty: every metric).
    max_processes: int | None = None  # None: ``processes`` only
    time_budget: float | None = None
    decide_on: tuple[Criterion, ...] = ()
    measure: Measure = runner.measure
    device: str = HOST  # the device class of the sides' profile: its flops budget

    def settings_for(
        self, processes: int, decide: str, sides: int, metrics: Sequence[MetricKey] = ()
    ) -> Settings:
        """The settings of one measurement of ``sides`` sides in ``processes`` processes each; with
        ``decide`` (and sides to compare, and a most to go to), measured until decided: on
        ``metrics``, else on the measurement's own."""
        deciding = decide != "off" and self.max_processes is not None and sides > 1
        judged = tuple(Criterion.of(key) for key in metrics) or self.decide_on
        names = tuple(criterion.name for criterion in judged)  # as the settings store them
        return dataclasses.replace(
            self.settings,
            processes=processes,
            # With several processes the spread of cold compiles shows between them; one each does.
            compile_repeats=1 if processes >= 3 else Settings.compile_repeats,
            decide=decide if deciding else None,
            max_processes=max(processes, self.max_processes or 0) if deciding else None,
            decide_metrics=(names or None) if deciding else None,
            decide_budget_s=self.time_budget if deciding else None,
            max_count_processes=COUNT_CEILING if deciding else None,
        )

    def plan(self, settings: Settings) -> list[PlannedRun]:
        """The cells a measurement of ``settings`` runs."""
        budget = Budget.for_this_machine((), self.device)
        points = self.case.plan(settings.effort, self.sizes, seed=DEFAULT_SEED, budget=budget)
        return [PlannedRun(self.case, point) for point in points]

    def sides(
        self,
        sides: list[Side],
        settings: Settings,
        results_dir: Path | None = None,
        reuse: Reuse | None = None,
        settled: SettledCell | None = None,
    ) -> list[tuple[Side, StoredResult | None]]:
        """One measurement of ``sides`` (stored under ``results_dir``, by default this one's): each
        side with its stored result (``reuse``: one taken instead, decided under the folder
        lock; ``settled``: what else ends its looks).  A measurement the harness cannot carry out (a
        worker that does not start) says why, and stores nothing."""
        asked = {"reuse": reuse, "settled": settled}
        more: dict[str, Any] = {"progress": self.progress, "undecided": open_comparison}
        more |= {name: value for name, value in asked.items() if value is not None}
        where = results_dir or self.results_dir
        try:
            outcomes = self.measure(self.plan(settings), sides, settings, where, **more)
        except WriteRefused:  # no release could be stored: the command stops, saying why
            raise
        except HarnessError as exc:
            self.progress(f"  not measured: {exc}")
            return [(side, None) for side in sides]
        return [(outcome.side, outcome.stored) for outcome in outcomes]

    def by_release(
        self, sides: list[Side], settings: Settings, reuse: Reuse | None = None
    ) -> dict[str, StoredResult | None]:
        """``sides``' measurement: each side's stored result, by release (None: it stored none)."""
        return {side.release: stored for side, stored in self.sides(sides, settings, None, reuse)}


def interleaved(
    measurement: SideMeasurement,
    sides: list[Side],
    processes: int,
    decide: str = CHANGES,
    pairs: Mapping[Pair, tuple[Criterion, ...]] | None = None,
    endpoints: bool = False,
    reuse: Reuse | None = None,
) -> dict[str, StoredResult | None]:
    """One measurement of ``sides``, ``processes`` each (then until decided: ``decide``, each side
    against the next, or only within ``pairs``); what it stored, by release (none unless there are
    at least two sides). ``endpoints``: the first and last sides are a bisect's endpoints, compared
    with each other as well, so that neither stops before their own comparison is decided (a resumed
    bisect judges them by this run's results)."""
    if len(sides) < 2:
        return {}
    if endpoints and len(sides) > 2:
        sides = [*sides[:-1], dataclasses.replace(sides[-1], compare_with=sides[0].label)]
    if pairs is not None:  # a gap between two steps is no step: its looks would measure for nothing
        compared = [_compared(side, after, pairs) for side, after in itertools.pairwise(sides)]
        sides = [*compared, sides[-1]]
    settings = measurement.settings_for(processes, decide, len(sides))
    until = f", then until decided (at most {settings.max_processes})" if settings.decide else ""
    each = f"{processes} processes each{until}"
    measurement.progress(f"  {len(sides)} releases measured together, {each}, interleaved")
    return measurement.by_release(sides, settings, reuse)


def _compared(side: Side, following: Side, pairs: Mapping[Pair, tuple[Criterion, ...]]) -> Side:
    """``side`` compared with ``following`` on the metrics its step moved, if the two make one."""
    moved = pairs.get((side.release, following.release), ())
    names = tuple(criterion.name for criterion in moved)  # as the side's settings store them
    return dataclasses.replace(side, compare_next=bool(moved), compare_metrics=names)


# (release, again) → the release's result; ``again``: measure anew, with more samples.
ProbeRelease = Callable[[str, bool], Probe]


@dataclass(frozen=True)
class ReleaseProber:
    """Results of one case at one set of sizes under one profile, release by release."""

    envs: dict[str, ReleaseEnv]
    case: CaseInfo  # or a plain script in its place (``--script``)
    sizes: dict[str, int]
    profile: str
    results_dir: Path
    settings: Settings  # as ``SideMeasurement``'s
    progress: Callable[[str], None] = field(
        default=lambda line: print(line, file=sys.stderr, flush=True)
    )
    # Only results measured here are reused: timings from another machine do not compare.
    machine: str = field(default_factory=lambda: machine_identity()["id"])
    # Which stored results this prober counts at all (None: every one); see ``reuse.first_round``.
    accept: Accept | None = None
    # Releases measured together get looks until decided, as ``SideMeasurement``'s sides do.
    max_processes: int | None = None  # None: ``processes`` only
    time_budget: float | None = None
    decide_on: tuple[Criterion, ...] = ()  # what is judged (empty: every metric)
    measure: Measure = runner.measure  # the measurement itself; a test hands in a fake
    # Each release's environment: a case's release venv, a script's own (None: made from ``case``).
    environments: Environments | None = None
    # Releases it measured and stored in one interleaved run: its own, not a copy's (``replace``).
    together: set[str] = field(default_factory=set, init=False, repr=False, compare=False)
    # Its collaborators, made once from the fields above (a copy makes its own): the stored results
    # it counts and reuses, how it measures the sides given, how each release's side is made ready.
    reuse: ReusePolicy = field(init=False, repr=False, compare=False)
    measurement: SideMeasurement = field(init=False, repr=False, compare=False)
    readiness: Readiness = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # A frozen dataclass's own fields, set while it is made.
        environments = self.environments or Environments(self.case, None, progress=self.progress)
        cell = (self.results_dir, self.case, self.sizes, self.profile, self.machine)
        reuse = ReusePolicy(*cell, environments, self.processes, self.accept, self.max_processes)
        measuring = (self.max_processes, self.time_budget, self.decide_on, self.measure)
        measurement = SideMeasurement(
            self.case, self.sizes, self.results_dir, self.settings, self.progress, *measuring
        )
        # its flops budget: an accelerator's profile measures the discussions' own sizes
        measurement = dataclasses.replace(measurement, device=device_class(self.profile))
        where = (self.profile, self.results_dir, self.settings)
        readiness = Readiness(environments, self.envs, *where, measurement.plan, reuse.stored)
        made = {"environments": environments, "reuse": reuse, "measurement": measurement}
        for name, value in {**made, "readiness": readiness}.items():
            object.__setattr__(self, name, value)

    @property
    def processes(self) -> int:
        return self.settings.processes

    def add_commit(self, label: str, env: ReleaseEnv, held: Libraries) -> None:
        """jax at a commit, its venv ``env`` made by ``bisect --commits``, one more side of this
        prober (only that run's search and why hold it); a script runs there with ``held`` pins."""
        assert self.environments is not None
        self.envs[label] = env
        self.environments.use_commit(label, env.interpreter, held)

    def prepare_ahead(self, releases: Sequence[str]) -> None:
        """``releases``' environments prepared in the background, beside what is measured now."""
        self.readiness.ahead.start([release for release in releases if release in self.envs])

    def measure_together(
        self,
        releases: Sequence[str],
        *,
        anew: bool = False,
        decide: str = CHANGES,
        pairs: Mapping[Pair, tuple[Criterion, ...]] | None = None,
        taken: runner.Reuse | None = None,  # with ``anew``: reused after all, asked under the lock
    ) -> None:
        """Measure in one interleaved run every release of ``releases`` without a reusable result
        (``anew``: every one), one side each.  Measuring until decided compares each release with
        the next, or, given ``pairs``, only the neighbours that make one of them, on that pair's
        metrics (a pair without any, whose claim alone flipped, gets no looks: the claim is settled
        over the planned processes).  The probes then find the results stored; a release that
        cannot be installed is left to its probe, which says why."""
        wanted = [release for release in releases if anew or self.reuse.reusable(release) is None]
        reused: set[str] = set()
        reuse = taken if anew else self.reuse.under_lock(reused)
        sides = self.readiness.sides(wanted, self.progress)
        measured = interleaved(self.measurement, sides, self.processes, decide, pairs, reuse=reuse)
        self.together.update({release for release, stored in measured.items() if stored} - reused)

    def measure_with_endpoints(
        self, release: str, good: str, bad: str, again: bool = False
    ) -> tuple[Probe, ...]:
        """``release`` measured anew in one interleaved run with both endpoints, also anew, so that
        it is judged against figures taken under the same load: (good, release, bad).

        A reusable stored result of ``release`` is reused (a bisect resumed), with the endpoints'
        newest; ``again`` measures all three in twice the processes.
        """
        if not again and self.reuse.reusable(release) is not None:
            return self(good), self(release), self(bad)
        processes = 2 * self.processes if again else self.processes
        started = time.monotonic()
        sides = self.readiness.sides([good, release, bad], self.progress)
        measured = interleaved(self.measurement, sides, processes, endpoints=True)
        if release not in measured:
            return self(good), self(release, again), self(bad)
        seconds = time.monotonic() - started
        note = "measured ({}) interleaved with both endpoints in {:.0f} s (install included)"
        return tuple(
            Probe(each, found, note.format(len(found.result.processes), seconds))
            if (found := measured.get(each)) is not None
            else Probe(each, None, "the interleaved run stored no result")
            for each in (good, release, bad)
        )

    def __call__(self, release: str, again: bool = False) -> Probe:
        reuse = self.reuse
        previous = reuse.stored(release)
        together = release in self.together  # what was measured, however few its processes
        if not again and previous is not None and (together or reuse.reusable(release)):
            if together:
                count = len(previous.result.processes)
                note = f"measured ({count}) interleaved with the other releases"
                return Probe(release, previous, note)
            return Probe(release, previous, f"stored result reused ({previous.path.name})")
        started = time.monotonic()
        if isinstance(prepared := self.readiness.side(release), Probe):
            return prepared
        # Measuring again doubles the processes (so the samples), so that a second look can settle
        # what the first could not.  A stored result too few processes measured is replaced.
        processes = 2 * self.processes if again else self.processes
        reused: set[str] = set()
        settings = self.measurement.settings_for(processes, "off", 1)
        taken = None if again else reuse.under_lock(reused)
        found = self.readiness.measured(prepared, self.measurement.by_release, settings, taken)
        if found is None:
            return Probe(release, None, "the measurement stored no result")
        how = "measured again in twice the processes" if again else "measured"
        note = f"{how} ({processes}) in {time.monotonic() - started:.0f} s (install included)"
        if reused:
            note = f"stored by another run meanwhile, reused ({found.path.name})"
        return Probe(release, found, note)
