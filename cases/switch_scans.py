"""Two scans with *different* step functions: which way of running both is fastest?

Source: the question the discussion named in ``SOURCE`` ends on: how to run two scans
at once when their step functions differ, so that ``vmap`` over one scan is not
available.  Earlier threads the user cites recommend ``lax.switch``; the user objects
that under ``vmap`` a switch becomes a select that executes every branch, which is
what makes it unattractive when the steps are expensive, and that ``pmap`` or
``shard_map`` would not help on a single GPU.  The answers in the thread address the
scan's synchronisation (``scan_sync``), not this question, which stays open.  Three
options are timed on the same inputs:

- two separate dispatches, one scan per step function;
- ``jit(vmap(scan(switch)))`` over a branch index, where each item picks its step;
- where several devices exist, each scan placed on its own device.

The claim under test is the user's: under ``vmap`` the switch costs about the sum
of its branches (both step functions run on both inputs).  The evidence also
names the fastest option at these sizes.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

SOURCE = (
    '"Understanding asynchronous dispatch and running multiple functions in parallel" (markus7800, '
    "answered "
    "by ezhulenev); its URL was not found"
)
CLAIM = (
    "vmap over lax.switch executes every branch: the vectorised switch costs at least 0.75 times "
    "the sum of running each branch vectorised on its own."
)
SIZE_SPACE = {"N": (16, 1024), "M": (1, 20000)}
# The discussion ran nothing for this question: every profile runs these sizes.
ANCHORS = [{"N": 100, "M": 200}]
COST = {"bytes": "4 * (6 * M * N * N + 8 * N * N)", "flops": "4 * M * (8 * N ** 3 + 2 * N * N)"}
# The claim is about one device: with more, the programs are the same and one option more (each scan
# on a device of its own) is timed beside them, which the verdict does not read; the main command
# measures it under cpu only.
CLAIM_DEVICES = 1
SUM_FRACTION = 0.75


@jax.jit
def step_a(val, X):
    X = X @ X @ X @ X @ X
    return val + X, None


@jax.jit
def step_b(val, X):
    X = jnp.tanh(X) @ jnp.sin(X) @ X @ jnp.cos(X) @ X
    return val - X, None


def _scan_with(step):
    return jax.jit(jax.vmap(lambda X, Xs: jax.lax.scan(step, X, Xs)[0]))


vmapped_a = _scan_with(step_a)
vmapped_b = _scan_with(step_b)


@jax.jit
@jax.vmap
def vmapped_switch(index, X, Xs):
    def step(val, x):
        return jax.lax.switch(index, [step_a, step_b], val, x)

    return jax.lax.scan(step, X, Xs)[0]


@functools.cache  # programs() and compiled() share one set of inputs
def _inputs(N, M):
    # Drawn with NumPy: jax.random (and jnp.stack) would compile their own programs in every fresh
    # process.
    x1, x2 = np.random.default_rng(0).standard_normal((2, N, N), dtype=np.float32) / np.float32(N)
    xs1, xs2 = np.stack([x1] * M), np.stack([x2] * M)
    arrays = (x1, x2, xs1, xs2, np.stack([x1, x2]), np.stack([xs1, xs2]))
    X1, X2, Xs1, Xs2, X, Xs = (jnp.asarray(a) for a in arrays)
    jax.block_until_ready((X, Xs))
    return X1, X2, Xs1, Xs2, X, Xs


def programs(N, M):
    X1, X2, Xs1, Xs2, X, Xs = _inputs(N, M)
    index = jnp.array([0, 1])
    options = {
        "separate": [
            ("scan(step_a)", lambda: jax.lax.scan(step_a, X1, Xs1)[0]),
            ("scan(step_b)", lambda: jax.lax.scan(step_b, X2, Xs2)[0]),
        ],
        "vmap_switch": [("jit(vmap(scan(switch)))", lambda: vmapped_switch(index, X, Xs))],
        "vmap_branch_a": [("jit(vmap(scan(step_a)))", lambda: vmapped_a(X, Xs))],
        "vmap_branch_b": [("jit(vmap(scan(step_b)))", lambda: vmapped_b(X, Xs))],
    }
    devices = jax.devices()
    if len(devices) >= 2:
        on_first = jax.device_put((X1, Xs1), devices[0])
        on_second = jax.device_put((X2, Xs2), devices[1])
        jax.block_until_ready((on_first, on_second))
        options["per_device"] = [
            ("scan(step_a) on device 0", lambda: jax.lax.scan(step_a, *on_first)[0]),
            ("scan(step_b) on device 1", lambda: jax.lax.scan(step_b, *on_second)[0]),
        ]
    return options


def compiled(N, M):
    _, _, _, _, X, Xs = _inputs(N, M)
    return {
        "vmap_switch": (vmapped_switch, (jnp.array([0, 1]), X, Xs)),
        "vmap_branch_a": (vmapped_a, (X, Xs)),
    }


def verdict(m):
    switch = m["vmap_switch"]["wall_ns"]
    branches = m["vmap_branch_a"]["wall_ns"] + m["vmap_branch_b"]["wall_ns"]
    options = {
        name: m[name]["wall_ns"] for name in ("separate", "vmap_switch", "per_device") if name in m
    }
    ranking = ", ".join(
        f"{name} {wall / 1e6:.3f} ms"
        for name, wall in sorted(options.items(), key=lambda kv: kv[1])
    )
    evidence = (
        f"vmap(switch) {switch / 1e6:.3f} ms vs branches vectorised one at a time "
        f"{branches / 1e6:.3f} ms ({switch / branches:.2f} of their sum); fastest first: {ranking}"
    )
    return switch >= SUM_FRACTION * branches, evidence
