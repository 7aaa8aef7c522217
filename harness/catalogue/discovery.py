"""Discover and select reproduction cases without importing them.

A case module is plain JAX; reading its constants with ``ast`` lets the parent
process list, validate and plan cases without paying for (or depending on) a JAX
import.  Only the child process imports a case.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.catalogue import sizes
from harness.catalogue.sizes import Budget, PlannedPoint, SizePoint, SizeSpace
from harness.errors import UsageError

DEFAULT_CASES_DIR = Path(__file__).resolve().parents[2] / "cases"
NOT_CASES = {"__init__", "compat"}
EFFORTS = ("quick", "full")
REQUIRED = ("CLAIM", "DISCUSSION", "SIZE_SPACE", "ANCHORS")


@dataclass(frozen=True)
class CaseInfo:
    name: str
    path: Path
    claim: str
    discussion: str
    space: SizeSpace
    anchors: list[SizePoint] = field(default_factory=list)
    min_devices: int = 1

    def plan(self, effort: str, overrides: dict[str, int], *, seed: int, budget: Budget) -> list[PlannedPoint]:
        return sizes.plan(self.space, self.anchors, effort, overrides, seed=seed, budget=budget)


def _constants(path: Path) -> dict[str, Any]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name.isupper():
                try:
                    found[name] = ast.literal_eval(node.value)
                except ValueError:
                    continue
    return found


def read_case(path: Path) -> CaseInfo:
    constants = _constants(path)
    missing = [key for key in REQUIRED if key not in constants]
    if missing:
        raise UsageError(f"case file {path.name} lacks {', '.join(missing)} (see cases/README.md)")
    ranges = constants["SIZE_SPACE"]
    anchors = constants["ANCHORS"]
    if not all(isinstance(v, tuple) and len(v) == 2 and v[0] <= v[1] for v in ranges.values()):
        raise UsageError(f"case file {path.name}: SIZE_SPACE values must be (low, high) integer ranges")
    if not all(isinstance(a, dict) and set(a) == set(ranges) for a in anchors):
        raise UsageError(f"case file {path.name}: every ANCHORS entry must give each size in SIZE_SPACE")
    return CaseInfo(
        name=path.stem,
        path=path,
        claim=constants["CLAIM"],
        discussion=constants["DISCUSSION"],
        space=SizeSpace(dict(ranges), dict(constants.get("COST", {}))),
        anchors=list(anchors),
        min_devices=int(constants.get("MIN_DEVICES", 1)),
    )


def discover(cases_dir: Path = DEFAULT_CASES_DIR) -> dict[str, CaseInfo]:
    if not cases_dir.is_dir():
        raise UsageError(f"cases folder not found: {cases_dir}")
    paths = sorted(p for p in cases_dir.glob("*.py") if p.stem not in NOT_CASES and not p.stem.startswith("_"))
    return {p.stem: read_case(p) for p in paths}


def select(catalogue: dict[str, CaseInfo], names: Sequence[str]) -> list[CaseInfo]:
    if not names:
        return list(catalogue.values())
    unknown = [n for n in names if n not in catalogue]
    if unknown:
        known = ", ".join(catalogue) or "none"
        raise UsageError(f"unknown case {', '.join(unknown)!s}; known cases: {known}")
    return [catalogue[n] for n in dict.fromkeys(names)]


def parse_size(text: str) -> tuple[str, int]:
    key, sep, value = text.partition("=")
    if not sep or not key.isidentifier():
        raise UsageError(f"malformed size {text!r}: expected NAME=INTEGER, e.g. N=1000")
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"malformed size {text!r}: {value!r} is not an integer") from None
    if number <= 0:
        raise UsageError(f"malformed size {text!r}: sizes must be positive")
    return key, number


def check_overrides(cases: Sequence[CaseInfo], overrides: dict[str, int]) -> None:
    known = {name for case in cases for name in case.space.ranges}
    unknown = set(overrides) - known
    if unknown:
        raise UsageError(
            f"no selected case has size {', '.join(sorted(unknown))}; their sizes: {', '.join(sorted(known)) or 'none'}"
        )
