"""Export a case as a standalone script for an upstream issue: the case's own code at chosen sizes.

One source of truth: the script is assembled from the case module, the ``cases.compat`` helpers it
uses, ``harness.measure.timing`` and ``harness.upstream.standalone`` (stdlib-only for this
purpose), inlined definition by definition (``compat.name`` becomes ``name``, imports hoisted), with
a generated tail of literals that calls ``standalone.main``.  The result is checked before it is
returned: it compiles, imports only jax, numpy and the standard library, and uses no name it does
not define; a case that cannot be inlined is refused with a ``UsageError`` naming the reason.
"""

from __future__ import annotations

import ast
import builtins
import json
import symtable
import sys
import textwrap
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.catalogue.discovery import SOURCE_ENCODING, CaseInfo
from harness.errors import UsageError
from harness.units import sizes_text

HARNESS_DIR = Path(__file__).resolve().parents[1]
COMPAT = "cases.compat"
# Modules a script may inline; cases.compat is the one next to the case file.
HARNESS_MODULES = {
    "harness.measure.figures": HARNESS_DIR / "measure" / "figures.py",
    "harness.measure.timing": HARNESS_DIR / "measure" / "timing.py",
    "harness.upstream.standalone": HARNESS_DIR / "upstream" / "standalone.py",
}
OWN_PACKAGES = ("cases", "harness")
THIRD_PARTY = ("jax", "numpy")
MODULE_DUNDERS = {
    f"__{n}__" for n in ("name", "file", "doc", "spec", "loader", "package", "builtins")
}
TAIL = "<measurement>"  # the generated end of the script
CASE_MODULE = "exported_case"  # the case module, as the short script's generated end imports it
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
DEFINITIONS = (*SCOPES, ast.Assign, ast.AnnAssign)

# (module, name, asname) of ``from module import name as asname``; (module, None, asname): import.
ImportUnit = tuple[str, str | None, str | None]


class _Refused(Exception):
    """An export problem, turned into a UsageError naming the case."""


def export_script(case: CaseInfo, sizes: Mapping[str, int], settings: Mapping[str, Any]) -> str:
    """The standalone script of ``case`` at ``sizes``, timed with ``Settings.for_child``'s."""
    paths = {COMPAT: case.path.parent / "compat.py", **HARNESS_MODULES}

    def load(name: str) -> _Module:
        if not paths[name].is_file():
            raise _Refused(f"it imports {name}, but there is no {_label(paths[name])}")
        return _Module.parse(name, _label(paths[name]), _source(paths[name]), inlinable=set(paths))

    try:
        root = _Module.parse(case.name, _label(case.path), _source(case.path), set(paths))
        bound = set().union(*(s.binds for s in root.statements))
        missing = [name for name in ("programs", "verdict") if name not in bound]
        if missing:
            raise _Refused(f"it defines no {' or '.join(missing)}() (see cases/README.md)")
        tail = _Module.parse(TAIL, TAIL, _tail_source(sizes, settings, bound), set(paths))
        docstring = _script_docstring(root.docstring or "", case, sizes)
        text = _assemble(docstring, _resolve([root, tail], load))
        if problem := script_problem(text, case.path.stem):
            raise _Refused(problem)
    except _Refused as exc:
        raise UsageError(f"cannot export case {case.name}: {exc}") from None
    return text


def _source(path: Path) -> str:
    return path.read_text(encoding=SOURCE_ENCODING)  # a byte order mark dropped, as Python drops it


def case_definitions(
    case: CaseInfo, wanted: Collection[str], source: str | None = None
) -> tuple[list[str], str]:
    """The case's definitions of ``wanted`` and, transitively, what they use, ``cases.compat``
    helpers inlined: the import lines (standard library, then jax and numpy) and the definitions in
    source order, as ``harness.upstream.minimal`` builds a short script from them. ``source``
    replaces the case file's text (a pruned copy of it)."""
    text = _source(case.path) if source is None else source
    compat = case.path.parent / "compat.py"

    def load(name: str) -> _Module:
        if name == CASE_MODULE:
            return _Module.parse(name, _label(case.path), text, {COMPAT})
        if not compat.is_file():
            raise _Refused(f"it imports {name}, but there is no {_label(compat)}")
        return _Module.parse(name, _label(compat), _source(compat), {COMPAT})

    try:
        root = _Module.parse(
            TAIL, TAIL, f"from {CASE_MODULE} import {', '.join(sorted(wanted))}\n", {CASE_MODULE}
        )
        parts = [part for part in _resolve([root], load) if part.module.name != TAIL]
        owners = _owners(parts)
        units = {key: unit for part in parts for key, unit in part.imports.items()}
        missing = set(wanted) - owners.keys()
        if missing:
            raise _Refused(f"it defines no {', '.join(sorted(missing))}")
    except _Refused as exc:
        raise UsageError(f"cannot export case {case.name}: {exc}") from None
    lines = [line for group in _import_groups(units) for line in group]
    return lines, "\n\n".join(part.text for part in parts if part.text)


