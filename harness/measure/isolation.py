"""How a worker sets each case process apart (``fork`` or ``spawn``, and the default) and the CPUs
it is pinned to before JAX starts (``--affinity``, CPU lists as pyperf's).

``fork`` forks the worker, which imported JAX without starting a backend: a case process skips a
1.5 s import and still starts its own backend with the side's XLA flags; ``spawn`` ``exec``s a new
``python -m harness.measure.child``. Pinned to one core, a scan case ran at 28.8–29.8 ms over 8
processes, unpinned at 32.8–34.4 ms on a quiet machine: moving between cores adds to the spread.
"""

from __future__ import annotations

import os
import re

from harness.errors import UsageError

ISOLATIONS = ("fork", "spawn")
GPU_PLATFORMS = ("cuda", "rocm", "gpu")


def default_isolation(environ: dict[str, str] | None = None) -> str:
    """``fork``, but ``spawn`` where ``JAX_PLATFORMS`` pins a GPU: CUDA forbids a fork once
    initialised, which JAX's import should not do but no release is verified not to; a GPU run
    compiles for seconds, so a fresh interpreter's 1.5 s import buys certainty."""
    platforms = (os.environ if environ is None else environ).get("JAX_PLATFORMS", "")
    return "spawn" if any(p.strip() in GPU_PLATFORMS for p in platforms.split(",")) else "fork"


# Linux builds for at most 8192 CPUs (NR_CPUS): a larger number names no CPU anywhere, and checking
# that before a range is expanded keeps "0-99999999999" from filling memory.
MAX_CPU = 8191
MAX_LIST_CHARS = 40_000  # each of the 8192 CPUs written out singly fits: a longer text is no list
DIGITS = re.compile(r"[0-9]+")  # ASCII only: str.isdigit() also takes "１" and "²"


def parse_cpu_list(text: str) -> list[int]:
    """``"0"``, ``"0,1"``, ``"0-3,6"`` → the sorted CPU numbers; ValueError for anything else."""
    if len(text) > MAX_LIST_CHARS:
        long = f"a CPU list of {len(text)} characters is not one (at most {MAX_LIST_CHARS})"
        raise ValueError(f"{text[:40]!r}…: {long}")
    cpus: set[int] = set()
    for part in text.split(","):
        first, dash, last = part.strip().partition("-")
        if not DIGITS.fullmatch(first) or (dash and not DIGITS.fullmatch(last)):
            raise ValueError(f"{text[:40]!r} is not a CPU list (e.g. 0 or 0,1 or 0-3)")
        for number in (first, last) if dash else (first,):
            # Compared by length first: int() of thousands of digits is itself slow.
            digits = number.lstrip("0") or "0"
            if len(digits) > len(str(MAX_CPU)) or int(digits) > MAX_CPU:
                above = f"CPU {digits[:20]} is above {MAX_CPU}, the most Linux has"
                raise ValueError(f"{text[:40]!r}: {above}")
        low, high = int(first), int(last) if dash else int(first)
        if low > high:
            raise ValueError(f"{text[:40]!r}: the range {part.strip()} runs backwards")
        cpus.update(range(low, high + 1))
    return sorted(cpus)


def available_cpus() -> list[int] | None:
    """The CPUs this process may run on; None where the platform does not say."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def check_affinity(cpus: list[int]) -> list[int]:
    """``cpus`` when this machine lets the harness use every one of them; UsageError otherwise."""
    available = available_cpus()
    if available is None:
        raise UsageError("--affinity: this platform cannot pin processes to CPUs")
    missing = [cpu for cpu in cpus if cpu not in available]
    if missing:
        shown = ",".join(str(cpu) for cpu in available)
        raise UsageError(f"--affinity: CPU {missing[0]} is not available here (available: {shown})")
    return cpus
