"""The short script of an issue draft: the case's own code and a plain timing loop, nothing else.

What a maintainer reads first: the definitions ``programs()`` needs (``cases.compat`` helpers
inlined), without comments, docstrings or the case's harness metadata, only the programs asked for,
then a loop printing the exported script's two figures per program (read back by
``harness.measure.figures.parse_output``).  It is checked as the exported one is.
"""

from __future__ import annotations

import ast
import io
import json
import tokenize
from collections.abc import Collection, Mapping

from harness.catalogue.discovery import SOURCE_ENCODING, CaseInfo
from harness.errors import UsageError
from harness.upstream.export import SCOPES, case_definitions, dict_literal, script_problem

PROGRAMS_FUNCTION = "programs"
# what a short script aims at; over it, the definitions lose the blank lines between them
LINE_BUDGET = 60
# The timing loop: perf_counter_ns around the calls of a program's steps, then block_until_ready on
# their outputs; the first WARMUP calls (compilation, caches) are left out of the figures.
TIMING = """\
print(f"jax {version('jax')} jaxlib {version('jaxlib')} backend {jax.default_backend()} devices {jax.device_count()}")
for name, steps in programs(**SIZES).items():
    if name not in PROGRAMS:
        continue
    dispatch, wall = [], []  # ns until Python regains control, and until every output is ready
    for _ in range(WARMUP + REPEATS):
        start = time.perf_counter_ns()
        outputs = [f() for _, f in steps]
        dispatch.append(time.perf_counter_ns() - start)
        jax.block_until_ready(outputs)
        wall.append(time.perf_counter_ns() - start)
    for metric, ns in (("dispatch_ns", sorted(dispatch[WARMUP:])), ("wall_ns", sorted(wall[WARMUP:]))):
        print(f"metric {name} {metric} median={statistics.median(ns):.0f} min={ns[0]} max={ns[-1]} n={len(ns)}")
"""  # noqa: E501
TIMING_IMPORTS = ["import statistics", "import time", "from importlib.metadata import version"]


def minimal_script(
    case: CaseInfo,
    sizes: Mapping[str, int],
    programs: Collection[str],
    *,
    repeats: int,
    warmup: int,
) -> str:
    """The short script timing ``programs`` of ``case`` at ``sizes``; UsageError if it can't be."""
    if not programs:
        raise UsageError(f"cannot write a short script for case {case.name}: no program to time")
    source = prune_programs(case.path.read_text(encoding=SOURCE_ENCODING), set(programs))
    imports, definitions = case_definitions(case, {PROGRAMS_FUNCTION}, source)
    docstring = ast.get_docstring(ast.parse(source)) or case.name
    first_line = docstring.strip().splitlines()[0].replace('"', "'")
    head = [f'"""{first_line}"""', *_merged_imports(imports)]
    names = "[" + ", ".join(map(json.dumps, sorted(programs))) + "]"  # as ``dict_literal``'s
    settings = (
        f"SIZES, PROGRAMS, REPEATS, WARMUP = {dict_literal(sizes)}, {names}, {repeats}, {warmup}"
    )
    parts = ["\n".join(head), compact(definitions), f"{settings}\n{TIMING}"]
    text = "\n\n".join(parts)
    if len(text.splitlines()) > LINE_BUDGET:
        text = "\n\n".join([parts[0], compact(definitions, spaced=False), parts[2]])
    if problem := script_problem(text, case.name):
        raise UsageError(f"cannot write a short script for case {case.name}: {problem}")
    return text


def _merged_imports(case_imports: list[str]) -> list[str]:
    """The case's and the loop's imports: the standard library's, a blank line, jax and numpy."""
    third_party = [
        line for line in case_imports if line.split()[1].split(".")[0] in ("jax", "numpy")
    ]
    standard = set(case_imports) - set(third_party) | set(TIMING_IMPORTS)
    return [*sorted(standard, key=lambda line: (line.startswith("from "), line)), "", *third_party]


def prune_programs(source: str, keep: set[str]) -> str:
    """``source`` with ``programs()`` building only the programs in ``keep``, as far as its text
    shows. Left out, line by line: an entry of a dict literal, or an assignment to ``x[KEY]``,
    whose key (a string, or an f-string's literal parts) cannot be part of a kept program's name;
    an ``if`` left with nothing else; then, until none is left, an assignment to local names nothing
    reads. Only statements and entries on whole lines of their own go, and never the last statement
    of a block; every other line stays."""
    while True:
        lines = source.splitlines(keepends=True)
        dropped = _lines_to_drop(ast.parse(source), lines, keep)
        if not dropped:
            return source
        source = "".join(
            line for number, line in enumerate(lines, start=1) if number not in dropped
        )


