# /// script
# dependencies = ["equinox"]
# ///
# The per-call overhead of `eqx.filter_jit` against `jax.jit`, the program of
# https://github.com/patrick-kidger/equinox/issues/973 ("Overhead of filter_jit": 423 us a call
# against 53 us on the reporter's machine), made smaller by
# https://github.com/patrick-kidger/equinox/pull/983 (no inside-JIT check on each call), released in
# equinox 0.12.0: a change that comes with the library, which a triage of jax 0.5.3 → 0.6.0 sees as
# equinox 0.11.12 → 0.12.1 resolves with each release.  The reporter's `%timeit` as `timeit.repeat`,
# the best of 5 repeats of 500 calls, after the reporter's ten warm-up calls; `jax_jit_call_us` is
# the same call through `jax.jit`, jax's own share of it.
import json
import timeit

import equinox as eqx
import jax
import jax.numpy as jnp

model = eqx.nn.Identity()
x = jnp.zeros((1, 1))


@eqx.filter_jit
def fwd_eqx(m, x):
    return m(x)


@jax.jit
def fwd_jax(m, x):
    return m(x)


# Make sure everything is jit compiled
for _ in range(10):
    fwd_eqx(model, x)
    fwd_jax(model, x)


def per_call_us(fn):
    return (
        min(timeit.repeat(lambda: fn(model, x).block_until_ready(), number=500, repeat=5))
        / 500
        * 1e6
    )


print(
    json.dumps(
        {"filter_jit_call_us": per_call_us(fwd_eqx), "jax_jit_call_us": per_call_us(fwd_jax)}
    )
)
