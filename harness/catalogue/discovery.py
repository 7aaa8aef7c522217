"""Discover and select cases without importing them: constants read with ``ast`` let the parent plan
cases without a JAX import; only the child process imports a case.  A case's outline (``outline``)
is read so too: its programs and jitted functions, named by the keys of the dicts ``programs()`` and
``compiled()`` return (a literal, or a variable filled by assignments; a key built at run time is
shown as a pattern, ``named_d<n>``), and its verdict.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.catalogue import sizes
from harness.catalogue.sizes import Budget, PlannedPoint, SizePoint, SizeSpace, SourceRun
from harness.catalogue.subjects import CASE_MODULE, Subject
from harness.errors import UsageError
from harness.names import SIZE_NAME, name_problem
from harness.pins import ACCELERATOR, HOST
from harness.store.files import DocumentProblem, read_bounded

DEFAULT_CASES_DIR = Path(__file__).resolve().parents[2] / "cases"
NOT_CASES = {"__init__", "compat"}
EFFORTS = ("quick", "full")
REQUIRED = ("CLAIM", "SOURCE", "SIZE_SPACE", "ANCHORS")
# Constants an older harness read, and what replaced them.
RENAMED = {"DISCUSSION": "SOURCE", "GPU_ANCHORS": "ACCELERATOR_ANCHORS"}


@dataclass(frozen=True)
class CaseInfo:
    name: str
    path: Path
    claim: str
    source: str  # the upstream thread: its URL, or its title where no URL is known
    space: SizeSpace
    anchors: list[SizePoint] = field(default_factory=list)  # quick on a host (CPU) profile
    # quick on an accelerator (GPU, TPU) profile; None: the anchors
    accelerator_anchors: list[SizePoint] | None = None
    source_runs: tuple[SourceRun, ...] = ()  # the discussion's own runs, as it gave them
    min_devices: int = 1
    devices_used: int | None = None  # the most devices its programs use; None: as many as there are
    # The devices its claim is about, where it also runs on more (options its verdict does not
    # read): the main command measures it only under profiles with that many; None: every profile it
    # runs under.
    claim_devices: int | None = None
    # a case module at sizes, or a plain script run as ``python FILE``
    subject: Subject = CASE_MODULE

    def anchors_for(self, device: str) -> list[SizePoint]:
        """The quick sizes of a profile of the ``device`` class (``pins.Profile.device``)."""
        if device == ACCELERATOR and self.accelerator_anchors is not None:
            return self.accelerator_anchors
        return self.anchors

    def plan(
        self,
        effort: str,
        overrides: dict[str, int],
        *,
        seed: int,
        budget: Budget,
        device: str = HOST,
    ) -> list[PlannedPoint]:
        anchors = self.anchors_for(device)
        return sizes.plan(self.space, anchors, effort, overrides, seed=seed, budget=budget)

    def source_figure(self, point: Mapping[str, int]) -> str:
        """What the discussion printed at ``point``, where it ran at exactly those sizes, or ""."""
        return "; ".join(run.said() for run in self.source_runs if run.sizes == dict(point))


# The constants the harness reads from a case file, with the type each must have.
CONSTANTS = {
    "CLAIM": "a string",
    "SOURCE": "one line: the public thread's URL (https://…), or its title where no URL is known",
    "SIZE_SPACE": 'a dict of size name to (low, high) integers, e.g. {"N": (16, 2048)}',
    "ANCHORS": 'a list of dicts giving every size, e.g. [{"N": 1000}]',
    "ACCELERATOR_ANCHORS": 'a list of dicts giving every size, e.g. [{"N": 10000}]',
    "SOURCE_RUNS": (
        'a list of the discussion\'s runs, each {"sizes": {"N": 10000}, "call": "test1(10_000)", '
        '"device": "the poster\'s GPU", "printed": "t1 = 0.001s"} (every value a string but sizes)'
    ),
    "COST": 'a dict of "bytes"/"flops" to arithmetic over the sizes, e.g. {"flops": "2 * N ** 3"}',
    "MIN_DEVICES": "a positive integer",
    "DEVICES_USED": "a positive integer",
    "CLAIM_DEVICES": "a positive integer",
}


class Catalogue(dict[str, "CaseInfo"]):
    """The readable cases by name; ``broken`` names each case file that cannot be read, and why."""

    def __init__(self, cases: dict[str, CaseInfo], broken: dict[str, str]) -> None:
        super().__init__(cases)
        self.broken = broken


# How a case file is read as text (to export it): as Python does, a UTF-8 BOM dropped.
SOURCE_ENCODING = "utf-8-sig"
# The largest case is under 6 kB: a file over this is no case, and parsing it could exhaust memory.
MAX_CASE_BYTES = 256 * 1024


def _source(path: Path) -> bytes:
    """The case file's bytes; UsageError for a FIFO or device (it would hang) or a huge file."""
    try:
        return read_bounded(path, limit=MAX_CASE_BYTES)
    except DocumentProblem as exc:
        raise UsageError(f"case file {path.name} is {exc}") from None
    except OSError as exc:
        raise UsageError(f"case file {path.name} cannot be read: {exc.strerror or exc}") from None


