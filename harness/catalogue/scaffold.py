"""``new NAME``: a working case written to ``cases/NAME.py``, which runs, passes the linters and the
tests, and exports; its ``TODO`` lines say what to replace.
"""

from __future__ import annotations

import keyword
import re
import sys
from pathlib import Path

from harness.catalogue.discovery import NOT_CASES
from harness.errors import UsageError
from harness.names import inside

CASE_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
# A case module named like one it imports (or like the harness's own packages) would shadow it.
SHADOWED = {"jax", "jaxlib", "numpy", "cases", "harness", "tests", "noxfile"}
ANOTHER = "choose another name"
EXISTS = f"exists already: {ANOTHER}, or edit that file"
PAGE_NAMES = {"index", "readme"}  # a report's own pages: a case page of that name would be renamed

TEMPLATE = '''\
"""TODO: one line saying what {name} measures.

Source: TODO: say, in the project's own words, what the discussion named in ``SOURCE``
reports: what the user ran (the code, the sizes, the release and device), what they saw
(their numbers), and what was answered.  Until then this is the scaffold's example: a
jitted ``step`` called ``K`` times in a Python loop on an ``N``×``N`` matrix.
"""

import jax
import jax.numpy as jnp
import numpy as np

SOURCE = "TODO: the public thread's URL, or its title where it has no URL"
CLAIM = (
    "Calling a jitted step K times in a Python loop returns control to Python before the work "
    "completes: dispatch takes under half of the time to completion."
)
# TODO: the discussion's sizes: an inclusive integer range per size, and its own configurations
# scaled to seconds on a 2-core machine (literals only: the harness reads them without importing).
SIZE_SPACE = {{"N": (16, 2048), "K": (1, 1000)}}
ANCHORS = [{{"N": 256, "K": 20}}]
COST = {{"bytes": "4 * 3 * N * N", "flops": "2 * K * N ** 3"}}
ASYNC_FRACTION = 0.5


@jax.jit
def step(x):
    return jnp.tanh(x @ x)


def _matrix(N):
    # Inputs from NumPy: jax.random would compile programs of its own in every fresh case process.
    x = np.random.default_rng(0).standard_normal((N, N), dtype=np.float32) / np.float32(N)
    return jnp.asarray(x).block_until_ready()


def programs(N, K):
    x = _matrix(N)

    def loop():
        y = x
        for _ in range(K):
            y = step(y)
        return y

    return {{"loop": [("K calls of step", loop)]}}


def compiled(N, K):
    return {{"step": (step, (_matrix(N),))}}


def verdict(m, N, K):
    loop = m["loop"]
    fraction = loop["dispatch_ns"] / loop["wall_ns"]
    evidence = (
        f"dispatch {{loop['dispatch_ns'] / 1e6:.3f}} ms of {{loop['wall_ns'] / 1e6:.3f}} ms "
        "to completion "
        f"({{fraction:.0%}}); {{loop['wall_ns'] / K / 1e3:.1f}} µs per call at N={{N}}"
    )
    return fraction < ASYNC_FRACTION, evidence
'''


def name_problem(name: str, cases_dir: Path) -> str | None:
    """Why ``name`` cannot be a new case in ``cases_dir``, or None."""
    if not CASE_NAME.fullmatch(name):
        rule = "lower case letters, digits and _, a letter first, at most 64"
        return f"{name[:40]!r} is not a case name: {rule}"
    if keyword.iskeyword(name) or name in {*NOT_CASES, *SHADOWED, *sys.stdlib_module_names}:
        return f"{name!r} is taken by Python, the standard library, JAX or the harness: {ANOTHER}"
    if name in PAGE_NAMES:
        return f"{name!r} is the name of a report's own page ({name}.md): {ANOTHER}"
    if (cases_dir / f"{name}.py").exists():
        return f"case file {cases_dir / f'{name}.py'} {EXISTS}"
    return None


def write_case(name: str, cases_dir: Path) -> Path:
    """Write the template as ``cases_dir/NAME.py``; UsageError: a bad name, an existing file."""
    if not cases_dir.is_dir():
        raise UsageError(f"cases folder not found: {cases_dir}")
    problem = name_problem(name, cases_dir)
    if problem:
        raise UsageError(problem)
    path = inside(cases_dir, f"{name}.py")
    try:
        with path.open("x") as file:  # "x": never overwrite, even one created meanwhile
            file.write(TEMPLATE.format(name=name))
    except FileExistsError:
        raise UsageError(f"case file {path} {EXISTS}") from None
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
