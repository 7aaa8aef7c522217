"""Problem sizes: the same on every release, and searchable with hypothesis.

A case declares a size *space*, *anchor* points (``ANCHORS`` scaled to two CPU cores,
``ACCELERATOR_ANCHORS`` the discussion's own sizes) and a *cost* in bytes and flops.  ``quick`` runs
the anchors; ``full`` adds points hypothesis draws from ``seed`` (recorded), so every release
measures the same sizes; command-line sizes win; a point over the budget is refused before anything
is allocated.  Hypothesis is imported where used: the noxfile validates command lines without it.
"""

from __future__ import annotations

import ast
import contextlib
import math
import operator
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.errors import UsageError
from harness.host.environment import meminfo_bytes
from harness.pins import ACCELERATOR, HOST
from harness.units import format_bytes

SizePoint = dict[str, int]
DEFAULT_SEED = 20241129
FULL_DRAWS = 6
DEFAULT_FLOPS_PER_CALL = 5e11  # a few seconds per sample on a 2-core machine
# By the device class of a profile (``harness.pins.Profile.device``): an accelerator takes a second
# or two for what a 2-core CPU takes minutes (the discussion's test1(10_000), 1.6e13 flops, in
# 0.14 s on its GPU, 0.05 s on a TPU v5e): the discussions' own sizes fit, the largest 3.2e13.
FLOPS_PER_CALL = {HOST: DEFAULT_FLOPS_PER_CALL, ACCELERATOR: 1e14}

_OPERATORS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
}


# A cost formula is a line of arithmetic; one longer than this is no formula (and its tree could be
# deep enough to exhaust the parser).
MAX_COST_CHARS = 500


def evaluate_cost(expression: str, sizes: Mapping[str, int]) -> float:
    """A cost expression such as ``"4 * M * N * N"``, evaluated safely in floating point (``9 ** 9
    ** 9`` overflows at once instead of computing an integer of millions of digits); UsageError for
    one that divides by zero, overflows or is not finite and non-negative."""
    tree = _cost_tree(expression, list(sizes))

    def walk(node: ast.AST) -> float:  # a node ``_cost_tree`` allows
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.Name):
            return float(sizes[node.id])
        if isinstance(node, ast.BinOp):
            return _OPERATORS[type(node.op)](walk(node.left), walk(node.right))
        assert isinstance(node, ast.UnaryOp)
        return _OPERATORS[type(node.op)](walk(node.operand))

    def refused(why: str) -> UsageError:  # worded only on refusal: a size search calls this often
        return UsageError(f"cost expression {expression!r} at {_sizes_text(sizes)}{why}")

    try:
        value = walk(tree)
    except (ZeroDivisionError, OverflowError) as exc:
        what = "divides by zero" if isinstance(exc, ZeroDivisionError) else "overflows"
        raise refused(f": it {what}") from None
    # A negative number to a fractional power is complex; inf and nan compare with no budget.
    if not isinstance(value, float) or not math.isfinite(value) or value < 0:
        raise refused(f" is {value}, not a finite cost")
    return value


def _cost_tree(expression: str, names: Sequence[str]) -> ast.Expression:
    """The formula parsed, every node of it arithmetic on numbers and the sizes ``names``."""
    cut = f"cost expression {expression[:40]!r}…"
    if len(expression) > MAX_COST_CHARS:
        raise UsageError(f"{cut} is over {MAX_COST_CHARS} characters")
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:  # also a literal of more digits than Python converts
        raise UsageError(f"cost expression {expression!r} does not parse: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError):
        raise UsageError(f"{cut} is too deeply nested to parse") from None
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Load)
    for node in ast.walk(tree):
        value = node.value if isinstance(node, ast.Constant) else 0
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not isinstance(node, (*allowed, *_OPERATORS)) or not number:
            only = "only numbers, sizes and + - * / // ** are allowed"
            raise UsageError(f"cost expression {expression[:80]!r}: {only}")
        if isinstance(node, ast.Name) and node.id not in names:
            raise UsageError(f"cost expression {expression[:80]!r} uses unknown size {node.id}")
    return tree


