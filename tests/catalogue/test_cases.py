"""Every shipped case is plain JAX and runs, on the JAX installed here, at its smallest sizes."""

import ast
import json
import os
import re
import subprocess
import sys

import pytest

from harness.catalogue import discovery

CASES = discovery.discover()
STDLIB = set(sys.stdlib_module_names)
ALLOWED = {"jax", "numpy", "cases"}


def imported_roots(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module or ""


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_imports_only_jax_numpy_stdlib_and_compat(name):
    for module in imported_roots(CASES[name].path):
        root = module.split(".")[0]
        assert root in STDLIB or root in ALLOWED, f"{name} imports {module}"
        if root == "cases":
            assert module == "cases" or module == "cases.compat", f"{name} imports {module}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_defines_the_interface(name):
    tree = ast.parse(CASES[name].path.read_text())
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert {"programs", "verdict"} <= functions
    assert ast.get_docstring(tree), f"{name} needs a docstring naming its discussion"


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_discussion_is_a_short_name_or_a_url(name):
    """Where the case comes from, upstream: a short name (listed in cases/README.md) or the thread's URL."""
    discussion = CASES[name].discussion
    assert re.fullmatch(r"[a-z0-9][a-z0-9.-]*|https://\S+", discussion), f"{name}: {discussion!r}"


@pytest.mark.jax
def test_every_case_runs_at_its_smallest_sizes(tmp_path):
    pytest.importorskip("jax")
    sizes = {}
    for case in CASES.values():
        for name, (low, _) in case.space.ranges.items():
            sizes[name] = min(sizes.get(name, low), low)
    args = [arg for name, low in sizes.items() for arg in ("--size", f"{name}={max(low, 2)}")]
    options = ["--repeats", "2", "--warmup", "1", "--processes", "1", "--results", "r"]
    done = subprocess.run(
        [sys.executable, "-m", "harness", "run", *args, *options],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4"},
    )
    assert done.returncode == 0, done.stderr
    results = [json.loads(p.read_text()) for p in (tmp_path / "r").rglob("*.json")]
    statuses = {(r["case"], json.dumps(r["sizes"], sort_keys=True)): r["status"] for r in results}
    assert set(statuses.values()) == {"ok"}, {k: v for k, v in statuses.items() if v != "ok"}
    assert {r["case"] for r in results} == set(CASES)
    assert all("claim" in p and p["compiled"] is not None for r in results for p in r["processes"])
