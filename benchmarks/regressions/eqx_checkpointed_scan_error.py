# /// script
# dependencies = ["equinox==0.11.4"]
# ///
# Equinox's checkpointed scan under a jitted vjp, as reported in
# https://github.com/jax-ml/jax/issues/23690 ("jax, jaxlib versions 0.4.32 and 0.4.33 causing
# errors"): runs on jax/jaxlib 0.4.31 and raises "ValueError: Closure-converted function called with
# different dynamic arguments to the example arguments provided." on 0.4.33 (equinox held at 0.11.4
# on both).  The reporter's program, with the final print added.
import equinox.internal as eqxi
import jax
import jax.lax as lax
import jax.numpy as jnp
import jax.random as jr
import jax.tree_util as jtu

init = (0, 2)
xs = (jnp.arange(4.0), jnp.arange(8.0).reshape(4, 2))


def lax_run(init, xs):
    final, ys = lax.scan(lambda car, x: (car, x), init, xs)
    return ys, final


def run(init, xs):
    final, ys = eqxi.scan(lambda car, x: (car, x), init, xs, length=4, kind="checkpointed")
    return ys, final


lax_out, lax_vjp_fn, lax_aux = jax.vjp(lax_run, init, xs, has_aux=True)
ct_out = jtu.tree_map(lambda x: jr.normal(jax.random.PRNGKey(0), x.shape, x.dtype), lax_out)


@jax.jit
def vjp_run(init, xs, ct_out):
    out, vjp_fn, aux = jax.vjp(run, init, xs, has_aux=True)
    out = (out, aux)
    grad = vjp_fn(ct_out)
    return out, grad


out, grad = vjp_run(init, xs, ct_out)
print("ok")
