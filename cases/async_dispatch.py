"""The matmul chain ``X @ X @ X @ X @ X``: dispatch time against completion time.

From scan-async-dispatch.txt (``test1``): the user times the chain without and with
``block_until_ready`` and sees the first print return at once, "because of
asynchronous dispatch".  The chain runs op by op, as in the discussion, and as one
jitted function for comparison.
"""

import jax
import numpy as np

DISCUSSION = "scan-async-dispatch.txt"
CLAIM = (
    "Dispatching X @ X @ X @ X @ X returns control to Python before the work completes: "
    "dispatch takes well under half of the time to completion."
)
# The discussion used N=10_000 on a GPU; N=1000 takes milliseconds on two CPU cores.
SIZE_SPACE = {"N": (16, 4096)}
ANCHORS = [{"N": 1000}]
COST = {"bytes": "4 * 6 * N * N", "flops": "2 * 8 * N ** 3"}
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
        f"{name}: dispatch {m[name]['dispatch_ns'] / 1e6:.3f} ms of {m[name]['wall_ns'] / 1e6:.3f} ms "
        f"to completion ({fraction:.0%})"
        for name, fraction in fractions.items()
    )
    return holds, evidence
