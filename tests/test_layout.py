"""The house's order: every harness module imports only from its own stage or the stages below it,
no two modules import each other, directly or round a longer loop (docs/layout.md,
``harness/__init__.py``), and no class grows past what a reader takes in at once."""

import ast
import re
from pathlib import Path

from tests.conftest import REPO

# Lowest first; the modules of harness/ itself that sit under everything are stage "".
STAGES = [
    "",
    "host",
    "store",
    "catalogue",
    "measure",
    "analysis",
    "install",
    "steps",
    "cli",
    "explain",
    "upstream",
    "render",
    "ci",
    "commands",
]
ON_TOP = {"harness.main", "harness.__main__"}
# A class's lines, from ``class`` to its last line; the prober, which every search goes through,
# keeps fewer.
MOST_CLASS_LINES = 200
MOST_CLASS_LINES_OF = {"harness/steps/probes.py:ReleaseProber": 150}


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def harness_imports(path: Path) -> set[str]:
    """Every harness module ``path`` imports, at any depth of its code (a module, not a name inside
    one)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("harness"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("harness"))
    return found


def modules() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in (REPO / "harness").rglob("*.py")}
    return {
        name: {m for m in harness_imports(path) if m in paths and m != name}
        for name, path in paths.items()
    }


def stage(module: str) -> int:
    parts = module.split(".")
    if module in ON_TOP:
        return len(STAGES)
    return STAGES.index(parts[1]) if len(parts) > 2 or parts[1] in STAGES else 0


def test_every_module_imports_only_from_its_stage_or_below():
    up = sorted(
        f"{name} imports {imported}"
        for name, imported_modules in modules().items()
        for imported in imported_modules
        if stage(imported) > stage(name)
        and not imported.endswith(("harness", "__init__"))
        and imported != "harness"
    )
    assert up == []


def test_no_modules_import_each_other_round_a_loop():
    graph = {
        name: {m for m in imported if m != "harness" and not name.startswith(m + ".")}
        for name, imported in modules().items()
    }
    loops = []
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for other in sorted(graph.get(name, ())):
            if state.get(other) == "open":
                loops.append(" → ".join([*path[path.index(other) :], other]))
            elif other not in state:
                visit(other, [*path, other])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert loops == []


def test_docs_layout_names_every_module_in_its_package_s_row():
    """docs/layout.md is where a reader finds a module: each is named (as `name`) in the row of its
    package."""
    rows = {}
    for line in (REPO / "docs" / "layout.md").read_text().splitlines():
        cells = line.split(" | ")
        if len(cells) >= 2 and cells[0].startswith("| `"):
            rows[cells[0][3:].rstrip("`")] = " | ".join(cells[1:])
    unnamed = []
    for path in sorted((REPO / "harness").rglob("*.py")):
        # A package's own file; main's row names `python -m harness`.
        if path.name in ("__init__.py", "__main__.py"):
            continue
        folder = path.parent.relative_to(REPO).as_posix()
        row = rows.get("harness/*.py" if folder == "harness" else f"{folder}/", "")
        if f"`{path.stem}`" not in row:
            unnamed.append(path.relative_to(REPO).as_posix())
    assert unnamed == []


def test_no_module_asks_whether_what_is_measured_is_a_script():
    """A script is a subject of its own beside a case (``harness.catalogue.subjects``): callers ask
    the subject what they need, so no module branches on ``script is None`` (the command line
    decides which subject it is, once, in ``harness.cli.options.case_from``)."""
    assert lines_matching(r"script is (not )?None") == []


def lines_matching(pattern: str) -> list[str]:
    """``path:line`` of every line of harness/ that ``pattern`` finds."""
    branch = re.compile(pattern)
    return [
        f"{path.relative_to(REPO).as_posix()}:{number}"
        for path in sorted((REPO / "harness").rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if branch.search(line)
    ]


def test_a_shape_is_asked_what_it_means_never_named_outside_analysis():
    """Each shape is one object that owns its words, its worse side, its cell, its why's kinds
    (``harness.analysis.significance.Shape``): a page asks it, so a new shape is never read as a
    cost's or a value's silently.  Naming one outside analysis/ is left to the few places that make
    a shape (a status step's ending)."""
    named = [w for w in lines_matching(r"\bShape\.") if not w.startswith("harness/analysis/")]
    assert len(named) <= 4, named


def test_how_processes_end_is_a_metric_not_a_criterion_of_its_own():
    """How the processes end is the metric ``process.end`` (``metric_names.ENDING``, spelt
    ``--status``), of shape ending: no member of ``Judged`` says it."""
    assert lines_matching(r"Judged\.STATUS") == []


def test_an_ending_is_judged_on_its_counts_by_the_shape_code_alone():
    """Bisect, triage, watch, the why and the draft judge an ending on its counts through
    ``harness.analysis.statuses``, as they judge a value by equality: the old rule of "every process
    ok beside every one dead alike" and the status criterion are read nowhere else (37 lines in 17
    files before the ending became a metric)."""
    old = r"is_status|by_status|Judged\.STATUS|all_dead_alike|\.all_ok"
    found = lines_matching(old + r"|stops_running\(|status_change\(")
    assert len(found) <= 5 and all(w.startswith("harness/analysis/") for w in found), found


def class_lengths() -> dict[str, int]:
    """Each class of harness/ (nested ones too) as ``path:name``, with its lines from ``class`` to
    its last."""
    found = {}
    for path in sorted((REPO / "harness").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                where = f"{path.relative_to(REPO).as_posix()}:{node.name}"
                found[where] = (node.end_lineno or node.lineno) - node.lineno + 1
    return found


def test_no_class_is_longer_than_its_bound():
    lengths = class_lengths()
    assert set(MOST_CLASS_LINES_OF) <= set(lengths), "a bound's class was moved or renamed"
    over = {
        where: lines
        for where, lines in lengths.items()
        if lines > MOST_CLASS_LINES_OF.get(where, MOST_CLASS_LINES)
    }
    assert over == {}


def test_the_modules_that_run_nox_are_those_the_suite_hands_out_first():
    """``tests/conftest.py``'s NOX_MODULES, the longest: a module that runs nox outside it could be
    handed out last, keeping one worker busy for minutes while the other idles."""
    from tests.conftest import NOX_MODULES

    calls = re.compile(r"\bnox_(in_repo|session|driven)\(")  # nox_driven: the installed jax-repro
    running = sorted(
        path.relative_to(REPO).as_posix()
        for path in (REPO / "tests").rglob("test_*.py")
        if calls.search(path.read_text())
    )
    assert running == sorted(NOX_MODULES)


def test_each_package_s_front_door_names_every_module_it_holds():
    """A package's ``__init__.py`` names each of its modules (as ``name``), as docs/layout.md's row
    does, or points to docs/layout.md and names none: never a list that misses the newest."""
    missing = []
    for init in sorted((REPO / "harness").glob("*/__init__.py")):
        said = ast.get_docstring(ast.parse(init.read_text())) or ""
        stems = sorted(p.stem for p in init.parent.glob("*.py") if p.name != "__init__.py")
        named = [stem for stem in stems if f"``{stem}``" in said]
        if "docs/layout.md" in said and not named:
            continue
        missing += [f"{init.parent.name}.{stem}" for stem in stems if stem not in named]
    assert missing == []


def test_harness_front_door_says_the_stages_in_the_order_the_imports_hold():
    said = " ".join((REPO / "harness" / "__init__.py").read_text().split())
    where = [said.find(f"``{stage}``") for stage in STAGES[1:]]
    assert -1 not in where, [s for s, at in zip(STAGES[1:], where, strict=True) if at == -1]
    assert where == sorted(where), "harness/__init__.py names the stages lowest first"


# A function's lines, from ``def`` to its last: what a reader takes in at once.
MOST_FUNCTION_LINES = 100


def test_no_function_is_longer_than_its_bound():
    long = []
    for path in sorted((REPO / "harness").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MOST_FUNCTION_LINES:
                    long.append(f"{path.relative_to(REPO).as_posix()}:{node.name} ({lines})")
    assert long == []
