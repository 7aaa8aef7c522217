"""Discover and select reproduction cases without importing them.

A case module is plain JAX; reading its constants with ``ast`` lets the parent
process list, validate and plan cases without paying for (or depending on) a JAX
import.  Only the child process imports a case.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.catalogue import sizes
from harness.catalogue.sizes import Budget, PlannedPoint, SizePoint, SizeSpace
from harness.errors import UsageError
from harness.names import SIZE_NAME, name_problem

DEFAULT_CASES_DIR = Path(__file__).resolve().parents[2] / "cases"
NOT_CASES = {"__init__", "compat"}
EFFORTS = ("quick", "full")
REQUIRED = ("CLAIM", "SOURCE", "SIZE_SPACE", "ANCHORS")
# Constants an older harness read, and what replaced them.
RENAMED = {"DISCUSSION": "SOURCE"}


@dataclass(frozen=True)
class ScriptSource:
    """A plain repro script measured in place of a case (``harness.catalogue.scripts``)."""

    file: str  # its file name, as results and reports show it
    sha256: str  # of its content: results of another version of it are never mixed with these


@dataclass(frozen=True)
class CaseInfo:
    name: str
    path: Path
    claim: str
    source: str  # the upstream thread: its URL, or its title where no URL is known
    space: SizeSpace
    anchors: list[SizePoint] = field(default_factory=list)
    min_devices: int = 1
    devices_used: int | None = None  # the most devices its programs use; None: as many as there are
    script: ScriptSource | None = None  # a plain script run as ``python FILE``, not a case module

    def plan(self, effort: str, overrides: dict[str, int], *, seed: int, budget: Budget) -> list[PlannedPoint]:
        return sizes.plan(self.space, self.anchors, effort, overrides, seed=seed, budget=budget)


# The constants the harness reads from a case file, with the type each must have.
CONSTANTS = {
    "CLAIM": "a string",
    "SOURCE": "one line: the public thread's URL (https://…), or its title where no URL is known",
    "SIZE_SPACE": 'a dict of size name to (low, high) integers, e.g. {"N": (16, 2048)}',
    "ANCHORS": 'a list of dicts giving every size, e.g. [{"N": 1000}]',
    "COST": 'a dict of "bytes"/"flops" to arithmetic over the sizes, e.g. {"flops": "2 * N ** 3"}',
    "MIN_DEVICES": "a positive integer",
    "DEVICES_USED": "a positive integer",
}


class Catalogue(dict[str, "CaseInfo"]):
    """The readable cases by name; ``broken`` names each case file that cannot be read, and why."""

    def __init__(self, cases: dict[str, CaseInfo], broken: dict[str, str]) -> None:
        super().__init__(cases)
        self.broken = broken


def _constants(path: Path) -> dict[str, Any]:
    """The case's constants, read without importing it; UsageError naming the file and the constant."""
    try:
        tree = ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as exc:
        raise UsageError(f"case file {path.name} does not parse: {exc.msg} (line {exc.lineno})") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"case file {path.name} cannot be read: {exc}") from None
    found: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in RENAMED:
                found[name] = None  # noted only to say what replaced it
                continue
            if name not in CONSTANTS:
                continue
            try:
                found[name] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                raise UsageError(
                    f"case file {path.name}: {name} is not a literal ({ast.unparse(node.value)[:80]}); the harness "
                    "reads a case's constants without importing it, so they must be literals only (no names, calls "
                    f"or arithmetic: 1048576, not 2**20): {name} must be {CONSTANTS[name]}"
                ) from None
    return found


SOURCE_URL = re.compile(r"https://\S+")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return _is_int(value) and value > 0


def _is_source(value: Any) -> bool:
    """One non-empty line; a URL is an https:// one without spaces."""
    if not isinstance(value, str) or not value.strip() or "\n" in value:
        return False
    return "://" not in value or SOURCE_URL.fullmatch(value) is not None


def _problem(constants: dict[str, Any]) -> str | None:
    """Which constant has the wrong form, or None."""
    ranges, anchors = constants["SIZE_SPACE"], constants["ANCHORS"]
    checks = {
        "CLAIM": isinstance(constants["CLAIM"], str),
        "SOURCE": _is_source(constants["SOURCE"]),
        "SIZE_SPACE": isinstance(ranges, dict)
        and all(
            isinstance(k, str)
            and not name_problem(k, SIZE_NAME)
            and isinstance(v, tuple)
            and len(v) == 2
            and all(_is_int(x) for x in v)
            and 0 < v[0] <= v[1]
            for k, v in ranges.items()
        ),
        "ANCHORS": isinstance(anchors, list)
        and all(isinstance(a, dict) and all(_is_int(x) for x in a.values()) for a in anchors),
        "COST": isinstance(constants.get("COST", {}), dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in constants.get("COST", {}).items()),
        "MIN_DEVICES": _is_count(constants.get("MIN_DEVICES", 1)),
        "DEVICES_USED": _is_count(constants.get("DEVICES_USED", 1)),
    }
    wrong = next((name for name, ok in checks.items() if not ok), None)
    if wrong:
        return f"{wrong} must be {CONSTANTS[wrong]}"
    if not all(set(a) == set(ranges) for a in anchors):
        return "every ANCHORS entry must give each size in SIZE_SPACE"
    return None


