"""The programs a script jits, captured by the start-up hook with no edit to it (on the jax
installed here): small inputs kept, inputs over the size cap generated and said, most called first;
the reproducer that needs jax alone runs them and prints what it measured."""

import json
import os
import subprocess
import sys

from harness.explain.reproducer import reproducer_text
from harness.install.venvs import export_tools
from harness.measure.script_capture import SAVED_LEAF_BYTES
from harness.measure.script_hook import EXPORT_DIR, EXPORT_TOOLS
from harness.measure.script_process import HOOK
from tests.conftest import REPO

SCRIPT = """
import jax, jax.numpy as jnp

@jax.jit
def small(x):
    return jnp.tanh(x @ x)

@jax.jit
def large(x):
    return (x * 2.0).sum()

x = jnp.ones((32, 32)) * 0.01
for _ in range(3):
    small(x).block_until_ready()
big = jnp.ones((600, 600), dtype=jnp.float32)  # 1.4 MB: over the cap, generated in the reproducer
print(float(large(big)))
"""


def test_small_inputs_are_kept_large_ones_generated_and_the_reproducer_runs_them(tmp_path):
    assert 600 * 600 * 4 > SAVED_LEAF_BYTES > 32 * 32 * 4
    tools = export_tools(REPO / ".nox", sys.executable)
    assert not isinstance(tools, str), tools
    script, folder = tmp_path / "user.py", tmp_path / "captured"
    script.write_text(SCRIPT)
    folder.mkdir()
    environ = {
        **os.environ,
        EXPORT_DIR: str(folder),
        EXPORT_TOOLS: str(tools),
        "JAX_PLATFORMS": "cpu",
    }
    run = [sys.executable, str(HOOK), str(tmp_path / "report.json"), str(script)]
    done = subprocess.run(
        run, cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "720000.0", "the script's own output is untouched"
    listing = json.loads((folder / "programs.json").read_text())
    programs = {p["name"]: p for p in listing["programs"]}
    assert [p["name"] for p in listing["programs"]] == ["small", "large"], "most called first"
    assert programs["small"]["calls"] == 3 and programs["large"]["calls"] == 1
    assert [i["saved"] for i in programs["small"]["inputs"]] == [True]
    assert [i["saved"] for i in programs["large"]["inputs"]] == [False], "over the cap: generated"
    (folder / "repro.py").write_text(reproducer_text("test", "repro.py", listing["jax"], "x"))
    clean = {k: v for k, v in environ.items() if k not in (EXPORT_DIR, "PYTHONPATH")}
    clean["PYTHONPATH"] = str(tools)
    ran = subprocess.run(
        [sys.executable, "repro.py"],
        cwd=folder,
        env=clean,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    found = json.loads(ran.stdout.strip().splitlines()[-1])
    assert found["run_ms"] > 0 and found["compile_ms"] > 0
    assert {"p1_call_ms", "p2_call_ms", "p1_temp_bytes"} <= set(found)


AHEAD_OF_TIME = """
import time
import jax, jax.numpy as jnp

def step(x):
    return jnp.sin(x) @ x

def only_compiled(x, y):
    return (x * y).sum()

x = jnp.ones((16, 16)) * 0.5
lowered = jax.jit(step).lower(x)
assert isinstance(lowered, jax.stages.Lowered)
began = time.perf_counter_ns()
compiled = lowered.compile()
assert isinstance(compiled, jax.stages.Compiled)
for _ in range(2):
    compiled(x).block_until_ready()
shapes = jax.ShapeDtypeStruct((8,), jnp.float32)
jax.jit(only_compiled).lower(shapes, shapes).compile()
print("compiled")
"""


def test_programs_compiled_ahead_of_time_are_captured_called_or_only_compiled(tmp_path):
    """``jax.jit(f).lower(...).compile()``, the usual way to time a compile, is seen as a jitted
    call is: the program called twice and the one only compiled from shapes are both exported, the
    stages keep their types (the script's own ``isinstance`` checks pass) and its output is
    untouched."""
    tools = export_tools(REPO / ".nox", sys.executable)
    assert not isinstance(tools, str), tools
    script, folder = tmp_path / "aot.py", tmp_path / "captured"
    script.write_text(AHEAD_OF_TIME)
    folder.mkdir()
    environ = {
        **os.environ,
        EXPORT_DIR: str(folder),
        EXPORT_TOOLS: str(tools),
        "JAX_PLATFORMS": "cpu",
    }
    run = [sys.executable, str(HOOK), str(tmp_path / "report.json"), str(script)]
    done = subprocess.run(
        run, cwd=tmp_path, env=environ, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "compiled"
    listing = json.loads((folder / "programs.json").read_text())
    programs = {p["name"]: p for p in listing["programs"]}
    assert list(programs) == ["step", "only_compiled"], listing
    assert programs["step"]["calls"] == 2 and programs["step"]["lowered"] == 1
    assert programs["only_compiled"]["calls"] == 0 and programs["only_compiled"]["lowered"] == 1
    assert not any("problem" in p for p in listing["programs"]), listing
    assert [i["saved"] for i in programs["step"]["inputs"]] == [True]
    assert [i["saved"] for i in programs["only_compiled"]["inputs"]] == [False, False], (
        "shapes alone: generated"
    )
    assert all((folder / f"{p['file']}.jaxexport").is_file() for p in listing["programs"])


WHAT_IT_DEPENDS_ON = """
import functools
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_enable_x64", True)

@functools.partial(jax.jit, static_argnums=2, donate_argnums=0)
def step(x, rows, scale):
    return x[rows] * scale

@jax.jit
def calls_back(x):
    return jax.pure_callback(np.sin, x, x) + 1

rows = np.arange(300_000) % 4  # 2.4 MB of int64: over the size cap, kept anyway (it indexes)
for _ in range(2):
    step(jnp.ones((4, 3)), rows, 3).block_until_ready()
calls_back(jnp.ones(3))
jax.jit(lambda key: jax.random.normal(key, (3,)))(jax.random.key(7))  # a typed key: its raw data

@jax.tree_util.register_pytree_node_class
class Pair:  # a library's own node (an equinox Module): jax.export serializes no such tree
    def __init__(self, a, b):
        self.a, self.b = a, b
    def tree_flatten(self):
        return (self.a, self.b), None
    @classmethod
    def tree_unflatten(cls, _, children):
        return cls(*children)

jax.jit(lambda pair: Pair(pair.b, pair.a * 2))(Pair(jnp.ones(2), jnp.zeros(3)))
print("ran")
"""


def test_the_flags_static_and_donated_arguments_and_indexing_inputs_are_carried(tmp_path):
    """What the exported program depends on travels with it: float64 (jax_enable_x64, set by the
    script and set first by its reproducer), an integer input that indexes kept past the size cap,
    the static argument named and the donated one donated; a program that calls back into Python
    is said to, and left out; a typed PRNG key travels as its raw data, a library's own pytree node
    as its leaves.  The reproducer runs
    (issue 63: float64 made it fail everywhere)."""
    tools = export_tools(REPO / ".nox", sys.executable)
    assert not isinstance(tools, str), tools
    script, folder = tmp_path / "user.py", tmp_path / "captured"
    script.write_text(WHAT_IT_DEPENDS_ON)
    folder.mkdir()
    environ = {**os.environ, EXPORT_DIR: str(folder), EXPORT_TOOLS: str(tools)}
    environ["JAX_PLATFORMS"] = "cpu"
    run = [sys.executable, str(HOOK), str(tmp_path / "report.json"), str(script)]
    done = subprocess.run(run, cwd=tmp_path, env=environ, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    step, calls_back, keyed, paired = json.loads((folder / "programs.json").read_text())["programs"]
    assert [i["shape"] for i in paired["inputs"]] == [[2], [3]], "a library's node, flattened"
    assert keyed["inputs"] == [
        {"shape": [], "dtype": "key<fry>", "saved": True, "key": "threefry2x32"}
    ]
    assert step["config"] == {"jax_enable_x64": True}
    assert [(i["dtype"], i["saved"]) for i in step["inputs"]] == [
        ("float64", True),
        ("int64", True),
    ]
    assert step["static"] == {"2": "3"} and step["donated"] == [0]
    assert calls_back["problem"].startswith("calls back into Python"), calls_back
    listing = json.loads((folder / "programs.json").read_text())
    (folder / "repro.py").write_text(
        reproducer_text("test", "repro.py", listing["jax"], "x", step["config"])
    )
    assert "jax.config.update('jax_enable_x64', True)" in (folder / "repro.py").read_text()
    clean = {k: v for k, v in environ.items() if k != EXPORT_DIR}
    clean["PYTHONPATH"] = str(tools)
    ran = subprocess.run(
        [sys.executable, "repro.py"], cwd=folder, env=clean, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    found = json.loads(ran.stdout.strip().splitlines()[-1])
    assert all(found[f"p{n}_call_ms"] > 0 for n in (1, 3, 4)) and "p2_call_ms" not in found, found
