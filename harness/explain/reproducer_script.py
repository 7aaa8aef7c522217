"""The reproducer's text: a short script that needs jax alone, runs the exported programs kept
beside it (inputs kept, else generated alike), times their compile and as many calls as the script
made, reads ``memory_analysis()``, and prints one JSON line. The programs' digest is in the text, so
two reproducers of other programs are never one script.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from harness.measure.script_capture import PROGRAM_FLAGS

REQUIREMENTS = ("flatbuffers", "absl-py")  # what jax.export needs to read a module, besides jax
# a program's calls timed at most; the total is scaled to the calls the script made
MOST_CALLS = 200

TEMPLATE = '''# /// script
# dependencies = [{requirements}]
# ///
"""{title}: the programs it compiled, exported with jax.export on jax {exported_on} (digest {digest}).
Run: pip install jax==VERSION jaxlib==VERSION {installs}; python {name}"""
import json, pathlib, statistics, time
import jax, jax.export, numpy as np
{config}
HERE, MOST_CALLS = pathlib.Path(__file__).parent, {most_calls}
found, rng = {{"compile_ms": 0.0, "run_ms": 0.0, "temp_bytes": 0}}, np.random.default_rng(0)
def leaf(kept, i, aval, said):  # the script's values where kept; else generated, ints as zeros
    if "key" in said:  # a typed PRNG key, kept as its raw data
        data = np.frombuffer(kept[f"a{{i}}"].tobytes(), np.uint32).reshape(*aval.shape, -1)
        return jax.random.wrap_key_data(data, impl=said["key"])
    if f"a{{i}}" in kept:
        return np.frombuffer(kept[f"a{{i}}"].tobytes(), aval.dtype).reshape(aval.shape)
    if np.dtype(aval.dtype).kind in "biu":
        return np.zeros(aval.shape, aval.dtype)
    return rng.standard_normal(aval.shape).astype(aval.dtype)
listing = json.loads((HERE / "programs.json").read_text())
# Where one release cannot read the other's export, each runs its own export of the same programs.
for n, program in enumerate(listing.get("by_release", {{}}).get(jax.__version__, listing["programs"]), 1):
    if "problem" in program:
        continue
    exported = jax.export.deserialize(bytearray((HERE / f"{{program['file']}}.jaxexport").read_bytes()))
    module = exported.mlir_module()  # jaxlib sets LAPACK and BLAS up as it lowers a call of them:
    if "lapack_" in module or "blas_" in module:  # one read from a file crashes without (0.4.31)
        jax.jit(jax.lax.linalg.lu).lower(np.eye(4, dtype=np.float32))
    kept = np.load(HERE / f"{{program['file']}}.npz")
    avals = zip(exported.in_avals, program["inputs"])
    leaves = [leaf(kept, i, aval, said) for i, (aval, said) in enumerate(avals)]
    args, kwargs = jax.tree_util.tree_unflatten(exported.in_tree, jax.device_put(leaves))
    donated = tuple(program.get("donated", ()))  # as the script donated them: each call a copy
    fresh = lambda: jax.tree_util.tree_map(lambda x: x.copy() if donated else x, (args, kwargs))
    began = time.perf_counter_ns()
    compiled = jax.jit(exported.call, donate_argnums=donated).lower(*args, **kwargs).compile()
    found[f"p{{n}}_compile_ms"] = (time.perf_counter_ns() - began) / 1e6
    a, k = fresh()
    jax.block_until_ready(compiled(*a, **k))  # warm-up
    times = []
    for _ in range(min(program["calls"], MOST_CALLS)):
        a, k = fresh()
        began = time.perf_counter_ns()
        jax.block_until_ready(compiled(*a, **k))
        times.append((time.perf_counter_ns() - began) / 1e6)
    found[f"p{{n}}_call_ms"] = statistics.median(times) if times else 0.0
    memory = getattr(compiled, "memory_analysis", lambda: None)()
    found[f"p{{n}}_temp_bytes"] = getattr(memory, "temp_size_in_bytes", 0) if memory else 0
    found["compile_ms"] += found[f"p{{n}}_compile_ms"]
    found["run_ms"] += found[f"p{{n}}_call_ms"] * program["calls"]
    found["temp_bytes"] = max(found["temp_bytes"], found[f"p{{n}}_temp_bytes"])
print(json.dumps(found))
'''  # noqa: E501


def reproducer_text(
    title: str, name: str, exported_on: str, digest: str, config: Mapping[str, Any] | None = None
) -> str:
    """The reproducer of one export named ``name``; ``config``: the jax flags in force when traced,
    set first (``jax_enable_x64``: without it float64 inputs become float32 and are refused). A
    fixed template: plain text, known flags, literal values: nothing given becomes code."""
    settings = "".join(
        f"jax.config.update({flag!r}, {value!r})  # in force when the programs were traced\n"
        for flag, value in (config or {}).items()
        if flag in PROGRAM_FLAGS and _literal(value)
    )
    return TEMPLATE.format(
        config=settings,
        requirements=", ".join(f'"{r}"' for r in REQUIREMENTS),
        installs=" ".join(REQUIREMENTS),
        title=_plain(title, "A reproducer of a script's step"),
        exported_on=_plain(exported_on, "a release it does not name"),
        digest=_plain(digest, "unknown"),
        name=_plain(name, "this file"),
        most_calls=MOST_CALLS,
    )


# What the docstring may hold: printable text with no quote or backslash, which could end it.
PLAIN = re.compile(r'[^"\\]{0,200}')


def _plain(text: str, instead: str) -> str:
    return text if text.isprintable() and PLAIN.fullmatch(text) else instead


def _literal(value: Any) -> bool:
    """Whether ``repr(value)`` is a literal that reads back as ``value`` (a flag's value)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, bool | int | str)
