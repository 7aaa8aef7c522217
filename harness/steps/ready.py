"""A release's side made ready to measure, or the probe that says why there is none.

A release whose environment could not be tried (the index out of reach, a failed sync, a write
refused) is answered by a ``Probe`` without a result and nothing is stored; one that is not
installable (the resolver proved it cannot be had) is stored as such, once, so that a later run
reads the answer back.  Installs stand beside measuring, not between it (``Ahead``); each venv's
own lock keeps two preparations of one venv apart.
"""

from __future__ import annotations

import contextlib
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.analysis.statuses import StatusSummary, ends_of
from harness.catalogue.sizes import DEFAULT_SEED, Budget
from harness.host.environment import host_facts
from harness.install.environments import Environments, Failed, Outcome, Prepared, Unavailable
from harness.install.venvs import ReleaseEnv
from harness.measure.cells import PlannedRun
from harness.measure.launch import venv_gone
from harness.measure.locks import ASIDE
from harness.measure.sides import Side
from harness.measure.storing import RunContext, not_installable_result, store
from harness.pins import device_class
from harness.store.results import StoredResult
from harness.store.schema import HostFacts, RunStatus, Settings, read_record
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
        prepared = self.ahead.take(release)
        if prepared is None:
            prepared = self.environments.prepare(release, self.envs[release])
        if isinstance(prepared, Prepared):
            return Side(
                release, self.profile, str(prepared.interpreter), libraries=prepared.libraries
            )
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
            prepared = self.side(release)
            if isinstance(prepared, Side):
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
