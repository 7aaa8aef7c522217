"""Exported scripts: the case's own code, jax/numpy/stdlib imports only, runnable without the
harness."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import noxfile
from harness.catalogue import discovery
from harness.catalogue.discovery import anchor_sizes
from harness.errors import UsageError
from harness.install.venvs import uv_command
from harness.measure.figures import parse_output
from harness.store.schema import Settings
from harness.upstream import export
from tests.conftest import FIXTURES

QUICK = Settings(warmup=1, repeats=3, min_repeats=3, max_seconds=1.0).for_child()
SHIPPED = discovery.discover()
LEANS_ON_COMPAT = FIXTURES / "export" / "leans_on_compat.py"
ALLOWED = {"jax", "numpy"} | set(sys.stdlib_module_names)


def exported(case: discovery.CaseInfo, **sizes: int) -> str:
    return export.export_script(case, anchor_sizes(case, sizes), QUICK)


def assigned(tree: ast.Module, name: str):
    [value] = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [t.id for t in node.targets if isinstance(t, ast.Name)] == [name]
    ]
    return ast.literal_eval(value)


class Inlined(ast.NodeTransformer):
    """``compat.name`` as the exporter writes it: ``name``."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "compat":
            return ast.Name(id=node.attr, ctx=ast.Load())
        return self.generic_visit(node)