def case_tree(path: Path) -> ast.Module:
    """The case file parsed, never imported; UsageError naming it."""
    try:
        # Bytes, as Python reads a module: a UTF-8 byte order mark or a coding line is honoured.
        return ast.parse(_source(path), filename=str(path))
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        raise UsageError(f"case file {path.name} does not parse: {exc.msg}{where}") from None
    except (RecursionError, MemoryError):
        raise UsageError(f"case file {path.name} is too deeply nested to parse") from None
    except ValueError as exc:  # e.g. a NUL byte
        raise UsageError(f"case file {path.name} cannot be read: {exc}") from None


def _constants(path: Path) -> dict[str, Any]:
    """The case's constants, read without importing it; UsageError naming file and constant."""
    found: dict[str, Any] = {}
    for node in case_tree(path).body:
        name, value = _assigned(node)
        if name is None or value is None:
            continue
        if name in RENAMED:
            found[name] = None  # noted only to say what replaced it
            continue
        if name not in CONSTANTS:
            continue
        try:
            found[name] = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise UsageError(
                f"case file {path.name}: {name} is not a literal ({_shown(value)}); the harness "
                "reads a case's constants without importing it, so they must be literals only (no "
                f"names, calls or arithmetic: 1048576, not 2**20): {name} must be {CONSTANTS[name]}"
            ) from None
    return found


def _assigned(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    """The name and value of a top-level ``NAME = value`` or ``NAME: type = value``."""
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    ):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    return None, None


def _shown(value: ast.expr) -> str:
    try:
        return ast.unparse(value)[:80]
    except (RecursionError, MemoryError):  # a tree too deep to print is shown by its start only
        return f"an expression too deeply nested to show, line {value.lineno}"


SOURCE_URL = re.compile(r"https://\S+")
MAX_SIZE = 10**12 - 1  # as on the command line (SIZE_VALUE): twelve digits


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return _is_int(value) and 0 < value <= MAX_SIZE


# What an optional constant counts as where a case leaves it out, for its checks.
OPTIONAL: dict[str, Any] = {"ACCELERATOR_ANCHORS": [], "SOURCE_RUNS": [], "COST": {}}
COUNTS = ("MIN_DEVICES", "DEVICES_USED", "CLAIM_DEVICES")
OPTIONAL |= dict.fromkeys(COUNTS, 1)


def _problem(constants: dict[str, Any]) -> str | None:
    """Which constant has the wrong form, or None."""
    given = OPTIONAL | constants
    ranges, source, cost = given["SIZE_SPACE"], given["SOURCE"], given["COST"]
    checks = {
        "CLAIM": isinstance(given["CLAIM"], str),
        # one line; a URL an https:// one without spaces
        "SOURCE": _is_line(source) and ("://" not in source or SOURCE_URL.fullmatch(source)),
        "SIZE_SPACE": isinstance(ranges, dict)
        and all(
            isinstance(k, str)
            and not name_problem(k, SIZE_NAME)
            and isinstance(v, tuple)
            and len(v) == 2
            and all(_is_int(x) for x in v)
            and 0 < v[0] <= v[1] <= MAX_SIZE
            for k, v in ranges.items()
        ),
        "ANCHORS": _is_points(given["ANCHORS"]),
        "ACCELERATOR_ANCHORS": _is_points(given["ACCELERATOR_ANCHORS"]),
        "SOURCE_RUNS": _is_source_runs(given["SOURCE_RUNS"]),
        "COST": isinstance(cost, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in cost.items()),
        **{name: _is_count(given[name]) for name in COUNTS},
    }
    wrong = next((name for name, ok in checks.items() if not ok), None)
    if wrong:
        return f"{wrong} must be {CONSTANTS[wrong]}"
    points = {name: given[name] for name in ("ANCHORS", "ACCELERATOR_ANCHORS")}
    points["SOURCE_RUNS"] = [run["sizes"] for run in given["SOURCE_RUNS"]]
    for constant, entries in points.items():
        problem = _points_problem(constant, entries, ranges)
        if problem:
            return problem
    return _cost_problem(cost, ranges, [p for e in points.values() for p in e])


