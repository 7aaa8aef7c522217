"""The matmul chain ``X @ X @ X @ X @ X``: dispatch time against completion time.

Source: the discussion named in ``SOURCE`` (its ``test1``), which opens by checking JAX's
asynchronous dispatch.  The user builds an ``N``×``N`` random matrix (``N = 10_000`` on a
GPU), times ``X @ X @ X @ X @ X`` once when the expression returns and once after
``block_until_ready``, and sees 0.001 s against 0.137 s: control came back at once, as the
documentation on asynchronous dispatch says.  That part needed no answer; it is the
baseline the rest of the discussion (``scan_sync``, ``vmapped_scans``, ``switch_scans``)
measures against.  Here the chain runs op by op, as the user wrote it, and as one jitted
function for comparison.
"""

import jax
import numpy as np

SOURCE = (
    '"Understanding asynchronous dispatch and running multiple functions in parallel" (markus7800, '
    "answered "
    "by ezhulenev); its URL was not found"
)
CLAIM = (
    "Dispatching X @ X @ X @ X @ X returns control to Python before the work completes: "
    "dispatch takes well under half of the time to completion."
)
SIZE_SPACE = {"N": (16, 16384)}
# The discussion's own run, quoted; an accelerator (GPU, TPU) profile runs its size
# (ACCELERATOR_ANCHORS).
SOURCE_RUNS = [
    {
        "sizes": {"N": 10000},
        "call": "test1(10_000)",
        "device": "the poster's GPU (model not given)",
        "printed": "t1 = 0.001s, t2 = 0.137s",
    }
]
# Scaled for a CPU profile: N=1000 takes milliseconds on two CPU cores.  A GPU or TPU finishes that
# chain in well under a millisecond (a TPU v5e: 0.6 ms), dispatch is then much of the time, and the
# claim is not about that: an accelerator profile runs the discussion's size only.
ANCHORS = [{"N": 1000}]
ACCELERATOR_ANCHORS = [{"N": 10000}]
COST = {"bytes": "4 * 6 * N * N", "flops": "2 * 8 * N ** 3"}
# Its programs run on one device: under cpu8 the other seven would sit idle (the harness skips it
# there).
DEVICES_USED = 1
# Dispatch below this fraction of completion counts as "returned before the work completed".
ASYNC_FRACTION = 0.5


def _matrix(N):
    # Drawn with NumPy: jax.random would compile its own programs in every fresh process, time that
    # measures nothing the discussion asked about.
    return jax.device_put(np.random.default_rng(0).standard_normal((N, N), dtype=np.float32))


def programs(N):
    X = _matrix(N)
    X.block_until_ready()
    chain = jax.jit(lambda X: X @ X @ X @ X @ X)
    return {
        "eager": [("X @ X @ X @ X @ X", lambda: X @ X @ X @ X @ X)],
        "jit": [("jit(chain)(X)", lambda: chain(X))],
    }


def compiled(N):
    X = _matrix(N)
    return {"jit": (jax.jit(lambda X: X @ X @ X @ X @ X), (X,))}


def verdict(m):
    fractions = {name: m[name]["dispatch_ns"] / m[name]["wall_ns"] for name in ("eager", "jit")}
    holds = all(f < ASYNC_FRACTION for f in fractions.values())
    evidence = "; ".join(
        f"{name}: dispatch {m[name]['dispatch_ns'] / 1e6:.3f} ms of {m[name]['wall_ns'] / 1e6:.3f} "
        f"ms to completion ({fraction:.0%})"
        for name, fraction in fractions.items()
    )
    return holds, evidence
