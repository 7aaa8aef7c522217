"""What a case defines, read from its source without importing it: programs, jitted functions,
verdict.

Names are read from the dicts ``programs()`` and ``compiled()`` return (a literal, or a variable
filled by assignments); a key built at run time is shown as a pattern (``named_d<n>``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from harness.catalogue.discovery import case_tree

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