def _is_points(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(a, dict) and all(_is_int(x) for x in a.values()) for a in value
    )


SOURCE_RUN_TEXTS = ("call", "device", "printed")


def _is_source_runs(value: Any) -> bool:
    return (
        isinstance(value, list)
        and all(isinstance(run, dict) and set(run) == {"sizes", *SOURCE_RUN_TEXTS} for run in value)
        and _is_points([run["sizes"] for run in value])
        and all(_is_line(run[key]) for run in value for key in SOURCE_RUN_TEXTS)
    )


def _is_line(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip()) and "\n" not in value


def _points_problem(
    constant: str, points: list[SizePoint], ranges: dict[str, tuple[int, int]]
) -> str | None:
    """An entry of ``constant`` that does not give each size, or leaves a size's range."""
    if not all(set(a) == set(ranges) for a in points):
        return f"every {constant} entry must give each size in SIZE_SPACE"
    for point in points:
        for name, value in point.items():
            low, high = ranges[name]
            if not low <= value <= high:
                entry = f"{constant} entry {_point_text(point)}"
                return f"{entry}: {name} leaves its SIZE_SPACE range [{low}, {high}]"
    return None


def _cost_problem(
    cost: dict[str, str], ranges: dict[str, tuple[int, int]], anchors: list[SizePoint]
) -> str | None:
    """A COST formula that does not parse, or fails (divides by zero, overflows) at an anchor or a
    corner of the space: found here, to set the case aside, not fail every case's plan."""
    lowest = {name: low for name, (low, _) in ranges.items()}
    highest = {name: high for name, (_, high) in ranges.items()}
    for kind, expression in cost.items():
        for point in [*anchors, lowest, highest]:
            try:
                sizes.evaluate_cost(expression, point)
            except UsageError as exc:
                return f"COST[{kind!r}]: {exc}"
    return None


def _point_text(point: SizePoint) -> str:
    # A size too large for any range is shown by its length: Python refuses str() of 5000 digits.
    return " ".join(
        f"{k}={v}" if abs(v) < 10**15 else f"{k}=<{v.bit_length()}-bit number>"
        for k, v in point.items()
    )


def read_case(path: Path) -> CaseInfo:
    problem = name_problem(path.stem)
    if problem:
        raise UsageError(f"case file {path.name}: its name {problem}")
    constants = _constants(path)
    missing = [key for key in REQUIRED if key not in constants]
    if missing:
        renamed = [f"{o} is now {n}" for o, n in RENAMED.items() if n in missing and o in constants]
        lacks, hint = ", ".join(missing), f"; {', '.join(renamed)}" if renamed else ""
        raise UsageError(f"case file {path.name} lacks {lacks} (see cases/README.md){hint}")
    # an optional constant under its old name would be quietly dropped: its sizes never run
    for old, new in RENAMED.items():
        if new not in REQUIRED and old in constants:
            raise UsageError(f"case file {path.name}: {old} is now {new} (see cases/README.md)")
    problem = _problem(constants)
    if problem:
        raise UsageError(f"case file {path.name}: {problem}")
    return CaseInfo(
        name=path.stem,
        path=path,
        claim=constants["CLAIM"],
        source=constants["SOURCE"],
        space=SizeSpace(dict(constants["SIZE_SPACE"]), dict(constants.get("COST", {}))),
        anchors=list(constants["ANCHORS"]),
        accelerator_anchors=(
            list(constants["ACCELERATOR_ANCHORS"]) if "ACCELERATOR_ANCHORS" in constants else None
        ),
        source_runs=tuple(SourceRun(**run) for run in constants.get("SOURCE_RUNS", [])),
        min_devices=int(constants.get("MIN_DEVICES", 1)),
        devices_used=None if "DEVICES_USED" not in constants else int(constants["DEVICES_USED"]),
        claim_devices=None if "CLAIM_DEVICES" not in constants else int(constants["CLAIM_DEVICES"]),
    )