def _tail_source(sizes: Mapping[str, int], settings: Mapping[str, Any], names: set[str]) -> str:
    # main() keyword → the case's name for it
    optional = {"compiled": "compiled", "facts": "facts", "min_devices": "MIN_DEVICES"}
    options = "".join(f", {keyword}={name}" for keyword, name in optional.items() if name in names)
    return (
        '"""The measurement: sizes and settings as exported; main() times, prints and judges."""\n'
        "from harness.upstream.standalone import main\n\n"
        f"SIZES = {dict_literal(sizes)}\n"
        f"SETTINGS = {dict_literal(settings)}\n\n"
        'if __name__ == "__main__":\n'
        f"    main(programs, verdict, sizes=SIZES, settings=SETTINGS{options})\n"
    )


def _label(path: Path) -> str:
    """``cases/scan_sync.py``: a path to show, without the folders above the package."""
    return f"{path.parent.name}/{path.name}"


def dict_literal(values: Mapping[str, Any]) -> str:
    """A literal of ``values`` whatever their keys hold (a metric's name from a stored answer is
    input): JSON's strings are Python's too."""
    return "{" + ", ".join(f"{json.dumps(key)}: {value!r}" for key, value in values.items()) + "}"


def _script_docstring(case_doc: str, case: CaseInfo, sizes: Mapping[str, int]) -> str:
    footer = (
        f"Standalone script exported by jax-repro-harness from {_label(case.path)} at sizes\n"
        f"{sizes_text(sizes)}; it imports only jax, numpy and the standard library.  Run it with\n"
        f"``python {case.path.name}``.  It prints one line\n"
        "``metric PROGRAM METRIC median=NS min=NS max=NS n=COUNT`` per figure, in nanoseconds\n"
        "(``first_call_ns`` includes compilation; after warm-up, ``dispatch_ns`` is when Python\n"
        "regained control and ``wall_ns`` when every output was ready), ``fact NAME JSON`` lines\n"
        "for the case's facts if it records any, then\n"
        "``claim holds: True|False — evidence`` for the claim:\n\n"
        f"{textwrap.fill(case.claim, width=88)}\n"
    )
    return f"{case_doc.rstrip()}\n\n{footer}"


@dataclass
class _Statement:
    node: ast.stmt
    first_line: int  # 1-based, decorators and the comment block just above included
    binds: set[str]
    uses: set[str]  # global names it reads
    needs: set[tuple[str, str]]  # (inlinable module, name) reached through ``module.name``


