"""Measure one case at fixed sizes on one jax release, or reuse what the results folder holds.

A probe first looks for a stored result of the cell (case, release, profile, sizes);
only when there is none does it install the release into its cached venv and run
``python -m harness run`` there, which stores the result as any sweep does (same
child process, same measurement lock).  A release that cannot be installed has no
result: the search skips it.

Each measurement runs in ``processes`` case processes (``--processes``), since the
statistics and the claim are settled over processes: a stored result measured in fewer
(one from before several processes per cell, say) is measured anew, not reused.  A
second look runs twice the processes, which is what gives the statistics more to go
on (more samples within each process would not).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.host.environment import machine_identity
from harness.measure.sides import Side
from harness.releases import venvs
from harness.releases.venvs import ReleaseEnv
from harness.store.results import StoredResult, newest_result

Pair = tuple[str, str]  # the two releases around a step, older first


@dataclass(frozen=True)
class Probe:
    release: str
    result: StoredResult | None  # None: no result (the release could not be installed or run)
    note: str  # where the result came from, or why there is none


# (release, again) → the release's result; ``again``: measure anew, with more samples.
ProbeRelease = Callable[[str, bool], Probe]


@dataclass
class ReleaseProber:
    """Results of one case at one set of sizes under one profile, release by release."""

    envs: dict[str, ReleaseEnv]
    case: str
    sizes: dict[str, int]
    profile: str
    results_dir: Path
    run_options: Sequence[str]  # passed on to ``harness run``: --warmup, --timeout
    repeats: int  # samples per program in each process
    max_seconds: float
    processes: int  # case processes per measurement: the statistics' unit
    progress: Callable[[str], None] = field(default=lambda line: print(line, file=sys.stderr, flush=True))
    # Only results measured here are reused: timings from another machine do not compare.
    machine: str = field(default_factory=lambda: machine_identity()["id"])
    together: set[str] = field(default_factory=set)  # releases measured in one interleaved run
    # Which stored results this prober counts at all (None: every one); see ``first_round``.
    accept: Callable[[StoredResult], bool] | None = None
    script: Path | None = None  # a plain script measured in place of the case (``--script``)
    script_args: tuple[str, ...] = ()  # its command line (``--script-arg``)
    # Releases measured together get looks of ``processes`` rounds while a comparison of neighbours is open
    # (``run --decide``), up to ``max_processes`` each and within ``time_budget`` seconds a measurement.
    max_processes: int | None = None  # None: ``processes`` only
    time_budget: float | None = None
    decide_metrics: tuple[str, ...] = ()  # the metrics judged (empty: every metric)

    def stored(self, release: str) -> StoredResult | None:
        return newest_result(self.results_dir, self.case, release, self.profile, self.sizes, self.machine, self.accept)

    def reusable(self, release: str) -> StoredResult | None:
        """The stored result of the cell on ``release``, if enough processes measured it."""
        previous = self.stored(release)
        return previous if previous is not None and len(previous.result.processes) >= self.processes else None

    def _measure_options(self, processes: int) -> list[str]:
        return [
            *(["--case", self.case] if self.script is None else ["--script", str(self.script.resolve())]),
            *(f"--script-arg={value}" for value in self.script_args),
            "--results", str(self.results_dir.resolve()),
            *(f"--size={k}={v}" for k, v in self.sizes.items()),
            *self.run_options,
            "--repeats", str(self.repeats), "--max-seconds", str(self.max_seconds), "--processes", str(processes),
        ]  # fmt: skip

    def _decide_options(self, processes: int, decide: str) -> list[str]:
        """``run``'s options for measuring sides until decided (``decide``: "changes", "all" or "off")."""
        if decide == "off" or self.max_processes is None:
            return ["--decide", "off"]
        words = ["--decide", decide, "--max-processes", str(max(processes, self.max_processes))]
        words += [f"--decide-metric={name}" for name in self.decide_metrics]
        return words + ([] if self.time_budget is None else ["--time-budget", f"{self.time_budget:g}"])

    def measure_together(
        self,
        releases: Sequence[str],
        *,
        anew: bool = False,
        decide: str = "changes",
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

    def measure_with_endpoints(self, release: str, good: str, bad: str, again: bool = False) -> tuple[Probe, ...]:
        """``release`` measured anew in one interleaved run with both endpoints, also anew, so that it is
        judged against figures taken under the same load: (good, release, bad).

        A reusable stored result of ``release`` is reused (a bisect resumed), with the endpoints'
        newest; ``again`` measures all three in twice the processes.
        """
        if not again and self.reusable(release) is not None:
            return self(good), self(release), self(bad)
        before = {r: self.stored(r) for r in (good, release, bad)}
        processes = 2 * self.processes if again else self.processes
        started = time.monotonic()
        if release not in self._interleaved([good, release, bad], processes):
            return self(good), self(release, again), self(bad)
        seconds = time.monotonic() - started
        probes = []
        for each in (good, release, bad):
            found, previous = self.stored(each), before[each]
            if found is None or (previous is not None and found.id == previous.id):
                probes.append(Probe(each, None, "the interleaved run stored no result"))
            else:
                count = len(found.result.processes)
                note = f"measured ({count}) interleaved with both endpoints in {seconds:.0f} s (install included)"
                probes.append(Probe(each, found, note))
        return tuple(probes)

    def _interleaved(
        self,
        releases: Sequence[str],
        processes: int,
        decide: str = "changes",
        pairs: Mapping[Pair, tuple[str, ...]] | None = None,
    ) -> list[str]:
        """One ``harness run`` of ``releases`` as sides, ``processes`` each (then until decided: ``decide``,
        each side against the next, or only within ``pairs``); the releases it measured (those that could
        be installed, when at least two could)."""
        sides: list[dict[str, Any]] = []
        for number, release in enumerate(releases, start=1):
            env = self.envs[release]
            self.progress(
                f"  ({number}/{len(releases)}) jax {env.jax} with jaxlib {env.jaxlib} into {env.venv} "
                "(installed once, then reused)"
            )
            if venvs.ensure(env) is None:
                sides.append({"release": release, "profile": self.profile, "interpreter": str(env.interpreter)})
        if len(sides) < 2:
            return []
        if pairs is not None:  # a gap between two steps is no step: its looks would measure for nothing
            for side, following in itertools.pairwise(sides):
                moved = pairs.get((side["release"], following["release"]), ())
                side["compare_next"] = bool(moved)
                if moved:
                    side["compare_metrics"] = list(moved)
        deciding = "off" not in self._decide_options(processes, decide)
        until = f", then until decided (at most {self.max_processes})" if deciding else ""
        self.progress(f"  {len(sides)} releases measured together, {processes} processes each{until}, interleaved")
        with tempfile.TemporaryDirectory(prefix="harness-sides-") as scratch:
            plan = Path(scratch) / "sides.json"
            plan.write_text(json.dumps(sides))
            # This interpreter drives (it needs no JAX); each side's worker runs in its release's venv.
            command = [sys.executable, "-m", "harness", "run", "--sides", str(plan), "--force"]
            options = [*self._measure_options(processes), *self._decide_options(processes, decide)]
            subprocess.run([*command, *options], cwd=venvs.REPO, check=False)
        return [side["release"] for side in sides]

    def __call__(self, release: str, again: bool = False) -> Probe:
        previous = self.stored(release)
        if not again and self.reusable(release) is not None and previous is not None:
            if release in self.together:
                count = len(previous.result.processes)
                return Probe(release, previous, f"measured ({count}) interleaved with the other releases")
            return Probe(release, previous, f"stored result reused ({previous.path.name})")
        env = self.envs[release]
        started = time.monotonic()
        self.progress(f"  jax {env.jax} with jaxlib {env.jaxlib} into {env.venv} (installed once, then reused)")
        problem = venvs.ensure(env)
        if problem:
            return Probe(release, None, f"could not be installed: {problem}")
        # Measuring again doubles the processes (so the samples), so that a second look can settle
        # what the first could not.  A stored result too few processes measured is replaced.
        processes = 2 * self.processes if again else self.processes
        force = ["--force"] if again or previous is not None else []
        command = [str(env.interpreter), "-m", "harness", "run", "--profile", self.profile, *force]
        command += self._measure_options(processes)
        done = subprocess.run(command, cwd=venvs.REPO, check=False)
        found = self.stored(release)
        seconds = time.monotonic() - started
        if found is None or (previous is not None and found.id == previous.id):
            return Probe(release, None, f"harness run stored no result (exit code {done.returncode})")
        how = "measured again in twice the processes" if again else "measured"
        return Probe(release, found, f"{how} ({processes}) in {seconds:.0f} s (install included)")


def first_round(processes: int) -> Callable[[StoredResult], bool]:
    """The results a triage's first round counts: measured with the planned processes only (not until
    decided; older confirmations: in fewer than twice ``processes``), so that on a resume a confirmation
    never stands in for the first look."""
    return lambda stored: len(stored.result.processes) < 2 * processes and stored.result.settings.decide is None


def is_confirmation(stored: StoredResult, processes: int) -> bool:
    """Whether a stored result is a triage's confirmation (measured until decided; older ones: in twice the
    processes of the first round), not a first round's."""
    return stored.result.settings.decide is not None or len(stored.result.processes) >= 2 * processes


# Each pair with the metrics its steps moved (none: only the claim flipped) → each pair's two releases
# measured again, together, until those metrics are decided: the probes of (older, newer).
ConfirmPairs = Callable[[Mapping[Pair, tuple[str, ...]]], dict[Pair, tuple[Probe, Probe]]]


@dataclass
class PairConfirmer:
    """Measures the two releases around each step again, in one interleaved run with ``prober.processes``
    processes each, then looks until the steps' metrics are decided (``prober.max_processes``), or reuses a
    confirmation stored before.

    A stored result confirms a pair when enough processes measured it interleaved with the pair's
    other release (``interleaved_with`` names that side), so both halves of a pair come from one run.
    """

    prober: ReleaseProber

    def confirmation(self, release: str, partner: str) -> StoredResult | None:
        label = Side(partner, self.prober.profile, "").label
        prober = self.prober
        return newest_result(
            prober.results_dir, prober.case, release, prober.profile, prober.sizes, prober.machine,
            lambda r: is_confirmation(r, prober.processes) and label in r.result.interleaved_with,
        )  # fmt: skip

    def __call__(self, pairs: Mapping[Pair, tuple[str, ...]]) -> dict[Pair, tuple[Probe, Probe]]:
        missing = {
            (a, b): moved
            for (a, b), moved in pairs.items()
            if self.confirmation(a, b) is None or self.confirmation(b, a) is None
        }
        releases = list(dict.fromkeys(release for pair in missing for release in pair))
        if releases:
            self.prober.progress(
                f"  confirming {len(missing)} pair(s) of releases: {len(releases)} releases measured again together, "
                f"{self.prober.processes} processes each, then until decided (at most {self.prober.max_processes})"
            )
            self.prober.decide_metrics = tuple(dict.fromkeys(m for moved in missing.values() for m in moved))
            self.prober.measure_together(releases, anew=True, pairs=missing)
        found = {}
        for before, after in pairs:
            probes = []
            for release, partner in ((before, after), (after, before)):
                result = self.confirmation(release, partner)
                how = "stored" if (before, after) not in missing or result is None else "measured again"
                count = f" ({len(result.result.processes)} processes)" if result else ""
                note = (
                    f"{how} with jax {partner}{count}" if result else f"no result measured together with jax {partner}"
                )
                probes.append(Probe(release, result, note))
            found[(before, after)] = (probes[0], probes[1])
        return found
