"""Which machine a result was measured on, without saying whose machine it is.

Timings compare only within one machine. The id hashes a random token made once in the user's
cache (it tells apart machines of identical hardware, and says nothing about anyone) with the
hardware that sets the speed (CPU model and count, memory in whole GiB, GPU models: a resized VM,
or nodes sharing a home over NFS, change it). No hostname, user, MAC or serial goes in. Without a
token (a read-only home) the id rests on the hardware and says so; a CI runner is a new machine
each job, honestly.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

TOKEN_NAME = "machine-token"
TOKEN_CHARS = 256  # the token is 32 hex digits; a longer file is read only this far
ID_LENGTH = 16  # hex digits: 64 bits, far beyond the number of machines a catalogue meets
GIB = 1 << 30


def cache_folder(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "jax-repro-harness"


def machine_token(folder: Path) -> str:
    """This machine's random token, made on first use; two processes making it at once agree."""
    path = folder / TOKEN_NAME
    try:
        return _read_token(path)
    except FileNotFoundError:
        pass
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(16) + "\n")
        os.link(tmp, path)  # fails if another process got there first; its token wins
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    return _read_token(path)


def _read_token(path: Path) -> str:
    # At most a token's length, undecodable bytes replaced: a file planted there (a link to
    # /dev/zero, a binary) cannot exhaust memory or stop the run; it just reads as another token.
    with path.open(encoding="utf-8", errors="replace") as file:
        return file.read(TOKEN_CHARS).strip()


def hardware(
    cpu_model: str, cpu_count: int | None, memory_bytes: int | None, gpu_names: Sequence[str]
) -> dict[str, Any]:
    """The facts that enter the id; memory in whole GiB, so a kernel update's MiB do not count."""
    return {
        "cpu_model": cpu_model,
        "cpu_count": cpu_count,
        "memory_gib": None if memory_bytes is None else round(memory_bytes / GIB),
        "gpus": sorted(gpu_names),
    }


def machine_id(facts: Mapping[str, Any], token: str | None) -> str:
    text = json.dumps({"hardware": dict(facts), "token": token}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:ID_LENGTH]


def identify(facts: Mapping[str, Any], folder: Path | None = None) -> dict[str, str]:
    """``{"id": ..., "basis": ...}`` for a result's host facts."""
    folder = cache_folder() if folder is None else folder
    try:
        token: str | None = machine_token(folder)
    except OSError as exc:
        token, why = None, exc.strerror or type(exc).__name__
        basis = f"hardware only: no machine token ({why} in the cache folder)"
    else:
        basis = "machine token and hardware"
    return {"id": machine_id(facts, token), "basis": basis}
