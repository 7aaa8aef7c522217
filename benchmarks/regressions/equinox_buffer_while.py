# /// script
# dependencies = ["equinox"]
# ///
# Equinox's checkpointed while loop writing into a buffer, the loop whose in-place updates jax 0.7.1 made
# slow (https://github.com/patrick-kidger/equinox/issues/1088, caught by equinox's own speed test of a
# buffered while loop; cut down by hand to jax#31282 and jax#31284): a vmapped loop setting one element of a
# 20,000-element buffer per step, timed after its first (compiling) call.
import json
import time

import equinox.internal as eqxi
import jax
import jax.numpy as jnp

SIZE = 20_000


@jax.jit
@jax.vmap
def fill(start, buffer):
    def cond(carry):
        step, values = carry
        return step < values.size

    def body(carry):
        step, values = carry
        return step + 1, values.at[step].set(1.0)

    return eqxi.while_loop(
        cond,
        body,
        (start, buffer),
        buffers=lambda carry: carry[1],
        kind="checkpointed",
        checkpoints=SIZE,
    )


arguments = jnp.array([0]), jnp.zeros((1, SIZE))
jax.block_until_ready(fill(*arguments))
start = time.perf_counter()
jax.block_until_ready(fill(*arguments))
print(json.dumps({"loop_ms": (time.perf_counter() - start) * 1e3}))