@dataclass
class _Module:
    name: str
    label: str
    docstring: str | None
    lines: list[str]  # source lines with ``module.name`` rewritten, line numbers unchanged
    statements: list[_Statement] = field(default_factory=list)
    dropped_lines: set[int] = field(default_factory=set)  # the docstring and the top-level imports
    imports: dict[str, ImportUnit] = field(default_factory=dict)  # key → external import
    # binding → (module, name) inlined
    links: dict[str, tuple[str, str]] = field(default_factory=dict)
    futures: set[str] = field(default_factory=set)

    @classmethod
    def parse(cls, name: str, label: str, source: str, inlinable: set[str]) -> _Module:
        try:
            tree = ast.parse(source, filename=label)
        except SyntaxError as exc:
            raise _Refused(f"{label} does not parse: {exc}") from None
        lines = source.splitlines(keepends=True)
        module = cls(name, label, ast.get_docstring(tree, clean=False), lines)
        # dotted text (``compat``, ``cases.compat``) → inlinable module
        aliases: dict[str, str] = {}
        kept: list[ast.stmt] = []
        for index, node in enumerate(tree.body):
            is_docstring = index == 0 and module.docstring is not None
            if isinstance(node, ast.Import | ast.ImportFrom):
                module._take_import(node, inlinable, aliases)
            elif not is_docstring:
                kept.append(node)
                continue
            module.dropped_lines |= set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        rewriter = _Rewriter(label, aliases)
        for node in kept:
            rewriter.needs = set()
            rewriter.visit(node)
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            while first > 1 and lines[first - 2].lstrip().startswith("#"):
                first -= 1
            module.statements.append(
                _Statement(node, first, _binds(node), _uses(node), rewriter.needs)
            )
        module.lines = rewriter.apply(lines)
        return module

    def _take_import(
        self, node: ast.Import | ast.ImportFrom, inlinable: set[str], aliases: dict[str, str]
    ) -> None:
        where = f"{self.label} line {node.lineno}"
        if isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                raise _Refused(f"{where}: relative imports cannot be inlined")
            for alias in node.names:
                binding = alias.asname or alias.name
                if source == "__future__":
                    self.futures.add(alias.name)
                elif alias.name == "*":
                    raise _Refused(f"{where}: star imports cannot be inlined")
                elif source in inlinable:
                    self.links[binding] = (source, alias.name)
                elif f"{source}.{alias.name}" in inlinable:
                    aliases[binding] = f"{source}.{alias.name}"
                elif _top(source) in OWN_PACKAGES:
                    raise _Refused(
                        f"{where}: imports {source}.{alias.name}, which a script cannot inline"
                    )
                else:
                    self.imports[binding] = (source, alias.name, alias.asname)
            return
        for alias in node.names:
            if alias.name in inlinable:
                aliases[alias.asname or alias.name] = alias.name
            elif _top(alias.name) in OWN_PACKAGES:
                raise _Refused(f"{where}: imports {alias.name}, which a script cannot inline")
            else:
                # ``import jax`` and ``import jax.numpy`` both bind ``jax``: key them apart.
                self.imports[alias.asname or alias.name] = (alias.name, None, alias.asname)

    def closure(self, wanted: set[str]) -> list[_Statement]:
        """The statements defining ``wanted`` and, transitively, the definitions they use."""
        by_name = {name: s for s in self.statements for name in s.binds}
        chosen: list[_Statement] = []
        todo = sorted(wanted)
        while todo:
            statement = by_name.get(todo.pop())
            if statement is None or statement in chosen:
                continue  # a builtin, an import or a link: resolved elsewhere
            if not isinstance(statement.node, DEFINITIONS):
                raise _Refused(
                    f"{self.label} line {statement.node.lineno}: only definitions can be inlined"
                )
            chosen.append(statement)
            todo += sorted(statement.uses)
        return sorted(chosen, key=lambda s: s.first_line)

    def definitions_text(self, statements: list[_Statement]) -> str:
        """The statements' source; neighbours in the module stay neighbours (a run of constants)."""
        text = ""
        previous_end = 0
        for s in statements:
            if text:
                text += "\n" if s.first_line == previous_end + 1 else "\n\n\n"
            text += "".join(self.lines[s.first_line - 1 : s.node.end_lineno]).rstrip()
            previous_end = s.node.end_lineno or s.node.lineno
        return text

    def whole_text(self) -> str:
        """The module minus its docstring and top-level imports, comments and layout kept."""
        kept: list[str] = []
        for number, line in enumerate(self.lines, start=1):
            blank = not line.strip()
            if number in self.dropped_lines or (
                blank and len(kept) >= 2 and not "".join(kept[-2:]).strip()
            ):
                continue
            kept.append(line)
        return "".join(kept).strip("\n")


def _binds(node: ast.stmt) -> set[str]:
    if isinstance(node, SCOPES):
        return {node.name}
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return {n.id for t in targets if t is not None for n in ast.walk(t) if isinstance(n, ast.Name)}


def _uses(node: ast.stmt) -> set[str]:
    """Global names a top-level statement reads, in its own body or in any scope inside it."""
    table = symtable.symtable(ast.unparse(node), "<statement>", "exec")
    found = {s.get_name() for s in table.get_symbols() if s.is_referenced()}
    scopes = list(table.get_children())
    while scopes:
        scope = scopes.pop()
        scopes += scope.get_children()
        found |= {s.get_name() for s in scope.get_symbols() if s.is_global() and s.is_referenced()}
    return found


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


