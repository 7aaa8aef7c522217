"""A release's side made ready to measure, or the probe that says why there is none.

A release whose environment could not be tried (the index out of reach, a failed sync, a write
refused) is answered by a ``Probe`` without a result and nothing is stored; one that is not
installable (the resolver proved it cannot be had) is stored as such, once, so that a later run
reads the answer back.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.analysis.statuses import StatusSummary, ends_of
from harness.catalogue.sizes import DEFAULT_SEED, Budget
from harness.host.environment import host_facts
from harness.install.environments import Environments, Failed, Prepared, Unavailable
from harness.install.venvs import ReleaseEnv
from harness.measure.cells import PlannedRun
from harness.measure.launch import venv_gone
from harness.measure.sides import Side
from harness.measure.storing import RunContext, not_installable_result, store
from harness.pins import device_class
from harness.store.results import StoredResult
from harness.store.schema import RunStatus, Settings, parse_host
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

    def side(self, release: str) -> Side | Probe:
        """A side for ``release``, its environment ready; else a probe that says why there is none
        (a release that is not installable is stored as such, once)."""
        prepared = self.environments.prepare(release, self.envs[release])
        if isinstance(prepared, Prepared):
            return Side(
                release, self.profile, str(prepared.interpreter), libraries=prepared.libraries
            )
        if isinstance(prepared, Failed):  # could not be tried: no answer, nothing stored
            return Probe(release, None, prepared.line)
        previous = self.stored(release)
        if previous is not None and (previous.result.status, previous.result.detail) == (
            RunStatus.NOT_INSTALLABLE,
            prepared.line,
        ):
            return Probe(release, previous, prepared.line)
        return Probe(release, self._store_not_installable(release, prepared), prepared.line)

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
        """A side for each release of ``releases`` whose environment could be made ready, in order;
        for each of the others, why not."""
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
        context = RunContext(
            self.results_dir,
            self.settings,
            DEFAULT_SEED,
            Budget.for_this_machine((), device_class(self.profile)),
            "",
        )
        cell = self.plan(self.settings)[0]
        host = parse_host(host_facts())
        result = not_installable_result(context, cell, side, unavailable.line, host)
        return store(self.results_dir, result)
