"""Every shipped case is plain JAX and runs, on the JAX installed here, at its smallest sizes."""

import ast
import json
import os
import re
import subprocess
import sys

import pytest

from harness.catalogue import discovery
from harness.catalogue.discovery import outline
from harness.catalogue.sizes import FLOPS_PER_CALL, Budget
from harness.commands.listing import describe_case
from harness.pins import ACCELERATOR, GPU_ENV, HOST
from tests.conftest import harness_command

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
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert {"programs", "verdict"} <= set(functions)
    assert ast.get_docstring(tree), f"{name} needs a docstring summarising its source"
    sizes = set(CASES[name].space.ranges)
    for function in ("programs", "compiled", "facts"):
        if function in functions:
            taken = {a.arg for a in functions[function].args.args} | {
                a.arg for a in functions[function].args.kwonlyargs
            }
            assert taken <= sizes or functions[function].args.kwarg, (
                f"{name}.{function} takes {taken - sizes}"
            )
    verdict = functions["verdict"].args
    named = [a.arg for a in (*verdict.posonlyargs, *verdict.args, *verdict.kwonlyargs)][1:]
    assert set(named) <= sizes, f"{name}.verdict names {set(named) - sizes}, which are not sizes"


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_source_is_a_url_or_a_title(name):
    """Where the case comes from, upstream: the thread's URL, or one line naming it where no URL is
    known."""
    source = CASES[name].source
    assert source.strip() and "\n" not in source
    assert "://" not in source or re.fullmatch(r"https://\S+", source), f"{name}: {source!r}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_constants_agree(name):
    """Anchors lie in the size space and the cost formulas evaluate at each of them."""
    case = CASES[name]
    assert case.claim.strip() and case.anchors
    for anchor in case.anchors:
        for size, value in anchor.items():
            low, high = case.space.ranges[size]
            assert low <= value <= high, f"{name}: anchor {size}={value} outside [{low}, {high}]"
        assert all(cost > 0 for cost in case.space.cost_of(anchor).values())


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_accelerator_profile_runs_the_discussions_gpu_sizes_within_its_budget(name):
    """Each size the discussion ran on a GPU is an accelerator anchor, and every accelerator anchor
    fits the accelerator's budget: none is refused before it runs, as the CPU sizes fit the
    CPU's."""
    case = CASES[name]
    on_gpu = [run.sizes for run in case.source_runs if "GPU" in run.device]
    assert all(sizes in case.anchors_for(ACCELERATOR) for sizes in on_gpu), name
    for device in (HOST, ACCELERATOR):
        budget = Budget({"flops": FLOPS_PER_CALL[device]})
        plan = case.plan("quick", {}, seed=1, budget=budget, device=device)
        assert [p.sizes for p in plan] == case.anchors_for(device)
        assert all(p.refusal is None for p in plan), f"{name} on {device}: {plan}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_list_shows_the_programs_and_metric_names_without_running_jax(name):
    shown = describe_case(CASES[name])
    shape = outline(CASES[name].path)
    assert shape.programs, f"{name}: no program found in what programs() returns"
    assert all(f"{program}.wall_ns" in shown for program in shape.programs)


@pytest.mark.jax
def test_every_case_runs_at_its_smallest_sizes(tmp_path):
    """Each case where it means something: under 4 CPU devices, except those whose programs use
    fewer (``DEVICES_USED``), which that profile skips, on the one device they use."""
    pytest.importorskip("jax")
    options = ["--repeats", "2", "--warmup", "1", "--processes", "1", "--results", "r"]
    for devices in (1, 4):
        chosen = [case for case in CASES.values() if (case.devices_used is None) == (devices == 4)]
        sizes: dict[str, int] = {}
        for case in chosen:
            for name, (low, _) in case.space.ranges.items():
                sizes[name] = min(sizes.get(name, low), low)
        args = [arg for name, low in sizes.items() for arg in ("--size", f"{name}={max(low, 2)}")]
        args += [f"--case={case.name}" for case in chosen]
        done = subprocess.run(
            harness_command("run", *args, *options),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}"},
        )
        assert done.returncode == 0, done.stderr
    results = [json.loads(p.read_text()) for p in (tmp_path / "r").rglob("*.json")]
    statuses = {(r["case"], json.dumps(r["sizes"], sort_keys=True)): r["status"] for r in results}
    assert set(statuses.values()) == {"ok"}, {k: v for k, v in statuses.items() if v != "ok"}
    assert {r["case"] for r in results} == set(CASES)
    assert all("claim" in p and p["compiled"] is not None for r in results for p in r["processes"])


LONE_GPU = """
import jax
real_devices, real_backend = jax.devices, jax.default_backend
one = real_devices()[:1]
jax.devices = lambda backend=None: one if backend is None else real_devices(backend)
jax.device_count = lambda backend=None: len(jax.devices(backend))
jax.default_backend = lambda: "gpu"
from harness.measure.child import device_skip, host_device_count
from cases import sharding_scaling as case
assert not device_skip(case.MIN_DEVICES, None, max(1, host_device_count(jax)), False)
programs = case.programs(B=2, F=3)
medians = {name: {"wall_ns": 1000.0 * (1 + i)} for i, name in enumerate(programs)}
holds, evidence = case.verdict(medians)
print(sorted(programs), case.facts(B=2, F=3)["platform"], evidence)
"""


@pytest.mark.jax
def test_beside_a_lone_gpu_the_sharding_case_runs_on_the_host_devices_and_says_so():
    """A GPU profile lists the host platform: with one GPU the claim is checked over the host's
    devices, as the discussion's CPU plot was (a GPU posed by the test: jax.devices() gives one
    device, and the default backend says gpu)."""
    pytest.importorskip("jax")
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": GPU_ENV["XLA_FLAGS"]}
    done = subprocess.run(
        [sys.executable, "-c", LONE_GPU], capture_output=True, text=True, check=False, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "'named_d8'" in done.stdout and "'pmap_d8'" in done.stdout
    assert " cpu on the host's 8 cpu devices beside one gpu: named [1: " in done.stdout
