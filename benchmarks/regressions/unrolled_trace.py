# Tracing a long unrolled Python loop, the example of https://github.com/jax-ml/jax/pull/8931 ("log
# tracing and compilation times"), with 2000 steps instead of 10000: the first call is all tracing
# and compiling.
import json
import time

import jax
import jax.numpy as jnp


@jax.jit
def f(x):
    for _ in range(2000):
        x = jnp.sin(x)
    return x


start = time.perf_counter()
f(3.0).block_until_ready()
print(json.dumps({"first_call_s": time.perf_counter() - start}))
