# /// script
# dependencies = ["equinox"]
# ///
# Making, flattening and unflattening a small `eqx.Module`, the per-module overhead of
# https://github.com/patrick-kidger/equinox/issues/961 ("Slow Initialization": many small modules,
# each operation paying Module's own cost), cut in equinox 0.13.3 by
# https://github.com/patrick-kidger/equinox/pull/1140 ("Avoids `dir` call to reduce initialization
# time") and https://github.com/patrick-kidger/equinox/pull/1119 (flatten/unflatten code
# generation): a change that comes with the library, which a triage of jax 0.8.2 → 0.8.3 sees as
# equinox 0.13.2 → 0.13.4 resolves with each release.  Each figure is the best of 5 repeats of 2,000
# operations, in us.
import json
import timeit

import equinox as eqx
import jax
import jax.numpy as jnp


class Polar(eqx.Module):
    r: jax.Array
    theta: jax.Array


r, theta = jnp.ones(2), jnp.zeros(2)
point = Polar(r, theta)
leaves, treedef = jax.tree_util.tree_flatten(point)


def per_op_us(fn):
    return min(timeit.repeat(fn, number=2000, repeat=5)) / 2000 * 1e6


print(
    json.dumps(
        {
            "init_us": per_op_us(lambda: Polar(r, theta)),
            "flatten_us": per_op_us(lambda: jax.tree_util.tree_flatten(point)),
            "unflatten_us": per_op_us(lambda: jax.tree_util.tree_unflatten(treedef, leaves)),
        }
    )
)