def _sizes_text(sizes: Mapping[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(sizes.items())) or "no sizes"


_UNITS = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "kb": 1e3, "mb": 1e6, "gb": 1e9}
_UNITS |= {"tb": 1e12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_QUANTITY = re.compile(r"(\d+(?:\.\d*)?(?:e[+-]?\d+)?)\s*([a-z]*)")


def parse_quantity(text: str) -> float:
    """``8GiB``, ``500M``, ``2e11``: a positive number with an optional decimal or binary unit."""
    match = _QUANTITY.fullmatch(text.strip().lower())
    if not match or match.group(2) not in _UNITS or float(match.group(1)) <= 0:
        raise UsageError(f"malformed quantity {text[:40]!r}: expected e.g. 8GiB, 500M or 2e11")
    value = float(match.group(1)) * _UNITS[match.group(2)]
    # "1e400": a budget of infinity is no budget, say so rather than accept it
    if not math.isfinite(value):
        raise UsageError(f"malformed quantity {text[:40]!r}: too large to be a number")
    return value


@dataclass(frozen=True)
class Budget:
    """Upper bounds on a case run's estimated cost; missing bounds are unlimited."""

    limits: dict[str, float] = field(default_factory=dict)

    @classmethod
    def for_this_machine(cls, overrides: Sequence[str] = (), device: str = HOST) -> Budget:
        """Half the memory available here, and the flops per call of the ``device`` class."""
        limits: dict[str, float] = {"flops": FLOPS_PER_CALL.get(device, DEFAULT_FLOPS_PER_CALL)}
        memory = meminfo_bytes("MemAvailable")
        if memory is None:
            with contextlib.suppress(ValueError, OSError, AttributeError):
                memory = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        if memory:
            limits["bytes"] = memory / 2  # leave room for XLA's temporaries and copies
        given: set[str] = set()
        for text in overrides:
            kind, sep, value = text.partition("=")
            aliases = {"memory": "bytes", "mem": "bytes", "bytes": "bytes", "flops": "flops"}
            if not sep or kind not in aliases:
                raise UsageError(f"malformed budget {text!r}: expected memory=8GiB or flops=2e11")
            if aliases[kind] in given:  # the last would quietly win: say which one is meant
                raise UsageError(f"--budget {kind}: given more than once; give each kind once")
            given.add(aliases[kind])
            limits[aliases[kind]] = parse_quantity(value)
        return cls(limits)

    def refusal(self, cost: Mapping[str, float]) -> str | None:
        """Why a point with this cost may not run, or None when it fits."""
        for kind, limit in sorted(self.limits.items()):
            if kind in cost and cost[kind] > limit:
                needs, most = format_quantity(kind, cost[kind]), format_quantity(kind, limit)
                return f"over budget: needs {needs}, budget {most}"
        return None

    def as_dict(self) -> dict[str, float]:
        return dict(self.limits)


def format_quantity(kind: str, value: float) -> str:
    return format_bytes(value) if kind == "bytes" else f"{value:.3g} {kind}"


@dataclass(frozen=True)
class SizeSpace:
    ranges: dict[str, tuple[int, int]]
    cost: dict[str, str] = field(default_factory=dict)

    def fixed(self, values: Mapping[str, int]) -> SizeSpace:
        """The sub-space with some sizes pinned, e.g. to search M at a given N."""
        pinned = {name: (value, value) for name, value in values.items() if name in self.ranges}
        return SizeSpace({**self.ranges, **pinned}, self.cost)

    def cost_of(self, point: Mapping[str, int]) -> dict[str, float]:
        """Each kind the formulas give at ``point``; one that fails is left out (refused)."""
        cost = {}
        for kind, expression in self.cost.items():
            with contextlib.suppress(UsageError):
                cost[kind] = evaluate_cost(expression, point)
        return cost

    def refusal(self, point: Mapping[str, int], budget: Budget) -> str | None:
        """Why ``point`` may not run (a formula failing, over the budget); None when it may."""
        try:
            cost = {kind: evaluate_cost(formula, point) for kind, formula in self.cost.items()}
        except UsageError as exc:
            return f"its cost cannot be estimated: {exc}"
        return budget.refusal(cost)

    def strategy(self, budget: Budget, *, log_spaced: bool = True) -> Any:
        """Size dicts inside the ranges and budget: log-spaced to draw, plain integers to search, so
        that shrinking reaches the exact smallest failing size."""

        from hypothesis import strategies as st

        def make(lo: int, hi: int) -> Any:
            # Log-spaced past a factor 16: sizes matter by order of magnitude and hypothesis
            # favours small values, while shrinking still goes towards ``lo``.
            if not log_spaced or lo <= 0 or hi / lo < 16:
                return st.integers(lo, hi)
            return st.integers(0, LOG_STEPS).map(
                lambda step: min(hi, max(lo, round(lo * (hi / lo) ** (step / LOG_STEPS))))
            )

        points = st.fixed_dictionaries(
            {name: make(lo, hi) for name, (lo, hi) in sorted(self.ranges.items())}
        )
        return points.filter(lambda point: self.refusal(point, budget) is None)


LOG_STEPS = 1000


def draw(space: SizeSpace, budget: Budget, count: int, seed: int) -> list[SizePoint]:
    """``count`` distinct points, the same for the same seed in any process (``@seed``)."""

    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fix_seed

    found: list[SizePoint] = []

    @fix_seed(seed)
    @settings(
        max_examples=count * 20,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(space.strategy(budget))
    def collect(point: SizePoint) -> None:
        if point not in found and len(found) < count:
            found.append(dict(point))

    collect()
    return found


@dataclass(frozen=True)
class SourceRun:
    """One run of the case's discussion, as the discussion gave it: its sizes, the call the user
    made, the device it ran on and what it printed (quoted, never computed)."""

    sizes: SizePoint
    call: str
    device: str
    printed: str

    def said(self) -> str:
        """``test1(10_000) on the poster's GPU: t1 = 0.001s, t2 = 0.137s``."""
        return f"{self.call} on {self.device}: {self.printed}"


@dataclass(frozen=True)
class PlannedPoint:
    sizes: SizePoint
    source: str  # "anchor", "drawn", "explicit"
    refusal: str | None = None


def plan(
    space: SizeSpace,
    anchors: Sequence[SizePoint],
    effort: str,
    overrides: Mapping[str, int],
    *,
    seed: int,
    budget: Budget,
    draws: int = FULL_DRAWS,
) -> list[PlannedPoint]:
    points: list[tuple[SizePoint, str]] = [(dict(a), "anchor") for a in anchors]
    if effort == "full" and space.ranges:
        points += [(p, "drawn") for p in draw(space, budget, draws, seed)]
    if overrides:
        points = [
            ({**p, **{k: v for k, v in overrides.items() if k in p}}, "explicit") for p, _ in points
        ]
    planned: list[PlannedPoint] = []
    for point, source in points:
        if any(p.sizes == point for p in planned):
            continue
        planned.append(PlannedPoint(point, source, space.refusal(point, budget)))
    return planned