def functions(tree: ast.Module) -> dict[str, str]:
    return {
        node.name: ast.dump(Inlined().visit(node))
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_every_shipped_case_exports_a_standalone_script(name):
    case = SHIPPED[name]
    text = exported(case)
    compile(text, f"{name}.py", "exec")
    tree = ast.parse(text)
    imported = export.imported_modules(text)
    assert imported <= ALLOWED, imported - ALLOWED
    assert "cases" not in imported and "harness" not in imported
    assert export.undefined_names(text) == set()
    case_tree = ast.parse(case.path.read_text())
    assert ast.get_docstring(tree).startswith(ast.get_docstring(case_tree)), (
        "the case's docstring opens the script"
    )
    assert assigned(tree, "SIZES") == case.anchors[0], "sizes default to the first anchor"
    assert assigned(tree, "CLAIM") == case.claim


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_the_script_carries_the_case_code_unchanged_but_for_compat_names(name):
    case = SHIPPED[name]
    ours = functions(ast.parse(case.path.read_text()))
    theirs = functions(ast.parse(exported(case)))
    assert {n: theirs.get(n) for n in ours} == ours


def test_sizes_are_literal_and_overrides_win():
    case = SHIPPED["scan_sync"]
    assert anchor_sizes(case, {}) == case.anchors[0]
    assert anchor_sizes(case, {"M": 3}) == {**case.anchors[0], "M": 3}
    assert assigned(ast.parse(exported(case, N=16, M=3)), "SIZES") == {"N": 16, "M": 3}
    with pytest.raises(UsageError, match="no selected case has size Q"):
        anchor_sizes(case, {"Q": 1})


def test_compat_helpers_are_inlined_with_what_they_need_and_nothing_else():
    case = discovery.read_case(LEANS_ON_COMPAT)
    text = exported(case)
    tree = ast.parse(text)
    defined = {getattr(n, "name", None) for n in tree.body} | {
        t.id
        for n in tree.body
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    assert {"holds", "_positive", "THRESHOLD", "jax_version", "Unsupported", "release"} <= defined
    assert "unused" not in defined and "import os" not in text, "an unused helper stays behind"
    assert "import math" in text, "a module-level import a helper needs comes along"
    assert "compat" not in export.imported_modules(text) and "cases" not in export.imported_modules(
        text
    )
    assert not [
        n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id in ("compat", "cases")
    ]
    assert "raise Unsupported(" in text and "return holds(wall)" in text
    assert export.undefined_names(text) == set()


@pytest.mark.jax
def test_exported_compat_case_runs(tmp_path):
    pytest.importorskip("jax")
    script = tmp_path / "leans_on_compat.py"
    script.write_text(exported(discovery.read_case(LEANS_ON_COMPAT)))
    done = subprocess.run(
        [sys.executable, script.name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    figures = parse_output(done.stdout)
    assert figures.holds is True and "doubled" in figures.evidence
    assert figures.counts[("double", "wall_ns")] == 3


CASE_HEAD = '''"""A case written for one test."""

import jax

CLAIM = "c"
SOURCE = "d"
SIZE_SPACE = {"N": (1, 9)}
ANCHORS = [{"N": 2}]


def programs(N):
    return {"p": [("step", lambda: jax.numpy.ones(N))]}


def verdict(m):
    return True, "fine"
'''


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            "from cases import compat\nhelper = compat\n",
            "uses module compat other than as compat.NAME",
        ),
        ("import scipy\n", "would import scipy"),
        ("def time_program():\n    pass\n", "both define time_program"),
        ("def main():\n    pass\n", "both define main"),
        ("from harness import stats\n", "harness.stats, which a script cannot inline"),
        ("from cases import compat\nx = compat.jax_version()\n", "there is no"),
        ("from cases.compat import *\n", "star imports"),
        ("def later():\n    return undefined_helper()\n", "undefined names: undefined_helper"),
    ],
)
def test_cases_that_cannot_be_inlined_are_refused_with_the_reason(tmp_path, extra, message):
    path = tmp_path / "odd.py"
    path.write_text(CASE_HEAD + extra)
    with pytest.raises(UsageError, match=message):
        exported(discovery.read_case(path))


def test_a_case_without_verdict_is_refused(tmp_path):
    path = tmp_path / "half.py"
    path.write_text(CASE_HEAD.replace("def verdict", "def judge"))
    with pytest.raises(UsageError, match="defines no verdict"):
        exported(discovery.read_case(path))


def test_docstring_with_backslashes_and_quotes_survives(tmp_path):
    path = tmp_path / "quoted.py"
    path.write_text(
        r'"""Escapes: a \\ backslash, \"\"\" quotes, \t tab."""' + CASE_HEAD.split('"""', 2)[2]
    )
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert ast.get_docstring(ast.parse(exported(discovery.read_case(path)))).startswith(doc)


def test_import_checks():
    assert export.foreign_imports(
        "import os\nimport scipy.linalg\nfrom jax import numpy\nimport numpy\n"
    ) == {"scipy"}
    assert export.undefined_names(
        "import os\ndef f(a):\n    return g(a, len, os, [b for b in a])\n"
    ) == {"g"}


@pytest.fixture(scope="module")
def fresh_python(tmp_path_factory) -> Path:
    """The interpreter of a new virtual environment with only jax and jaxlib of the default
    release."""
    uv = uv_command()
    if uv is None:
        pytest.skip("uv not found (neither on PATH nor as python -m uv): cannot build a fresh venv")
    venv = tmp_path_factory.mktemp("fresh") / "venv"
    for command in (
        [*uv, "venv", "--quiet", "--python", sys.executable, str(venv)],
        [
            *uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(venv / "bin" / "python"),
            *noxfile.DEFAULT_RELEASE.requirements(),
        ],
    ):
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, f"{' '.join(command)}\n{done.stderr}"
    return venv / "bin" / "python"


@pytest.mark.venv
def test_scan_sync_script_runs_in_a_fresh_venv_with_only_jax(fresh_python, tmp_path):
    text = exported(SHIPPED["scan_sync"], N=16, M=3)
    assert export.imported_modules(text) <= ALLOWED
    script = tmp_path / "scan_sync.py"
    script.write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")} | {
        "JAX_PLATFORMS": "cpu"
    }
    for package in ("harness", "cases"):
        lacks = subprocess.run(
            [fresh_python, "-c", f"import {package}"], cwd=tmp_path, env=env, check=False
        )
        assert lacks.returncode != 0, f"the fresh venv must not see {package}"

    done = subprocess.run(
        [fresh_python, script.name],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    figures = parse_output(done.stdout)
    assert figures.header["jax"] == noxfile.DEFAULT_RELEASE.jax
    assert figures.header["backend"] == "cpu"
    assert "sizes N=16 M=3" in done.stdout.splitlines()
    assert set(figures.medians) == {
        ("scan", "lower_ns"),
        ("scan", "compile_ns"),
        ("two_scans", "first_call_ns"),
        ("two_scans", "dispatch_ns"),
        ("two_scans", "wall_ns"),
        ("two_scans", "mark:scan 1"),
        ("two_scans", "mark:scan 2"),
    }
    assert figures.counts[("two_scans", "dispatch_ns")] == QUICK["repeats"]
    assert figures.counts[("scan", "compile_ns")] == QUICK["compile_repeats"]
    assert (
        figures.medians[("two_scans", "wall_ns")]
        >= figures.medians[("two_scans", "dispatch_ns")]
        > 0
    )
    assert figures.holds is not None and figures.evidence.startswith("scan 1 returned at")


def test_a_case_file_starting_with_a_byte_order_mark_exports_as_without_it(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "marked").mkdir()
    source = (FIXTURES / "cases" / "steady.py").read_bytes()
    (tmp_path / "plain" / "steady.py").write_bytes(source)
    (tmp_path / "marked" / "steady.py").write_bytes(b"\xef\xbb\xbf" + source)
    plain, marked = (
        exported(discovery.read_case(tmp_path / d / "steady.py")) for d in ("plain", "marked")
    )
    assert "\ufeff" not in marked and marked.replace("marked/", "plain/") == plain


def test_the_tail_s_sizes_and_settings_are_literals_whatever_their_names_hold():
    from harness.upstream.export import dict_literal

    hostile = {'N": 1}; import os; os.system("touch PWNED"); X = {"': 1, "plain": 'a"b'}
    assert ast.literal_eval(dict_literal(hostile)) == hostile
