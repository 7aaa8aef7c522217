"""NVIDIA GPUs as seen without JAX, from ``nvidia-smi`` and the driver's device files: the noxfile
skips a GPU session before installing anything, and the parent names the GPU in a result.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

# Fields every driver of the last decade answers; asking for one it does not know
# (compute_cap before R510) makes nvidia-smi refuse the whole query.
QUERY_FIELDS = ("name", "driver_version", "memory.total")
SMI_TIMEOUT_S = 20
_CUDA_VERSION = re.compile(r"CUDA Version:\s*([0-9.]+)")


@dataclass(frozen=True)
class Smi:
    """What ``nvidia-smi`` said: a dict per GPU, the driver's CUDA version, or why it said none."""

    gpus: tuple[dict[str, str], ...] = ()
    cuda_driver: str | None = None
    failure: str | None = None


def _run(command: list[str]) -> tuple[int, str]:
    # Errors replaced: a GPU name in a non-UTF-8 locale is still a name, not a UnicodeDecodeError.
    done = subprocess.run(
        command, capture_output=True, errors="replace", timeout=SMI_TIMEOUT_S, check=False
    )
    return done.returncode, (done.stdout if done.returncode == 0 else done.stderr or done.stdout)


def query(executable: str = "nvidia-smi") -> Smi:
    found = shutil.which(executable)
    if found is None:
        return Smi(failure=f"{executable} not found on PATH (no NVIDIA driver here)")
    try:
        fields = f"--query-gpu={','.join(QUERY_FIELDS)}"
        code, text = _run([found, fields, "--format=csv,noheader,nounits"])
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Smi(failure=f"{executable} did not answer: {type(exc).__name__}")
    if code != 0:
        last = (text.strip().splitlines() or ["no output"])[-1]
        return Smi(failure=f"{executable} failed with exit code {code}: {last[:200]}")
    rows = [line.split(",") for line in text.strip().splitlines() if line.strip()]
    gpus = tuple(dict(zip(QUERY_FIELDS, map(str.strip, row), strict=False)) for row in rows)
    if not gpus:
        return Smi(failure=f"{executable} lists no GPU")
    try:  # the newest CUDA the driver supports: in plain nvidia-smi's banner, in no query
        code, text = _run([found])
    except (OSError, subprocess.TimeoutExpired):
        code = 1
    match = _CUDA_VERSION.search(text) if code == 0 else None
    return Smi(gpus=gpus, cuda_driver=match.group(1) if match else None)


def absence_reason(executable: str = "nvidia-smi", dev: Path = Path("/dev")) -> str | None:
    """None when an NVIDIA GPU is usable here, else why not, in words fit for a skipped session."""
    smi = query(executable)
    if smi.failure:
        return smi.failure
    # The driver's per-GPU device files: a container started without ``--gpus`` has none; WSL2
    # exposes GPUs through /dev/dxg instead.
    if not any(dev.glob("nvidia[0-9]*")) and not (dev / "dxg").exists():
        container = "a container started without --gpus?"
        return f"{executable} lists a GPU but there is no {dev}/nvidia0 ({container})"
    return None
