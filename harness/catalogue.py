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

from harness.errors import UsageError

DEFAULT_CASES_DIR = Path(__file__).resolve().parent.parent / "cases"
NOT_CASES = {"__init__", "compat"}
EFFORTS = ("quick", "full")

SizePoint = dict[str, int]


@dataclass(frozen=True)
class CaseInfo:
    name: str
    path: Path
    claim: str
    discussion: str
    sizes: dict[str, list[SizePoint]] = field(default_factory=dict)
    min_devices: int = 1

    def size_points(self, effort: str) -> list[SizePoint]:
        return [dict(point) for point in self.sizes.get(effort, [])]


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
    found["__doc__"] = ast.get_docstring(tree) or ""
    return found


def read_case(path: Path) -> CaseInfo:
    constants = _constants(path)
    missing = [key for key in ("CLAIM", "SIZES") if key not in constants]
    if missing:
        raise UsageError(f"case file {path.name} lacks {', '.join(missing)} (see cases/README.md)")
    sizes = constants["SIZES"]
    for effort in EFFORTS:
        points = sizes.get(effort)
        if not isinstance(points, list) or not all(isinstance(p, dict) for p in points):
            raise UsageError(f"case file {path.name}: SIZES[{effort!r}] must be a list of size dicts")
    return CaseInfo(
        name=path.stem,
        path=path,
        claim=constants["CLAIM"],
        discussion=constants.get("DISCUSSION", ""),
        sizes=sizes,
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


def size_names(cases: Sequence[CaseInfo]) -> set[str]:
    return {key for case in cases for points in case.sizes.values() for point in points for key in point}


def check_overrides(cases: Sequence[CaseInfo], overrides: dict[str, int]) -> None:
    unknown = set(overrides) - size_names(cases)
    if unknown:
        known = ", ".join(sorted(size_names(cases))) or "none"
        raise UsageError(f"no selected case has size {', '.join(sorted(unknown))}; their sizes: {known}")


def plan_sizes(case: CaseInfo, effort: str, overrides: dict[str, int]) -> list[SizePoint]:
    """The size points to run: the effort's list with command-line sizes winning.

    An override applies to the points that have that size; ``check_overrides`` has
    already refused names that no selected case knows.
    """
    points = case.size_points(effort)
    merged = [{**point, **{k: v for k, v in overrides.items() if k in point}} for point in points]
    unique: list[SizePoint] = []
    for point in merged:
        if point not in unique:
            unique.append(point)
    return unique