def discover(cases_dir: Path = DEFAULT_CASES_DIR) -> Catalogue:
    """Every case file in ``cases_dir``; one that cannot be read is set aside with the reason, so a
    broken new case never stops the others."""
    if not cases_dir.is_dir():
        raise UsageError(f"cases folder not found: {cases_dir}")
    paths = sorted(
        p for p in cases_dir.glob("*.py") if p.stem not in NOT_CASES and not p.stem.startswith("_")
    )
    cases, broken = {}, {}
    for path in paths:
        try:
            cases[path.stem] = read_case(path)
        except UsageError as exc:
            broken[path.stem] = str(exc)
    return Catalogue(cases, broken)


def select(catalogue: Catalogue, names: Sequence[str]) -> list[CaseInfo]:
    for name in names:
        if name in catalogue.broken:
            raise UsageError(catalogue.broken[name])
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
        raise UsageError(
            f"malformed size {text[:60]!r}: the value must be a whole number of at most 12 digits"
        )
    number = int(value)
    if number <= 0:
        raise UsageError(f"malformed size {text!r}: sizes must be positive")
    return key, number


def parse_sizes(texts: Sequence[str]) -> dict[str, int]:
    """``--size`` options as a dict; a size given twice is refused, not the last one taken."""
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
        asked, theirs = ", ".join(sorted(unknown)), ", ".join(sorted(known)) or "none"
        raise UsageError(f"no selected case has size {asked}; their sizes: {theirs}")
    for case in cases:
        for name, value in sorted(overrides.items()):
            if name in case.space.ranges:
                low, high = case.space.ranges[name]
                if not low <= value <= high:
                    raise UsageError(
                        f"size {name}={value} leaves {case.name}'s range [{low}, {high}] for {name}"
                    )


def anchor_sizes(
    case: CaseInfo, overrides: Mapping[str, int], device: str = HOST
) -> dict[str, int]:
    """The case's first anchor for the ``device`` class with ``overrides`` (unknown refused)."""
    check_overrides([case], dict(overrides))
    anchors = case.anchors_for(device)
    return {**anchors[0], **overrides} if anchors else dict(overrides)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass(frozen=True)
class CaseOutline:
    programs: list[str]  # names, or patterns with <expression> where the name is built at run time
    compiled: list[str]
    verdict_takes_sizes: bool  # verdict(medians, **sizes) rather than verdict(medians)
    has_facts: bool

    @property
    def patterned(self) -> bool:
        return any("<" in name for name in (*self.programs, *self.compiled))


def outline(path: Path) -> CaseOutline:
    """The outline of the case file at ``path``; UsageError when it cannot be read or parsed."""
    tree = case_tree(path)
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    args = functions["verdict"].args if "verdict" in functions else None
    return CaseOutline(
        programs=_returned_keys(functions["programs"]) if "programs" in functions else [],
        compiled=_returned_keys(functions["compiled"]) if "compiled" in functions else [],
        # As ``timing.judge_claim`` decides: a parameter beyond the medians, or ``**sizes``.
        verdict_takes_sizes=args is not None
        and (len([*args.posonlyargs, *args.args, *args.kwonlyargs]) > 1 or args.kwarg is not None),
        has_facts="facts" in functions,
    )


def _own_nodes(function: ast.FunctionDef) -> Iterator[ast.AST]:
    """Every node of the function's body outside nested functions, lambdas and classes."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop(0)
        yield node
        if not isinstance(node, _SCOPES):
            pending.extend(ast.iter_child_nodes(node))


def _returned_keys(function: ast.FunctionDef) -> list[str]:
    nodes = sorted(
        (node for node in _own_nodes(function) if isinstance(node, ast.Return | ast.Assign)),
        key=lambda node: (node.lineno, node.col_offset),
    )
    keys: list[ast.expr | None] = []
    variables = set()
    for node in nodes:
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Dict):
            keys.extend(node.value.keys)
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
            variables.add(node.value.id)
    for node in nodes:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if (
                isinstance(target, ast.Name)
                and target.id in variables
                and isinstance(node.value, ast.Dict)
            ):
                keys.extend(node.value.keys)
            elif (
                isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
                and target.value.id in variables
            ):
                keys.append(target.slice)
    return list(dict.fromkeys(_key_text(key) for key in keys))


def _key_text(key: ast.expr | None) -> str:
    if key is None:  # {**other}
        return "<…>"
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value
    if isinstance(key, ast.JoinedStr):
        return "".join(
            str(part.value) if isinstance(part, ast.Constant) else f"<{ast.unparse(part.value)}>"
            for part in key.values
            if isinstance(part, ast.Constant | ast.FormattedValue)
        )
    return f"<{ast.unparse(key)}>"
