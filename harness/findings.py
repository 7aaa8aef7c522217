"""A finding as the answers say it: its sentence, the commands it offers to run next, and whether a
reader reads it first; and the one builder of those ``nox -s …`` commands.

The sentence and its commands stay apart to the last renderer: a page joins them (``markdown``), a
screen puts each command on lines of its own, the issue draft leads with the findings that lead.
Nothing reads a command back out of a sentence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.pins import nox_profile_words, session_words


@dataclass(frozen=True)
class FollowUp:
    """What to run next and what it tells (``which jax commit``); ``shell``: a command line to paste
    whole, else a setting to make (a workaround's ``XLA_FLAGS=--…`` or ``jax.config.update(…)``)."""

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
    """One sentence of an answer (no command in it), the commands it offers, and whether it
    ``leads``: what a maintainer reads first (what the step comes with, whether jax alone shows it,
    a workaround)."""

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
    not lead (its commands, if any, stay in its text); None for anything else."""
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
    """``said`` as findings: a plain sentence (a kind's lines function may return one) does not
    lead."""
    return [each if isinstance(each, Finding) else Finding(each) for each in said]


def nox_command(
    session: str,
    target: Sequence[str],
    words: Sequence[str],
    sizes: Mapping[str, int],
    profile: str,
) -> str:
    """The ``nox -s SESSION -- TARGET WORDS --size … --profile P`` command a page offers to run
    next (``jax-repro SESSION …`` where the installed command drives the sessions): the one place
    such a command is put together (``--profile`` only where nox knows the profile)."""
    sized = [f"--size {name}={value}" for name, value in sizes.items()]
    return " ".join([*session_words(session), *target, *words, *sized, *nox_profile_words(profile)])