def _lines_to_drop(tree: ast.Module, lines: list[str], keep: set[str]) -> set[int]:
    function = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == PROGRAMS_FUNCTION),
        None,
    )
    if function is None:
        return set()
    loaded = {
        n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }

    def droppable(statement: ast.stmt) -> bool:
        if isinstance(statement, ast.If):
            return not statement.orelse and (
                all(droppable(s) for s in statement.body) or _without_effect(statement, function)
            )
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            return False
        target = statement.targets[0]
        if isinstance(target, ast.Subscript):
            return _names_other_programs(target.slice, keep)
        names = [target] if isinstance(target, ast.Name) else getattr(target, "elts", [None])
        return all(isinstance(n, ast.Name) and n.id not in loaded for n in names)

    def whole_lines(first: ast.stmt | ast.expr, last: ast.stmt | ast.expr) -> set[int]:
        start, end = first.lineno, last.end_lineno or last.lineno
        alone = not lines[start - 1][: first.col_offset].strip()
        alone = alone and lines[end - 1][last.end_col_offset or 0 :].strip() in (",", "")
        return set(range(start, end + 1)) if alone else set()

    dropped: set[int] = set()
    for node in ast.walk(function):
        for body in (getattr(node, field, None) for field in ("body", "orelse")):
            if isinstance(body, list) and body:
                gone = [s for s in body if droppable(s)]
                if len(gone) < len(body):
                    dropped |= set().union(*(whole_lines(s, s) for s in gone))
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if (
                    key is not None
                    and _names_other_programs(key, keep)
                    and key.lineno != node.lineno
                ):
                    dropped |= whole_lines(key, value)
    return dropped


def _without_effect(block: ast.stmt, function: ast.FunctionDef) -> bool:
    """Whether nothing outside ``block`` sees it: no return, it binds only names read nowhere."""
    inside = set(map(id, ast.walk(block)))
    stored, outer_stores = set(), False
    for node in ast.walk(block):
        if isinstance(node, ast.Return | ast.Yield | ast.YieldFrom | ast.Global | ast.Nonlocal):
            return False
        if isinstance(node, ast.Subscript | ast.Attribute) and isinstance(node.ctx, ast.Store):
            outer_stores = True
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stored.add(node.id)
    read_elsewhere = {
        n.id
        for n in ast.walk(function)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and id(n) not in inside
    }
    return not outer_stores and not stored & read_elsewhere


def _names_other_programs(key: ast.expr, keep: set[str]) -> bool:
    """Whether a key, a string or an f-string, cannot be (part of) a program's name in ``keep``."""
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        parts = [key.value]
    elif isinstance(key, ast.JoinedStr):
        parts = [
            v.value for v in key.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        ]
    else:
        return False
    return not any(all(part in name for part in parts) for name in keep)


def compact(code: str, *, spaced: bool = True) -> str:
    """``code`` without comments, docstrings or blank lines, a blank line around each function or
    class if ``spaced``. A docstring that is a whole body stays, cut to its first line."""
    lines = code.splitlines()
    in_strings: set[int] = set()  # lines inside a multi-line string: kept as they are, blank or not
    for token in tokenize.generate_tokens(io.StringIO(code + "\n").readline):
        if token.type == tokenize.COMMENT:
            row, column = token.start
            lines[row - 1] = lines[row - 1][:column].rstrip()
        elif token.type == tokenize.STRING and token.end[0] > token.start[0]:
            in_strings |= set(range(token.start[0] + 1, token.end[0] + 1))
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if not isinstance(node, SCOPES):
            continue
        first = node.body[0]
        if (docstring := ast.get_docstring(node, clean=False)) is not None:
            for row in range(first.lineno, (first.end_lineno or first.lineno) + 1):
                lines[row - 1] = ""
                in_strings.discard(row)
            if len(node.body) == 1:
                summary = docstring.strip().splitlines()[0].replace('"', "'")
                lines[first.lineno - 1] = " " * first.col_offset + '"""' + summary + '"""'
    blocks: list[tuple[bool, list[str]]] = []
    for node in tree.body:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        rows = range(start, (node.end_lineno or node.lineno) + 1)
        kept = [lines[row - 1] for row in rows if lines[row - 1].strip() or row in in_strings]
        blocks.append((isinstance(node, SCOPES), kept))
    out: list[str] = []
    for index, (scope, kept) in enumerate(blocks):
        if spaced and index and (scope or blocks[index - 1][0]):
            out.append("")
        out += kept
    return "\n".join(out)
