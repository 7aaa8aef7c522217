"""The command line's machinery: ``Command``, a parser whose every mistake is one ``UsageError``
line, help that shows each default, the nearest option to an unknown one, no option given twice.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any, Generic, TypeVar

from harness.errors import WRITE_FAILED_WORDS, UsageError

# The console script's name: the usage lines and hints give the command a user types
# (`python -m harness` is the same).
PROG = "jax-repro"
OptionsT = TypeVar("OptionsT")


@dataclass(frozen=True)
class Command(Generic[OptionsT]):
    """Each module of ``harness.cli`` declares one: its options (``add_arguments``) and the check
    turning them into one typed options object without JAX (``check``: the noxfile runs it on a
    session's posargs before installing anything); its workflow is in ``harness.commands``."""

    name: str
    summary: str  # one line, in the list of commands
    description: str  # the top of the command's --help
    exit_codes: str  # the end of its --help: "0 …, 1 …, 2 bad input"
    add_arguments: Callable[[argparse.ArgumentParser], None]
    check: Callable[[argparse.Namespace], OptionsT]


AnyCommand = Command[Any]


def options_of(kind: type[OptionsT], args: argparse.Namespace, **given: Any) -> OptionsT:
    """A command's options: each field as ``given``, else the parsed option of the same name."""
    named = (spec.name for spec in fields(kind))  # type: ignore[arg-type]
    return kind(**{name: given[name] if name in given else getattr(args, name) for name in named})


class _StoreOnce(argparse._StoreAction):
    """A single-valued option given twice is refused: argparse would quietly keep the last."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option: Any = None,
    ):
        given = namespace.__dict__.setdefault("_given_once", set())
        if self.dest in given:
            raise UsageError(f"argument {option}: given more than once; give it once")
        given.add(self.dest)
        super().__call__(parser, namespace, values, option)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:
        raise UsageError(message)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # every single-valued option, in groups too (they share the registry)
        for name in (None, "store"):
            self.register("action", name, _StoreOnce)


class _HelpFormatter(argparse.HelpFormatter):
    """Every default shown unless the help says it; a literal % in prose never breaks --help."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        shown = default not in (None, False, [], argparse.SUPPRESS) and action.option_strings
        if shown and "default" not in text:
            text += " (default: %(default)s)"
        return text

    def _expand_help(self, action: argparse.Action) -> str:
        # Help is written as prose ("10 % larger"); only %(name)s is argparse's.
        escaped = re.sub(r"%(?!\()", "%%", self._get_help_string(action))
        return escaped % {**vars(action), "prog": self._prog}


def build_parser(commands: Sequence[AnyCommand], description: str = "") -> argparse.ArgumentParser:
    """A parser of ``commands``, each a subcommand with its own help."""
    parser = _Parser(
        prog=PROG, description=description, allow_abbrev=False, formatter_class=_HelpFormatter
    )
    subparsers = parser.add_subparsers(
        dest="command", required=True, parser_class=_Parser, metavar="COMMAND"
    )
    for command in commands:
        sub = subparsers.add_parser(
            command.name,
            help=command.summary,
            description=command.description,
            epilog=f"exit status: {command.exit_codes}, {WRITE_FAILED_WORDS}",
            allow_abbrev=False,
            formatter_class=_HelpFormatter,
        )
        command.add_arguments(sub)
    return parser


def parse_with(
    commands: Sequence[AnyCommand], argv: Sequence[str], description: str = ""
) -> argparse.Namespace:
    """The parsed command line; UsageError naming the nearest option to an unknown one."""
    parser = build_parser(commands, description)
    args, extras = parser.parse_known_args(list(argv))
    if extras:
        raise UsageError(
            f"unrecognized arguments: {' '.join(extras)}{_nearest(parser, args.command, extras)}"
        )
    return args


def _nearest(parser: argparse.ArgumentParser, command: str, extras: list[str]) -> str:
    unknown = next((e.split("=", 1)[0] for e in extras if e.startswith("--")), None)
    if unknown is None:
        return ""
    [subparsers] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    actions = subparsers.choices[command]._actions
    known = [option for action in actions for option in action.option_strings]
    if close := difflib.get_close_matches(unknown, known, n=1, cutoff=0.6):
        return f" (did you mean {close[0]}?)"
    return f" (`{PROG} {command} --help` lists its options)"


def validate_with(
    commands: Sequence[AnyCommand], argv: Sequence[str]
) -> tuple[argparse.Namespace, Any]:
    """The parsed command line and its command's typed options (or UsageError), running nothing."""
    args = parse_with(commands, argv)
    [command] = [c for c in commands if c.name == args.command]
    return args, command.check(args)
