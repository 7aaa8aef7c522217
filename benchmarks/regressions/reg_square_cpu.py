# Nearest-neighbour regularisation on CPU, as reported in https://github.com/jax-ml/jax/issues/37465
# ("0.5.0 -> 0.5.3: x1.8"): the reporter's snippet, the edge of the cube from the command line
# (default 128; the reporter's was 256), timed with timeit.
import json
import sys
import timeit

import jax
import jax.numpy as jnp


@jax.jit
def reg_square(x):
    cost = 0.0
    for i in range(x.ndim):
        xd = jnp.diff(x, axis=i)
        cost += jnp.sum(jnp.square(xd))
    return cost


reg_square_grad = jax.jit(jax.grad(reg_square))
n = int(sys.argv[1]) if len(sys.argv) > 1 else 128
x = jax.random.normal(jax.random.key(0), (n, n, n), dtype="float32")
jax.block_until_ready(reg_square(x))
jax.block_until_ready(reg_square_grad(x))
value = min(timeit.repeat(lambda: reg_square(x).block_until_ready(), number=10, repeat=3)) / 10
grad = min(timeit.repeat(lambda: reg_square_grad(x).block_until_ready(), number=10, repeat=3)) / 10
print(json.dumps({"reg_ms": value * 1e3, "grad_ms": grad * 1e3}))
