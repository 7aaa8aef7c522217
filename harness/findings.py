"""A finding as the answers say it: its sentence, the commands it offers next, and whether it leads;
and the one builder of those ``nox -s …`` commands.  Sentence and commands stay apart to the last
renderer: nothing reads a command back out of a sentence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.pins import nox_profile_words, session_words


@dataclass(frozen=True)
class FollowUp:
    """What to run next and what it tells; ``shell``: a command line, else a setting to make."""

    purpose: str
    command: str
    shell: bool = True

    def markdown(self) -> str:
        said = self.purpose + ("" if self.purpose.endswith("?") else ":") if self.purpose else ""
        return f"{said} `{self.command}`".strip()

    def data(self) -> dict[str, Any]:
        return {"purpose": self.purpose, "command": self.command, "shell": self.shell}


@dataclass(frozen=True)
class Finding:
    """One sentence of an answer, the commands it offers, and whether it ``leads`` (read first)."""

    text: str
    follow_ups: tuple[FollowUp, ...] = ()
    leads: bool = False

    def markdown(self) -> str:
        """The sentence with its commands in code spans after it, as a page shows it."""
        if not self.follow_ups:
            return self.text
        joint = " " if self.text.endswith(("?", ":")) else ": "
        return self.text + joint + "; ".join(each.markdown() for each in self.follow_ups)

    def data(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "follow_ups": [each.data() for each in self.follow_ups],
            "leads": self.leads,
        }


def leading(text: str) -> Finding:
    """A finding a maintainer reads first."""
    return Finding(text, leads=True)


def finding_from(data: Any) -> Finding | None:
    """A finding as ``Finding.data`` stored it; an older answer's plain sentence as one that does
    not lead; None for anything else."""
    if isinstance(data, str):
        return Finding(" ".join(data.split()))
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        return None
    follow_ups = tuple(
        FollowUp(str(each.get("purpose", "")), each["command"], each.get("shell") is not False)
        for each in data.get("follow_ups") or []
        if isinstance(each, dict) and isinstance(each.get("command"), str)
    )
    return Finding(" ".join(data["text"].split()), follow_ups, data.get("leads") is True)


def findings(said: Sequence[Finding | str]) -> list[Finding]:
    """``said`` as findings: a plain sentence does not lead."""
    return [each if isinstance(each, Finding) else Finding(each) for each in said]


def nox_command(
    session: str,
    target: Sequence[str],
    words: Sequence[str],
    sizes: Mapping[str, int],
    profile: str,
) -> str:
    """The ``nox -s SESSION -- TARGET WORDS --size … --profile P`` command a page offers
    (``jax-repro SESSION …`` where installed): the one place it is put together."""
    sized = [f"--size {name}={value}" for name, value in sizes.items()]
    return " ".join([*session_words(session), *target, *words, *sized, *nox_profile_words(profile)])
