# /// script
# dependencies = ["diffrax"]
# ///
# An adaptive ODE solve with diffrax on CPU, the shape of the reports that diffrax's solves slowed
# down from jax 0.4.32 on (https://github.com/patrick-kidger/diffrax/issues/518, and the MWE of
# https://github.com/patrick-kidger/diffrax/issues/711): Tsit5 with a PID step-size controller on a
# small stiff-ish system, every step saved; the solve timed after its first (compiling) call.
# `--with numpy` on a triage makes numpy a declared library too, which moves with jax (2.0.1 as of
# 0.4.31, 2.1.1 as of 0.4.33).
import json
import time

import jax
import jax.numpy as jnp
from diffrax import ODETerm, PIDController, SaveAt, Tsit5, diffeqsolve


def vector_field(t, y, args):
    lna, temperature = y
    rho = temperature**4 + args / jnp.exp(lna) ** 4
    hubble = rho**0.5
    return (hubble, -hubble * temperature)


@jax.jit
def solve(rho_extra):
    solution = diffeqsolve(
        ODETerm(vector_field),
        Tsit5(),
        t0=0.0,
        t1=100.0,
        dt0=None,
        y0=(0.0, 8.6),
        args=rho_extra,
        saveat=SaveAt(steps=True),
        stepsize_controller=PIDController(rtol=1e-8, atol=1e-10),
        max_steps=512,
    )
    return jnp.exp(solution.ys[0])


jax.block_until_ready(solve(830.0))
times = []
for _ in range(20):
    start = time.perf_counter()
    jax.block_until_ready(solve(830.0))
    times.append(time.perf_counter() - start)
print(json.dumps({"solve_ms": sorted(times)[len(times) // 2] * 1e3}))