def read_case(path: Path) -> CaseInfo:
    problem = name_problem(path.stem)
    if problem:
        raise UsageError(f"case file {path.name}: its name {problem}")
    constants = _constants(path)
    missing = [key for key in REQUIRED if key not in constants]
    if missing:
        renamed = [f"{old} is now {new}" for old, new in RENAMED.items() if new in missing and old in constants]
        hint = f"; {', '.join(renamed)}" if renamed else ""
        raise UsageError(f"case file {path.name} lacks {', '.join(missing)} (see cases/README.md){hint}")
    problem = _problem(constants)
    if problem:
        raise UsageError(f"case file {path.name}: {problem}")
    ranges = constants["SIZE_SPACE"]
    anchors = constants["ANCHORS"]
    return CaseInfo(
        name=path.stem,
        path=path,
        claim=constants["CLAIM"],
        source=constants["SOURCE"],
        space=SizeSpace(dict(ranges), dict(constants.get("COST", {}))),
        anchors=list(anchors),
        min_devices=int(constants.get("MIN_DEVICES", 1)),
        devices_used=None if "DEVICES_USED" not in constants else int(constants["DEVICES_USED"]),
    )


def discover(cases_dir: Path = DEFAULT_CASES_DIR) -> Catalogue:
    """Every case file in ``cases_dir``; one that cannot be read is set aside with the reason, so a broken
    new case never stops the others (it is refused, with that reason, only when it is asked for)."""
    if not cases_dir.is_dir():
        raise UsageError(f"cases folder not found: {cases_dir}")
    paths = sorted(p for p in cases_dir.glob("*.py") if p.stem not in NOT_CASES and not p.stem.startswith("_"))
    cases, broken = {}, {}
    for path in paths:
        try:
            cases[path.stem] = read_case(path)
        except UsageError as exc:
            broken[path.stem] = str(exc)
    return Catalogue(cases, broken)


def select(catalogue: dict[str, CaseInfo], names: Sequence[str]) -> list[CaseInfo]:
    broken: dict[str, str] = getattr(catalogue, "broken", {})
    for name in names:
        if name in broken:
            raise UsageError(broken[name])
    if not names:
        return list(catalogue.values())
    unknown = [n for n in names if n not in catalogue]
    if unknown:
        known = ", ".join(catalogue) or "none"
        raise UsageError(f"unknown case {', '.join(unknown)!s}; known cases: {known}")
    return [catalogue[n] for n in dict.fromkeys(names)]


SIZE_VALUE = re.compile(r"[0-9]{1,12}")  # ASCII digits: int() would also take "１２" or "1_000"


def parse_size(text: str) -> tuple[str, int]:
    key, sep, value = text.partition("=")
    if not sep or name_problem(key, SIZE_NAME):
        raise UsageError(f"malformed size {text[:60]!r}: expected NAME=INTEGER, e.g. N=1000")
    if not SIZE_VALUE.fullmatch(value):
        raise UsageError(f"malformed size {text[:60]!r}: the value must be a whole number of at most 12 digits")
    number = int(value)
    if number <= 0:
        raise UsageError(f"malformed size {text!r}: sizes must be positive")
    return key, number


def parse_sizes(texts: Sequence[str]) -> dict[str, int]:
    """``--size`` options as a dict; a size given twice is refused rather than the last one winning."""
    found: dict[str, int] = {}
    for text in texts:
        key, value = parse_size(text)
        if key in found and found[key] != value:
            raise UsageError(f"size {key} given twice ({key}={found[key]} and {key}={value})")
        found[key] = value
    return found


def check_overrides(cases: Sequence[CaseInfo], overrides: dict[str, int]) -> None:
    known = {name for case in cases for name in case.space.ranges}
    unknown = set(overrides) - known
    if unknown:
        raise UsageError(
            f"no selected case has size {', '.join(sorted(unknown))}; their sizes: {', '.join(sorted(known)) or 'none'}"
        )
