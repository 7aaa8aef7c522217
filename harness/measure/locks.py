"""The locks measurement takes turns on: the machine's (one case process measuring at a time, from any sweep) and
a results folder's (one run storing into it at a time, so two sweeps into it measure each cell once)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def _exclusive(path: Path, waiting: str, progress: Callable[[str], None]) -> Iterator[float]:
    with open(path, "a+") as handle:
        started = time.monotonic()
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(f"    {waiting} (lock {path})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield time.monotonic() - started
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _runtime_dir() -> Path:
    return Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())


@contextmanager
def timing_lock(progress: Callable[[str], None]) -> Iterator[float]:
    """Hold the machine-wide measurement lock; yields the seconds spent waiting for it.

    Two case processes measuring at once would slow each other down and both report
    nonsense, so case processes from any sweep on this machine take turns.
    """
    path = _runtime_dir() / "jax-repro-harness-timing.lock"
    with _exclusive(path, "waiting for another sweep's measurement to finish", progress) as waited:
        yield waited


@contextmanager
def folder_lock(results_dir: Path, progress: Callable[[str], None]) -> Iterator[float]:
    """Hold a results folder for one run, so two sweeps into it measure each cell once."""
    digest = hashlib.sha256(str(results_dir.resolve()).encode()).hexdigest()[:16]
    path = _runtime_dir() / f"jax-repro-harness-results-{digest}.lock"
    with _exclusive(path, f"waiting for another sweep into {results_dir} to finish", progress) as waited:
        yield waited
