"""The commands of ``python -m harness``, one module each, lowest stage first in none of them: they sit on top.

Each module defines ``COMMAND``: the options it declares (``add_arguments``, from the
groups in ``options`` where an option is shared), the check that turns the parsed
command line into one typed options object without starting JAX (``check``: the
noxfile runs it on a session's posargs before installing anything), and the run from
that object alone (``execute``).  ``parser`` assembles them into the command line.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

OptionsT = TypeVar("OptionsT")


@dataclass(frozen=True)
class Command(Generic[OptionsT]):
    name: str
    summary: str  # one line, in the list of commands
    description: str  # the top of the command's --help
    exit_codes: str  # the end of its --help: "0 …, 1 …, 2 bad input"
    add_arguments: Callable[[argparse.ArgumentParser], None]
    check: Callable[[argparse.Namespace], OptionsT]
    execute: Callable[[OptionsT], int]

    def run(self, args: argparse.Namespace) -> int:
        return self.execute(self.check(args))


AnyCommand = Command[Any]
