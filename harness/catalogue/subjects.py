"""What is measured: a case module at sizes, or a plain script run as it is.

Every ``CaseInfo`` holds one ``Subject``, which callers ask what differs instead of asking which it
is; ``harness.cli.options.case_from`` decides which one a command measures.  Standard library only:
the noxfile reads a script in nox's own environment.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.catalogue.script_deps import Declared
from harness.metric_names import JSON, PROCESS

if TYPE_CHECKING:
    from harness.store.schema import ScriptIdentity


@dataclass(frozen=True)
class ChildStart:
    """What a case process is told besides its file: a plain script's content and arguments."""

    script_sha256: str | None = None  # None: the file is a case module, imported for its programs
    script_args: tuple[str, ...] = ()


class Subject:
    """What a ``CaseInfo`` measures: this base a case module, ``PlainScript`` a script."""

    kind = "case"  # how a watch's summary names a target: "case" or "script"
    # Its command line after the file (``--script-arg``); a case has none.
    args: tuple[str, ...] = ()
    # How the command line added to what it needs (``--with optax --requirements r.txt``).
    given: tuple[str, ...] = ()
    # What it needs besides JAX, as a venv of its own takes it (``harness.install.script_envs``).
    declared = Declared()
    # Whether it runs in a venv of its own (jax, jaxlib, what it declares), not a release's.
    own_venv = False
    # Judged on every metric that moved when no criterion is given (a case needs one).
    every_metric = False
    # The programs of its figures a draft tables per release: phases and JSON numbers.
    figure_programs: tuple[str, ...] = ()

    @property
    def requirements(self) -> tuple[str, ...]:
        """What it declares besides JAX, in canonical form; a case needs nothing but JAX."""
        return self.declared.requirements

    @property
    def script_file(self) -> str:
        """The script's file name, as answers name it; empty for a case."""
        return ""

    def child_start(self) -> ChildStart:
        return ChildStart()

    def identity(self) -> ScriptIdentity | None:
        """What its results record of it (``Result.script``)."""
        return None

    def measured_by(self, recorded: ScriptIdentity | None) -> bool:
        """Whether a stored result that recorded ``recorded`` measured what this is now."""
        return True  # a case's results are told apart by its name and sizes

    def mixing_problem(self, folder: str, recorded: Iterable[ScriptIdentity | None]) -> str:
        """Why a results folder whose results recorded ``recorded`` cannot take its results; empty
        when it can. ``recorded`` is read only where the answer depends on it."""
        return ""

    def named_by(self, name: str, path: str) -> tuple[str, ...]:
        """How a command line names it (file as ``path``): ``--case NAME`` or ``--script PATH``."""
        return ("--case", name)

    def command_words(self, name: str, path: str, libraries: Sequence[str]) -> list[str]:
        """A command line's shell words for it: a case by name; a script by ``path``, its arguments,
        what the command line added, and ``libraries`` (``--deps``, ``--hold``)."""
        return list(self.named_by(name, path))  # a case declares no libraries: none are had

    def content_digest(self, path: Path) -> str:
        """The SHA-256 of what it runs, its file at ``path``."""
        return hashlib.sha256(path.read_bytes()).hexdigest()

    def own_text(self, path: Path) -> bytes | None:
        """The file a draft copies as it is (a script's, full and short); None: exported."""
        return None

    def device_needs(self, min_devices: int, devices_used: int | None) -> tuple[int, int | None]:
        """The devices a process of it is known to need and use before it starts."""
        return min_devices, devices_used

    def provenance(self, claim: str, source: str) -> str:
        """Where a draft says the report comes from."""
        shown = f" ({source})" if source.startswith("https://") else ""
        return f"Found while checking a claim from a user discussion{shown}: {claim}"


CASE_MODULE = Subject()


@dataclass(frozen=True)
class PlainScript(Subject):
    """A plain repro script measured in place of a case, run as ``python FILE`` (``scripts``)."""

    file: str  # its file name, as results and reports show it
    sha256: str  # of its content: results of another version of it are never mixed with these
    args: tuple[str, ...] = ()  # its command line after the file, as `python FILE ARGS` takes it
    # Read once (``script_deps``): the value every venv of it is resolved from, as it is.
    declared: Declared = field(default_factory=Declared)
    given: tuple[str, ...] = ()

    kind = "script"
    own_venv = True
    every_metric = True
    figure_programs = (PROCESS, JSON)

    @property
    def script_file(self) -> str:
        return self.file

    def child_start(self) -> ChildStart:
        return ChildStart(self.sha256, self.args)

    def identity(self) -> ScriptIdentity | None:
        # Imported here: the noxfile reads a script without loading the result schema.
        from harness.store.schema import ScriptIdentity

        return ScriptIdentity(self.file, self.sha256, self.args)

    def measured_by(self, recorded: ScriptIdentity | None) -> bool:
        return recorded is not None and (recorded.sha256, recorded.args) == (self.sha256, self.args)

    def mixing_problem(self, folder: str, recorded: Iterable[ScriptIdentity | None]) -> str:
        for found in recorded:
            if found is not None and found.sha256 == self.sha256:
                if found.args == self.args:
                    continue
                other = f"{self.file} run with other arguments ({' '.join(found.args) or 'none'})"
                never = "results of two command lines are never mixed"
                return f"{folder} holds results of {other}: {never}; give --results another folder"
            what = "something other than it"
            if found:
                what = f"another version of it (sha256 {found.sha256[:12]})"
            return (
                f"{folder} holds results of {what}, and {self.file} is now sha256 "
                f"{self.sha256[:12]}: results of two versions are never mixed; give --results "
                "another folder, or the changed script another file name"
            )
        return ""

    def named_by(self, name: str, path: str) -> tuple[str, ...]:
        return ("--script", path)

    def command_words(self, name: str, path: str, libraries: Sequence[str]) -> list[str]:
        arguments = [f"--script-arg={shlex.quote(value)}" for value in self.args]
        given = [shlex.quote(word) for word in self.given]
        return [*self.named_by(name, path), *arguments, *given, *libraries]

    def content_digest(self, path: Path) -> str:
        return self.sha256  # a suite's wrapper names the suite's digest in its content

    def own_text(self, path: Path) -> bytes | None:
        return path.read_bytes()

    def device_needs(self, min_devices: int, devices_used: int | None) -> tuple[int, int | None]:
        return 0, None  # only its process can tell

    def provenance(self, claim: str, source: str) -> str:
        fresh = "in a fresh venv holding jax, jaxlib and what the script declares."
        return f"Found with a user's script, `{self.file}`, run unmodified on each release {fresh}"
