# A jitted rank-8 broadcast-multiply-reduce on CPU, as reported in
# https://github.com/jax-ml/jax/issues/39257 ("XLA:CPU __ynn_fusion (slinky) crashes or hangs on
# rank-7/8 broadcast-multiply-reduce"): runs on jax/jaxlib 0.10.1, and on Linux x86-64 kills the
# process on 0.10.2 (and 0.11.0): SIGSEGV on some CPUs, a hang on others.  The reporter's program,
# unchanged.
import jax
import jax.numpy as jnp


def f(obs, A):
    lik = jnp.sum(obs[..., None, None, None, None, None] * A, axis=2)  # -> (10,4,9,9,9,9,9)
    return jnp.log(jnp.maximum(lik, 2.220446049250313e-16))


obs = jnp.ones((10, 4, 6), jnp.float32)
A = jnp.ones((10, 4, 6, 9, 9, 9, 9, 9), jnp.float32)
r = jax.jit(f)(obs, A)  # <- SIGSEGV / hang on jaxlib 0.10.2 & 0.11.0, Linux x86-64
print(r.shape)
