"""Constant work per device, replicated over 1, 2, 4, … devices: does time per call stay flat?

Source: the discussion at ``SOURCE``, on jax 0.4.26.  The user runs ``vmap(solve)``
(``solve`` is ``mean(init @ var)``) on ``n_per_device = 100`` rows of
``problem_size = 20`` per device, over 1 to 6 devices (GPUs, and CPU devices made with
``--xla_force_host_platform_device_count``), once with ``jit`` and a
``PositionalSharding`` of the rows and once with ``pmap``, averaging 500 calls each.
Both lines rise with the device count, on GPU and on CPU, where the user expected them
flat since every device does the same small work; the sharding documentation's own
example was slower on 8 devices than on 4.  The answer (a JAX developer): with inputs
this small the cost is communication, not compute, and communication grows with the
device count (an all-reduce over a ring takes time linear in the devices); with more
work per device the problem becomes compute-bound and the effect goes away, as the
sharding example's timings on 8 TPUs showed (4 devices about twice as slow as 8 once
the input was ten times larger).

Programs are named ``<method>_d<devices>``: ``named`` (jit + NamedSharding, every
release), ``positional`` (jit + PositionalSharding, as in the discussion, on
releases that still have it) and ``pmap`` (from 0.8.0 implemented as
``jit(shard_map)``; recorded in the facts).  With virtual CPU devices
(``cpu8``) all devices share the machine's cores, so compute-bound work cannot
scale past the core count: the facts record the usable cores beside the results.
With several GPUs it runs across them; beside a lone GPU, across the host
platform's devices (as the discussion's CPU plot did; the GPU profiles list that
platform), and its evidence says so.
"""

import os
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from cases import compat

SOURCE = "https://github.com/jax-ml/jax/discussions/21411"
CLAIM = (
    "With constant work per device, time per call grows with the device count: jit + NamedSharding "
    "on the most devices takes at least 1.5 times as long as on one device."
)
MIN_DEVICES = 2
# B: rows per device (n_per_device), F: problem_size.
SIZE_SPACE = {"B": (1, 100_000), "F": (1, 4096)}
# The discussion's own run: its sizes, on GPUs and on CPU devices; its timings were plotted, not
# printed, so what it said is quoted.
SOURCE_RUNS = [
    {
        "sizes": {"B": 100, "F": 20},
        "call": "n_per_device = 100, problem_size = 20, 1 to 6 devices, 500 calls each",
        "device": "up to 6 GPUs and as many CPU devices (jax 0.4.26)",
        "printed": "the time noticeably increases with more devices (plotted, no figures given)",
    }
]
# The discussion's sizes, and a compute-heavier point for the maintainer's hypothesis: both tell
# something on either device class.
ANCHORS = [{"B": 100, "F": 20}, {"B": 20_000, "F": 200}]
COST = {"bytes": "4 * 8 * B * (2 * F + 2)", "flops": "2 * 8 * B * F * 5"}
GROWTH = 1.5


def solve(init, var):
    return jnp.mean(init @ var)


def vectorized_solve(y0, v):
    return jax.vmap(solve, in_axes=(0, None))(y0, v)


vectorized_jit = jax.jit(vectorized_solve)


def _devices():  # a lone GPU: the host platform's beside it (the harness checked it has several)
    return jax.devices() if jax.device_count() > 1 else jax.devices("cpu")


def device_counts():
    return [n for n in (1, 2, 4, 8, 16, 32) if n <= len(_devices())]


def _inputs(B, F):
    # Drawn with NumPy (the discussion used jax.random.uniform): jax.random would compile its own
    # programs in every fresh process; the arrays are placed by device_put below either way. Drawn
    # once for the most devices, in float32, each count taking the first rows: at B=20000, F=200 a
    # draw per count took most of 1.6 s of every process.
    rng = np.random.default_rng(42)
    var = rng.random(size=(F, 5), dtype=np.float32)
    return 1 + rng.random(size=(device_counts()[-1] * B, F), dtype=np.float32), var


def programs(B, F):
    found = {}
    y_all, var = _inputs(B, F)
    for n in device_counts():
        devices = _devices()[:n]
        y_0 = y_all[: n * B]
        shardings = {"named": compat.named_sharding}
        if compat.has_positional_sharding():
            shardings["positional"] = compat.positional_sharding
        for method, make in shardings.items():
            y0_shard = jax.device_put(y_0, make(devices)).block_until_ready()
            var_shard = jax.device_put(var, make(devices, replicated=True)).block_until_ready()
            call = partial(vectorized_jit, y0_shard, var_shard)
            found[f"{method}_d{n}"] = [("vectorized_jit(y0, var)", call)]
        pmapped = jax.pmap(vectorized_solve, in_axes=(0, None), devices=devices)
        y_split = y_0.reshape((n, B, F))
        found[f"pmap_d{n}"] = [("pmap(y_0, var)", partial(pmapped, y_split, var))]
    return found


def compiled(B, F):
    devices = _devices()[: device_counts()[-1]]
    y_0, var = _inputs(B, F)
    y0_shard = jax.device_put(y_0, compat.named_sharding(devices))
    var_shard = jax.device_put(var, compat.named_sharding(devices, replicated=True))
    return {f"named_d{len(devices)}": (vectorized_jit, (y0_shard, var_shard))}


def facts(B, F):
    try:
        cores: int | None = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    return {
        "device_counts": device_counts(),
        "platform": _devices()[0].platform,
        "pmap_implementation": compat.pmap_implementation(),
        "positional_sharding": compat.has_positional_sharding(),
        "usable_cores": cores,
    }


def verdict(m):
    counts = device_counts()
    lines = []
    for method in ("named", "positional", "pmap"):
        times = [m[f"{method}_d{n}"]["wall_ns"] for n in counts if f"{method}_d{n}" in m]
        if times:
            series = ", ".join(
                f"{n}: {t / 1e3:.0f} µs" for n, t in zip(counts, times, strict=False)
            )
            lines.append(f"{method} [{series}] efficiency {times[0] / times[-1]:.2f}")
    first, last = m[f"named_d{counts[0]}"]["wall_ns"], m[f"named_d{counts[-1]}"]["wall_ns"]
    platform, backend = _devices()[0].platform, jax.default_backend()
    beside = ""
    if platform != backend:  # a lone GPU: said, since the claim was checked beside it
        beside = f"on the host's {len(_devices())} {platform} devices beside one {backend}: "
    return last >= GROWTH * first, beside + "; ".join(lines)
