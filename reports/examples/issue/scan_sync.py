"""Two back-to-back ``lax.scan`` calls with a jitted step: do they dispatch asynchronously?"""
import functools
import statistics
import time
from importlib.metadata import version

import jax
import jax.numpy as jnp
import numpy as np

@functools.cache
def _inputs(N, M):
    rng = np.random.default_rng(0)
    x1, x2 = rng.standard_normal((2, N, N), dtype=np.float32)
    X1, X2, Xs1, Xs2 = (jnp.asarray(a) for a in (x1, x2, np.stack([x1] * M), np.stack([x2] * M)))
    jax.block_until_ready((Xs1, Xs2))
    return X1, X2, Xs1, Xs2

@jax.jit
def step(val, X):
    X = X @ X @ X @ X @ X
    return val + X, None

def programs(N, M):
    X1, X2, Xs1, Xs2 = _inputs(N, M)
    return {
        "two_scans": [
            ("scan 1", lambda: jax.lax.scan(step, X1, Xs1)[0]),
            ("scan 2", lambda: jax.lax.scan(step, X2, Xs2)[0]),
        ]
    }

SIZES, PROGRAMS, REPEATS, WARMUP = {"N": 600, "M": 2}, ["two_scans"], 20, 2
print(f"jax {version('jax')} jaxlib {version('jaxlib')} backend {jax.default_backend()} devices {jax.device_count()}")
for name, steps in programs(**SIZES).items():
    if name not in PROGRAMS:
        continue
    dispatch, wall = [], []  # ns until Python regains control, and until every output is ready
    for _ in range(WARMUP + REPEATS):
        start = time.perf_counter_ns()
        outputs = [f() for _, f in steps]
        dispatch.append(time.perf_counter_ns() - start)
        jax.block_until_ready(outputs)
        wall.append(time.perf_counter_ns() - start)
    for metric, ns in (("dispatch_ns", sorted(dispatch[WARMUP:])), ("wall_ns", sorted(wall[WARMUP:]))):
        print(f"metric {name} {metric} median={statistics.median(ns):.0f} min={ns[0]} max={ns[-1]} n={len(ns)}")
