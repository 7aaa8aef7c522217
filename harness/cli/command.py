"""A command as its command line declares it: its options, their help, and the check that types
them."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

OptionsT = TypeVar("OptionsT")


@dataclass(frozen=True)
class Command(Generic[OptionsT]):
    """Each module of ``harness.cli`` declares one (``COMMAND``; ``ranges`` three): the options it
    takes (``add_arguments``, from the groups in ``harness.cli.options`` where an option is shared)
    and the check that turns the parsed command line into one typed options object without JAX
    (``check``: the noxfile runs it on a session's posargs before installing anything).  What the
    command then does is its workflow, in the module of the same name under ``harness.commands``."""

    name: str
    summary: str  # one line, in the list of commands
    description: str  # the top of the command's --help
    exit_codes: str  # the end of its --help: "0 …, 1 …, 2 bad input"
    add_arguments: Callable[[argparse.ArgumentParser], None]
    check: Callable[[argparse.Namespace], OptionsT]


AnyCommand = Command[Any]