class _Rewriter(ast.NodeVisitor):
    """Turns ``compat.name`` into ``name`` and records (module, name) as needed."""

    def __init__(self, label: str, aliases: dict[str, str]) -> None:
        self.label = label
        self.aliases = aliases
        self.roots = {_top(alias) for alias in aliases}
        self.needs: set[tuple[str, str]] = set()
        self.spans: list[tuple[int, int, int, str]] = []  # line, start byte, end byte, replacement

    def visit_Attribute(self, node: ast.Attribute) -> None:
        base = _dotted(node.value)
        if base is None or base not in self.aliases:
            self.generic_visit(node)
            return
        if (
            not isinstance(node.ctx, ast.Load)
            or node.lineno != node.end_lineno
            or node.end_col_offset is None
        ):
            raise _Refused(
                f"{self.label} line {node.lineno}: {base}.{node.attr} may only be read, on one line"
            )
        self.needs.add((self.aliases[base], node.attr))
        self.spans.append((node.lineno, node.col_offset, node.end_col_offset, node.attr))

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.roots:
            raise _Refused(
                f"{self.label} line {node.lineno}: uses module {node.id} other than as "
                f"{node.id}.NAME, so it cannot be inlined"
            )

    def apply(self, lines: list[str]) -> list[str]:
        result = list(lines)
        # ast offsets are UTF-8 byte offsets; replace right to left so earlier ones stay valid.
        for line, start, end, text in sorted(self.spans, reverse=True):
            raw = result[line - 1].encode()
            result[line - 1] = (raw[:start] + text.encode() + raw[end:]).decode()
        return result


@dataclass
class _Part:
    module: _Module
    text: str
    binds: set[str]
    imports: dict[str, ImportUnit]
    opens_with_definition: bool


def _resolve(roots: list[_Module], load: Callable[[str], _Module]) -> list[_Part]:
    """Each module's part of the script, every module after the modules it uses."""
    modules = {root.name: root for root in roots}
    wanted: dict[str, set[str]] = {}  # library module → names the script needs from it

    def chosen(module: _Module) -> tuple[list[_Statement], set[str]]:
        """The statements of the module in the script, and the global names they read."""
        if module.name in wanted:
            statements = module.closure(wanted[module.name])
            return statements, set().union(wanted[module.name], *(s.uses for s in statements))
        return module.statements, set(module.links).union(*(s.uses for s in module.statements))

    def needs(module: _Module) -> set[tuple[str, str]]:
        statements, used = chosen(module)
        return set().union(*(s.needs for s in statements)) | {
            module.links[n] for n in used if n in module.links
        }

    todo = [need for root in roots for need in sorted(needs(root))]
    while todo:
        name, item = todo.pop()
        if name not in modules:
            modules[name] = load(name)
        if item in wanted.setdefault(name, set()):
            continue
        wanted[name].add(item)
        todo += sorted(needs(modules[name]))

    order: list[str] = []

    def place(name: str) -> None:
        if name in order:
            return
        order.append(name)  # marks it visited; moved behind its dependencies below
        for dependency in sorted({m for m, _ in needs(modules[name])}):
            place(dependency)
        order.remove(name)
        order.append(name)

    for root in roots:
        place(root.name)

    parts = []
    for name in order:
        module = modules[name]
        statements, used = chosen(module)
        imports = {
            key: unit
            for key, unit in module.imports.items()
            if name not in wanted or _binding(unit) in used
        }
        # ``from m import f as g`` becomes ``g = f`` once f is defined.
        renames = {
            b: target for b, (_, target) in module.links.items() if b != target and b in used
        }
        body = module.definitions_text(statements) if name in wanted else module.whole_text()
        text = "\n".join([*(f"{b} = {t}" for b, t in sorted(renames.items())), body])
        binds = set(renames).union(*(s.binds for s in statements))
        opens_with_definition = (
            not renames and bool(statements) and isinstance(statements[0].node, SCOPES)
        )
        parts.append(_Part(module, text.strip("\n"), binds, imports, opens_with_definition))
    return parts


def _binding(unit: ImportUnit) -> str:
    module, name, asname = unit
    return asname or name or _top(module)


