"""Where each release of a command runs: a case in its release venv (``venvs``), a plain script
in a venv of its own with only what it declares (``script_envs``), any pins held on every release
(``--hold``) or one label (``--vary``); the harness is kept out of a script's venv.

A release is ``Unavailable`` when its set cannot be had (an answer a result stores), ``Failed``
when it could not be tried (one line, never stored, tried again next run).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.catalogue.discovery import CaseInfo
from harness.install import script_envs, venvs
from harness.install.script_envs import InstallFailed, NotInstallable, ScriptEnvRequest
from harness.install.upload_times import UploadTimes
from harness.install.venvs import ReleaseEnv
from harness.measure.locks import stderr_line
from harness.pins import Profile, index_release
from harness.store.schema import Libraries
from harness.units import version_key

# beside the venvs: each package's files and upload times, as the index lists them
INDEX_TIMES = "index-times"


@dataclass(frozen=True)
class Prepared:
    """A release ready to measure: the interpreter its side runs, and what a script's venv holds."""

    interpreter: Path
    libraries: Libraries | None = None  # None: a case's release venv


@dataclass(frozen=True)
class Unavailable:
    """A release whose environment cannot be had (the resolver proved it): an answer, stored as its
    result with what was asked of it (``libraries``, holding nothing) for a later probe to find."""

    line: str  # "not installable (as of …): the resolver's reason"
    libraries: Libraries


@dataclass(frozen=True)
class Failed:
    """A release whose environment could not be made this time: no answer about it, never stored."""

    line: str  # one line naming the cause: the index, the disk, the interpreter, uv


# What preparing a release gives: ready, cannot be had, or could not be tried.
Outcome = Prepared | Unavailable | Failed


def not_tried(found: InstallFailed | str) -> str:
    """The one line a release that could not be tried says: its cause, nothing concluded."""
    reason = found.reason if isinstance(found, InstallFailed) else found
    return f"could not be installed: {reason}"


SHOWN_REQUIREMENTS = 5  # in a progress line (a line per release stays a line); the rest counted


@dataclass
class Environments:
    """Each release's environment for one case or script, made when first needed and then reused."""

    case: CaseInfo
    profile: Profile | None
    policy: str = script_envs.AS_OF
    hold: tuple[str, ...] = ()  # exact pins held on every release
    # by label: pins held there only (--vary)
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    progress: Callable[[str], None] = stderr_line
    # by label: made elsewhere (a commit's venv)
    fixed: dict[str, Prepared] = field(default_factory=dict)
    _noted: bool = field(default=False, init=False, repr=False)  # the script's notes said, once

    def use_commit(self, label: str, interpreter: Path, held: Libraries) -> None:
        """``label`` is jax at a commit, its venv made by ``bisect --commits``: a script's runs
        there with its libraries ``held``; a case's is prepared as a release's venv is."""
        if self.case.subject.own_venv:
            self.fixed[label] = Prepared(interpreter, held)

    def resolved(self, envs: Mapping[str, ReleaseEnv]) -> dict[str, str | None]:
        """By label, what a script's venv resolved to (its set's SHA-256) or why it cannot be had,
        each venv made ready (measuring needs it anyway); nothing for a case (jax alone)."""
        if not self.case.subject.own_venv:
            return {}
        found: dict[str, str | None] = {}
        for label, env in envs.items():
            prepared = self.prepare(label, env)
            if isinstance(prepared, Prepared):
                found[label] = prepared.libraries.sha256 if prepared.libraries else None
            else:
                found[label] = prepared.line
        return found

    def holding(self, label: str, pins: tuple[str, ...]) -> Environments:
        """A copy with ``label`` also holding ``pins`` (a step's middle side)."""
        held = dataclasses.replace(self, extra={**self.extra, label: pins})
        held._noted = self._noted  # the script's notes, said once already, are not said again
        return held

    def held(self, label: str) -> tuple[str, ...]:
        return (*self.hold, *self.extra.get(label, ()))

    def matches(self, label: str, libraries: Libraries | None) -> bool:
        """Whether a stored result's venv was resolved as ``label``'s would be now: a case's, none;
        a script's, by the same policy, declared requirements and held pins."""
        if label in self.fixed:
            return libraries == self.fixed[label].libraries
        subject = self.case.subject
        if not subject.own_venv:
            return libraries is None
        if libraries is None:
            return False
        wanted = (self.policy, subject.requirements, self.held(label))
        return (libraries.policy, libraries.declared, libraries.held) == wanted

    def prepare(self, label: str, env: ReleaseEnv) -> Outcome:
        """``label``'s environment, ready; or why it cannot be had or could not be tried."""
        if label in self.fixed:
            return self.fixed[label]
        # The one place that decides which venv a subject runs in: the release's, or one of its own.
        if not self.case.subject.own_venv:
            into = f"into {env.venv} (installed once, then reused)"
            self.progress(f"  jax {env.jax} with jaxlib {env.jaxlib} {into}")
            problem = venvs.ensure(env)
            return Failed(not_tried(problem)) if problem else Prepared(env.interpreter)
        held = self.held(label)
        declared = self.case.subject.declared
        # The release the plan's entry installs (a CUDA build names no jaxlib of its own).
        release = index_release(env.jax, env.jaxlib if version_key(env.jaxlib)[0] else env.jax)
        request = ScriptEnvRequest(release, declared, env.python, self.profile, self.policy, held)
        folder = env.venv.parent
        wanted, more = declared.requirements, len(declared.requirements) - SHOWN_REQUIREMENTS
        listed = ", ".join(wanted[:SHOWN_REQUIREMENTS]) or "nothing"
        shown = f"{listed}{f' and {more} more' if more > 0 else ''} besides jax {env.jax}"
        for note in declared.notes if not self._noted else ():
            self.progress(f"  note: {note}")
        self._noted = True
        venv = f"a venv for {declared.script} ({shown}, {self.policy}) under {folder}"
        self.progress(f"  {label}: {venv}")
        found = script_envs.ensure(request, folder, UploadTimes(folder / INDEX_TIMES))
        if isinstance(found, InstallFailed):
            return Failed(not_tried(found))
        if isinstance(found, NotInstallable):
            when = f"as of {found.cutoff:%Y-%m-%d}" if found.cutoff else "the newest versions"
            line = f"not installable ({when}): {found.reason}"
            return Unavailable(line, script_envs.libraries(request, (), found.cutoff))
        return Prepared(found.interpreter, found.libraries)
