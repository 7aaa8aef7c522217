"""``flags``'s command line: ``run``'s cases on the JAX installed here under two sets of device
flags, A and B, each a side of one run.

A flag is ``NAME=VALUE``: ``XLA_FLAGS`` or ``LIBTPU_INIT_ARGS`` (added to the profile's), another
``XLA_*``, ``LIBTPU_*``, ``TPU_*`` or ``JAX_*`` variable, or a jax option (set with
``jax.config.update`` right after import and read back).  Each side is stored under a label of its
own (the profile's, the side's letter, a digest of its flags): the same flags measured again are the
same cells, and an A/A is two cells.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from harness.analysis.significance import Thresholds
from harness.cli import options, run
from harness.cli.argparsing import Command
from harness.cli.run import RunOptions
from harness.errors import UsageError
from harness.host.environment import scrub
from harness.measure.script_hook import JAX_CONFIG
from harness.measure.sides import Side

# Variables whose value is a list of flags: a side's are added to what the environment holds.
APPENDED = ("XLA_FLAGS", "LIBTPU_INIT_ARGS")
# The variables a side may set: those a result records (``harness.host.environment``'s allow-list).
PREFIXES = ("XLA_", "LIBTPU_", "TPU_", "JAX_")
_VARIABLE = re.compile(r"[A-Z][A-Z0-9_]*")
_OPTION = re.compile(r"jax_[a-z0-9_]+")
KINDS = (
    "XLA_FLAGS or LIBTPU_INIT_ARGS (added to what they hold), a jax option such as "
    "jax_default_matmul_precision, or a JAX_*, XLA_*, TPU_* or LIBTPU_* variable"
)
MOST_VALUE = 4096


@dataclass(frozen=True)
class FlagSet:
    """One side's flags, as given: variables set (or added to) and jax options set."""

    letter: str  # "A" or "B"
    given: tuple[str, ...]  # NAME=VALUE, as typed
    variables: tuple[tuple[str, str], ...]
    jax_options: tuple[tuple[str, bool | int | float | str], ...]

    def text(self) -> str:
        """The flags as shown anywhere: without the home folder, the host or a credential."""
        return scrub(" ".join(self.given)) or "none (the environment as it is)"

    def digest(self) -> str:
        pairs = [list(self.variables), [[name, value] for name, value in self.jax_options]]
        return hashlib.sha256(json.dumps(pairs).encode()).hexdigest()[:8]

    def environment(self, environ: dict[str, str]) -> dict[str, str | None]:
        """The side's variables over ``environ`` (the harness's, with the profile's flags)."""
        env: dict[str, str | None] = {}
        for name, value in self.variables:
            if name in APPENDED:
                value = " ".join(filter(None, (env.get(name) or environ.get(name, ""), value)))
            env[name] = value
        if self.jax_options:
            env[JAX_CONFIG] = json.dumps(dict(self.jax_options))
        return env

    def side(self, here: Side, environ: dict[str, str]) -> Side:
        """``here`` (this interpreter, its release and profile) under these flags, a cell apart."""
        profile = f"{here.profile[:100]}-{self.letter.lower()}-{self.digest()}"
        label = f"{self.letter}: {self.text()}"
        label = label if len(label) <= 80 else f"{label[:77]}…"
        return Side(here.release, profile, here.interpreter, self.environment(environ), label)


def option_value(text: str) -> bool | int | float | str:
    """A jax option's value as ``jax.config.update`` takes it: true/false, a number, else text."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def flag_set(letter: str, given: list[str]) -> FlagSet:
    """``--a``/``--b``'s flags, each checked; UsageError naming the first that is not one."""
    variables: list[tuple[str, str]] = []
    jax_options: dict[str, bool | int | float | str] = {}
    for text in given:
        where = f"--{letter.lower()} {text[:80]!r}"
        name, equals, value = text.partition("=")
        if text.startswith("--"):
            raise UsageError(
                f"{where}: an XLA flag goes in XLA_FLAGS: --{letter.lower()} "
                f"'XLA_FLAGS={text[:60]}'"
            )
        if not equals or not name or not value:
            raise UsageError(f"{where}: a flag is NAME=VALUE, NAME one of {KINDS}")
        if "\x00" in value or "\n" in value or len(value) > MOST_VALUE:
            raise UsageError(f"{where}: a value is one line of at most {MOST_VALUE} characters")
        option = _OPTION.fullmatch(name)
        if not option and not (_VARIABLE.fullmatch(name) and name.startswith(PREFIXES)):
            raise UsageError(f"{where}: {name[:40]} is not a flag the harness sets: {KINDS}")
        if name in jax_options or (name not in APPENDED and name in dict(variables)):
            raise UsageError(f"{where}: {name} is given twice on side {letter}")
        if option:
            jax_options[name] = option_value(value)
        else:
            variables.append((name, value))
    return FlagSet(letter, tuple(given), tuple(variables), tuple(jax_options.items()))


@dataclass(frozen=True)
class FlagsOptions:
    run: RunOptions  # its two sides: A's flags, then B's
    a: FlagSet
    b: FlagSet
    thresholds: Thresholds
    out: Path  # the page goes here
    json: Path | None = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    options.add_case(parser, many=True, script=True)
    options.add_session(parser, release=False)
    for letter in ("a", "b"):
        options.repeatable(
            parser,
            f"--{letter}",
            "NAME=VALUE",
            f"a flag of side {letter.upper()} (repeatable): {KINDS}; none: the environment as it "
            "is",
        )
    run.add_measuring(parser)
    options.add_out(parser, "the comparison's page is written here")
    options.add_json(parser, "every pair's metrics, ratios, intervals and verdicts")
    options.add_thresholds(parser)
    # As ``run`` reads them: one side (then two), and both measured anew, never one side's stored
    # cell taken from another run: the sides are compared measured together.
    parser.set_defaults(sides=None, strict=False, force=True, retry_failed=False)


def check(args: argparse.Namespace) -> FlagsOptions:
    """Every check of ``flags`` that needs no JAX: ``run``'s, then each side's flags."""
    measured = run.check(args)
    [here] = measured.sides
    a, b = flag_set("A", args.a), flag_set("B", args.b)
    environ = dict(os.environ)
    sides = [a.side(here, environ), b.side(here, environ)]
    settings = run.settings_from(args, len(sides))
    both = dataclasses.replace(measured, sides=sides, settings=settings)
    return FlagsOptions(both, a, b, options.thresholds_from(args), args.out, args.json)


COMMAND = Command(
    name="flags",
    summary="compare two sets of device flags on the JAX installed here, measured interleaved",
    description=(
        "Measure the chosen cases (default: all) or a script on the JAX installed here under flags "
        "A and under flags B, their processes interleaved, and compare B against A metric by "
        "metric, as `compare` judges two releases. "
        "E.g. --b jax_default_matmul_precision=highest, or --b 'XLA_FLAGS=--xla_foo=true'."
    ),
    exit_codes=(
        "0 nothing worse under B, 1 something significantly slower or broken under B, 2 bad input, "
        "130/143 interrupted (everything stored so far is kept)"
    ),
    add_arguments=add_arguments,
    check=check,
)
