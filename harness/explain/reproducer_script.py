"""The reproducer's text: a short script that needs jax alone, runs the exported programs kept
beside it, and prints one JSON line of what it measured.

It loads each program (``jax.export.deserialize``), builds its inputs (the values kept where they
were small, else generated ones of the same shapes and dtypes), compiles it (timed: ``lower`` and
``compile``), warms it up, times as many calls as the script made (``block_until_ready`` on each)
and reads ``memory_analysis()`` where the release has it.  ``run_ms`` is the time of all those
calls, the programs' share of what the script spent running them.  The digest of the programs is in
the text, so two reproducers of other programs are never one script.
"""

from __future__ import annotations

REQUIREMENTS = ("flatbuffers", "absl-py")  # what jax.export needs to read a module, besides jax
MOST_CALLS = (
    200  # a program's calls timed at most; the total is scaled to the calls the script made
)

TEMPLATE = '''# /// script
# dependencies = [{requirements}]
# ///
"""{title}: the programs it compiled, exported with jax.export on jax {exported_on} (digest {digest}).
Run: pip install jax==VERSION jaxlib==VERSION {installs}; python {name}"""
import json, pathlib, statistics, time
import jax, jax.export, numpy as np

HERE, MOST_CALLS = pathlib.Path(__file__).parent, {most_calls}
found, rng = {{"compile_ms": 0.0, "run_ms": 0.0, "temp_bytes": 0}}, np.random.default_rng(0)
for n, program in enumerate(json.loads((HERE / "programs.json").read_text())["programs"], 1):
    if "problem" in program:
        continue
    exported = jax.export.deserialize(bytearray((HERE / f"{{program['file']}}.jaxexport").read_bytes()))
    kept = np.load(HERE / f"{{program['file']}}.npz")
    leaves = [np.frombuffer(kept[f"a{{i}}"].tobytes(), a.dtype).reshape(a.shape) if f"a{{i}}" in kept
              else rng.standard_normal(a.shape).astype(a.dtype) for i, a in enumerate(exported.in_avals)]
    args, kwargs = jax.tree_util.tree_unflatten(exported.in_tree, leaves)
    began = time.perf_counter_ns()
    compiled = jax.jit(exported.call).lower(*args, **kwargs).compile()
    found[f"p{{n}}_compile_ms"] = (time.perf_counter_ns() - began) / 1e6
    jax.block_until_ready(compiled(*args, **kwargs))  # warm-up
    times = []
    for _ in range(min(program["calls"], MOST_CALLS)):
        began = time.perf_counter_ns()
        jax.block_until_ready(compiled(*args, **kwargs))
        times.append((time.perf_counter_ns() - began) / 1e6)
    found[f"p{{n}}_call_ms"] = statistics.median(times)
    memory = getattr(compiled, "memory_analysis", lambda: None)()
    found[f"p{{n}}_temp_bytes"] = getattr(memory, "temp_size_in_bytes", 0) if memory else 0
    found["compile_ms"] += found[f"p{{n}}_compile_ms"]
    found["run_ms"] += statistics.median(times) * program["calls"]
    found["temp_bytes"] = max(found["temp_bytes"], found[f"p{{n}}_temp_bytes"])
print(json.dumps(found))
'''


def reproducer_text(title: str, name: str, exported_on: str, digest: str) -> str:
    """The reproducer for the programs of one export: ``name`` is its own file name."""
    return TEMPLATE.format(
        requirements=", ".join(f'"{r}"' for r in REQUIREMENTS),
        installs=" ".join(REQUIREMENTS),
        title=title,
        exported_on=exported_on,
        digest=digest,
        name=name,
        most_calls=MOST_CALLS,
    )
