# /// script
# dependencies = ["equinox"]
# ///
# Equinox's checkpointed while loop writing into a buffer, the loop whose in-place updates jax 0.7.1
# made slow (https://github.com/patrick-kidger/equinox/issues/1088, caught by equinox's own speed
# test of a buffered while loop; cut down by hand to jax#31282 and jax#31284): linearized so that
# residuals are saved, a batch of two so that the update is a scatter, one element of a
# 100,000-element buffer set per step (50,000 checkpoints), timed after its first (compiling) call.
import json
import time

import equinox.internal as eqxi
import jax
import jax.numpy as jnp

SIZE = 100_000


@jax.jit
@jax.vmap
def fill(start, buffer):
    def cond(carry):
        step, values = carry
        return step < values.size

    def body(carry):
        step, values = carry
        return step + 1, values.at[step].set(1.0)

    def loop(values):
        return eqxi.while_loop(
            cond,
            body,
            (start, values),
            buffers=lambda carry: carry[1],
            kind="checkpointed",
            checkpoints=50_000,
        )

    return jax.linearize(loop, buffer)[0]


arguments = jnp.array([0, 1]), jnp.zeros((2, SIZE))
jax.block_until_ready(fill(*arguments))
start = time.perf_counter()
jax.block_until_ready(fill(*arguments))
print(json.dumps({"loop_ms": (time.perf_counter() - start) * 1e3}))
