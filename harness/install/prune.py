"""The venvs not used for some days, found, sized and removed (``jax-repro prune``).

Only the harness's venvs (``PREFIXES``) directly in a venvs folder (a clone's ``.nox/``, the
installed command's cache) are looked at: never nox's session venvs, a link, or anything outside.
A venv was last used when its stamp says (``venvs.USED``), else when it was made; one whose lock a
run holds is kept, and each is removed under its lock. What removal frees is counted as the disk
does: uv links files to its cache, so only files whose every link is in the removed venvs count.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path

from harness.install.script_envs import RECORD
from harness.install.venvs import INSTALLED, USED
from harness.measure.locks import LockHeld, venv_lock

PREFIXES = ("release-jax-", "plain-jax-", "script-env-", "commit-")
DAY_S = 86400.0
RECENT = "used lately"
NOT_REMOVED = "not removed whole"


@dataclass(frozen=True)
class Venv:
    path: Path
    last_used: float  # seconds since the epoch


@dataclass(frozen=True)
class Pruned:
    """What a prune removed (or, in a dry run, would), what it kept and why, and the bytes: those
    the removed venvs' files took on the disk, and those their removal freed."""

    removed: list[Venv]
    kept: list[tuple[Venv, str]]
    taken: int
    freed: int


def harness_venvs(folder: Path) -> list[Venv]:
    """The harness's venvs directly in ``folder`` (none where it is missing), oldest use first."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    found = [
        Venv(Path(entry.path), last_used(Path(entry.path)))
        for entry in entries
        if entry.name.startswith(PREFIXES) and entry.is_dir(follow_symlinks=False)
    ]
    return sorted(found, key=lambda venv: (venv.last_used, venv.path.name))


def last_used(venv: Path) -> float:
    """When ``venv`` was last taken by a run (its stamp), else made: the newest of them."""
    times = []
    for path in (venv, venv / USED, venv / INSTALLED, venv / RECORD):
        with suppress(OSError):
            times.append(path.lstat().st_mtime)
    return max(times, default=0.0)


def _files(venv: Path) -> Iterator[os.stat_result]:
    """Every file, link and folder under ``venv`` and itself, links not followed."""
    try:
        yield venv.lstat()
    except OSError:
        return
    for root, folders, files in os.walk(venv, followlinks=False):
        for name in (*folders, *files):
            try:
                yield os.lstat(os.path.join(root, name))
            except OSError:
                continue  # removed meanwhile


def disk_bytes(venvs: Iterable[Path]) -> tuple[int, int]:
    """The bytes ``venvs`` take on the disk, and what their removal frees (uv's links stay)."""
    seen: dict[tuple[int, int], list[int]] = {}  # a file: [links seen, its links, its bytes]
    for venv in venvs:
        for found in _files(venv):
            # a folder's links are its entries' names for it: removed whole, it goes
            links = 1 if stat.S_ISDIR(found.st_mode) else found.st_nlink
            entry = seen.setdefault((found.st_dev, found.st_ino), [0, links, found.st_blocks * 512])
            entry[0] += 1
    taken = sum(size for _, _, size in seen.values())
    return taken, sum(size for count, links, size in seen.values() if count >= links)


def prune(venvs: Iterable[Venv], days: int, now: float, dry_run: bool) -> Pruned:
    """Each venv unused for ``days`` removed under its lock (``dry_run``: counted), others kept."""
    kept: list[tuple[Venv, str]] = []
    with ExitStack() as locks:
        held = []
        for venv in venvs:
            if now - venv.last_used < days * DAY_S:
                kept.append((venv, RECENT))
                continue
            try:
                locks.enter_context(venv_lock(venv.path, wait=False))
                held.append(venv)
            except LockHeld:
                kept.append((venv, "a run is making or checking it"))
        taken, freed = disk_bytes(venv.path for venv in held)
        if dry_run:
            return Pruned(held, kept, taken, freed)
        removed = []
        for venv in held:
            try:
                shutil.rmtree(venv.path)
                removed.append(venv)
            except OSError as exc:
                kept.append((venv, f"{NOT_REMOVED}: {exc.strerror or exc}"))
        # what a failed removal left is still on the disk
        left = disk_bytes(venv.path for venv, _ in kept if venv in held)[0]
        return Pruned(removed, kept, max(0, taken - left), max(0, freed - left))
