"""Two back-to-back ``lax.scan`` calls with a jitted step: do they dispatch asynchronously?

Source: the discussion named in ``SOURCE`` (its ``test2``), on a GPU.  The user scans
``step`` (``X @ X @ X @ X @ X`` plus an add) over ``M`` stacked copies of an ``N``×``N``
matrix, twice in a row, and times the return of each scan and the completion of both.
With an expensive step and few iterations (``test2(10_000, 2)``) both scans returned
after 0.056 s and finished at 0.625 s: asynchronous.  With a cheap step and many
iterations (``test2(100, 10_000)``) the first returned at 0.273 s, the second at 0.512 s,
both done at 0.536 s: each scan ran to the end before Python got control back.

The answer (a JAX/XLA developer): on the GPU backend every loop iteration copies its
predicate back to the host to decide whether to run the next one, which synchronises
the stream with the host, so only work after the loop stays asynchronous; a fix that
launches the operations from a thread pool was tracked internally, with no date.  The
user asked whether a scan's trip count is not known statically; the developer agreed,
said XLA has a pass that detects static trip counts, and offered to look at the
optimized HLO to see why it did not apply.  On CPU the harness records that HLO fact
(``known_trip_count``) beside the timings; the verdict sees ``M`` and reports the time
per iteration.
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
    "Two back-to-back lax.scan calls both return control to Python before their work "
    "completes: dispatch takes well under half of the time to completion."
)
SIZE_SPACE = {"N": (16, 10000), "M": (1, 20000)}
# The discussion's own runs, quoted; an accelerator (GPU, TPU) profile runs their sizes
# (ACCELERATOR_ANCHORS).
SOURCE_RUNS = [
    {
        "sizes": {"N": 10000, "M": 2},
        "call": "test2(10_000, 2)",
        "device": "the poster's GPU (model not given)",
        "printed": "t1 = 0.056s, t2 = 0.056s, t3 = 0.625s",
    },
    {
        "sizes": {"N": 100, "M": 10000},
        "call": "test2(100, 10_000)",
        "device": "the poster's GPU (model not given)",
        "printed": "t1 = 0.273s, t2 = 0.512s, t3 = 0.536s",
    },
]
# The same two, scaled to seconds on two CPU cores (a CPU profile).  On an accelerator, N=600 makes
# the step cheap and M=500 adds nothing to M=10_000: an accelerator profile runs the discussion's
# sizes only.
ANCHORS = [{"N": 600, "M": 2}, {"N": 100, "M": 500}]
ACCELERATOR_ANCHORS = [{"N": 10000, "M": 2}, {"N": 100, "M": 10000}]
COST = {"bytes": "4 * (4 * M * N * N + 8 * N * N)", "flops": "2 * M * (8 * N ** 3 + N * N)"}
# Its programs run on one device: under cpu8 the other seven would sit idle (the harness skips it
# there).
DEVICES_USED = 1
ASYNC_FRACTION = 0.5


@functools.cache  # programs() and compiled() share one set of inputs
def _inputs(N, M):
    # Drawn with NumPy: jax.random (and jnp.stack) would compile their own programs in every fresh
    # process.
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


def compiled(N, M):
    X1, _, Xs1, _ = _inputs(N, M)
    return {"scan": (jax.jit(lambda X, Xs: jax.lax.scan(step, X, Xs)[0]), (X1, Xs1))}


def verdict(m, N, M):
    scans = m["two_scans"]
    fraction = scans["dispatch_ns"] / scans["wall_ns"]
    evidence = (
        f"scan 1 returned at {scans['mark:scan 1'] / 1e6:.3f} ms, scan 2 at "
        f"{scans['mark:scan 2'] / 1e6:.3f} ms, both done at {scans['wall_ns'] / 1e6:.3f} ms "
        f"(dispatch {fraction:.0%} of completion; {scans['wall_ns'] / (2 * M) / 1e3:.1f} µs per "
        f"iteration of {M} at N={N})"
    )
    return fraction < ASYNC_FRACTION, evidence