def _owners(parts: list[_Part]) -> dict[str, str]:
    """The module that defines each name of the script; two that define one are refused."""
    owners: dict[str, str] = {}
    for part in parts:
        for name in sorted(part.binds):
            if owners.setdefault(name, part.module.label) != part.module.label:
                raise _Refused(f"{part.module.label} and {owners[name]} both define {name}")
    return owners


def _import_groups(units: dict[str, ImportUnit]) -> list[list[str]]:
    """The import lines of the standard library, then of jax and numpy."""
    return [
        _import_lines([u for u in units.values() if (_top(u[0]) in THIRD_PARTY) is third_party])
        for third_party in (False, True)
    ]


def _assemble(docstring: str, parts: list[_Part]) -> str:
    owners = _owners(parts)
    units: dict[str, ImportUnit] = {}
    for part in parts:
        for key, unit in part.imports.items():
            if _binding(unit) in owners:
                raise _Refused(
                    f"{part.module.label} imports {_binding(unit)}, which {owners[_binding(unit)]} "
                    "defines"
                )
            if units.get(key, unit) != unit:
                raise _Refused(f"two modules import {key} from different places")
            units[key] = unit
    escaped = docstring.replace("\\", "\\\\").replace('"""', '\\"""')
    head = [f'"""{escaped.rstrip()}\n"""']
    futures = sorted(set().union(*(p.module.futures for p in parts)))
    if futures:
        head.append(f"from __future__ import {', '.join(futures)}")
    head += ["\n".join(group) for group in _import_groups(units) if group]
    sections = []
    for part in parts:
        if part.text:
            title = part.module.docstring.strip().splitlines()[0] if part.module.docstring else ""
            header = [] if part.module.name == TAIL else [f"# ---- {part.module.label}"]
            header += [f"# {line}" for line in textwrap.wrap(title, width=100)]
            # Laid out as ruff formats it: two blank lines between a comment and a definition.
            gap = "\n\n\n" if part.opens_with_definition else "\n\n"
            sections.append("\n".join(header) + gap + part.text)
    return "\n\n".join(head) + "\n\n" + "\n\n\n".join(sections) + "\n"


def _top(module: str) -> str:
    return module.split(".")[0]


def _import_lines(units: list[ImportUnit]) -> list[str]:
    """``import`` lines first, then ``from`` lines, each sorted (as isort does)."""
    plain = sorted({f"import {m}" + (f" as {a}" if a else "") for m, n, a in units if n is None})
    names: dict[str, set[str]] = {}
    for module, name, asname in units:
        if name is not None:
            names.setdefault(module, set()).add(name + (f" as {asname}" if asname else ""))
    return plain + [
        f"from {m} import {', '.join(sorted(found))}" for m, found in sorted(names.items())
    ]


def imported_modules(text: str) -> set[str]:
    """Top-level package of every import anywhere in ``text`` (``__future__`` included)."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found |= {_top(alias.name) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add("." if node.level else _top(node.module or ""))
    return found


def foreign_imports(text: str) -> set[str]:
    return imported_modules(text) - set(THIRD_PARTY) - sys.stdlib_module_names


def undefined_names(text: str) -> set[str]:
    """Global names the script reads but never binds (nor are builtins)."""
    table = symtable.symtable(text, "<script>", "exec")
    bound = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}
    read = {
        s.get_name()
        for s in table.get_symbols()
        if s.is_referenced() and not (s.is_assigned() or s.is_imported())
    }
    tables = list(table.get_children())
    while tables:
        scope = tables.pop()
        tables += scope.get_children()
        for symbol in scope.get_symbols():
            if symbol.is_declared_global() and symbol.is_assigned():
                bound.add(symbol.get_name())
            elif symbol.is_global() and symbol.is_referenced():
                read.add(symbol.get_name())
    return read - bound - set(dir(builtins)) - MODULE_DUNDERS


def script_problem(text: str, name: str) -> str:
    """Why a generated script is no standalone script: it does not compile, it imports more than
    jax, numpy and the standard library, or it uses a name it does not define; "" where none."""
    try:
        compile(text, f"{name}.py", "exec")
    except SyntaxError as exc:
        return f"the script does not compile ({exc}); this is a harness bug"
    if foreign := ", ".join(sorted(foreign_imports(text))):
        return f"the script would import {foreign} (only jax, numpy and the standard library)"
    undefined = ", ".join(sorted(undefined_names(text)))
    return f"the script would use undefined names: {undefined}" if undefined else ""
