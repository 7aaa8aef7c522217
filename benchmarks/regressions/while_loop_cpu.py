# A while_loop on CPU, as reported in https://github.com/jax-ml/jax/issues/25190 ("runs in 2 seconds
# on 0.4.31, but in 42 seconds on 0.4.33"): the reporter's loop on one CPU device instead of 96,
# 2**16 steps.
import json
import sys
import timeit

import jax
from jax import lax
from jax import numpy as jnp

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2**16
foo = jnp.arange(steps)
stop = jnp.max(foo)


@jax.jit
def episode(_):
    return lax.while_loop(
        lambda u: u[0] < stop, lambda u: (jnp.maximum(u[0], foo[u[1]]), u[1] + 1), (0, 0)
    )[1]


episode(0).block_until_ready()
start = timeit.default_timer()
episode(1).block_until_ready()
print(json.dumps({"loop_ms": (timeit.default_timer() - start) * 1e3, "jax": jax.__version__}))
