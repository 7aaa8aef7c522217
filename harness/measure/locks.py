"""The locks measurement takes turns on: the machine's (one case process measuring at a time), a
results folder's (one run storing into it) and a venv's (one run making it).

They are files in one folder every user shares (``/tmp``, or ``HARNESS_LOCK_DIR``), so two users'
runs exclude each other too: created writable by everyone whatever the umask, opened read-only when
they exist (``flock`` needs no more, and a sticky folder refuses opening another's to create it). A
lock that cannot be used gives one warning and falls back to ``XDG_RUNTIME_DIR``'s, or none.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

# Where the machine-wide locks are; not tempfile's folder, which may differ from user to user.
LOCK_DIR_VARIABLE = "HARNESS_LOCK_DIR"
# The measurement lock's folder where it is not the others': a test suite's workers each measure on
# their own, while they share the venv locks (two of them would make one venv at once).
TIMING_LOCK_DIR_VARIABLE = "HARNESS_TIMING_LOCK_DIR"
TIMING_LOCK = "jax-repro-harness-timing.lock"
SHARED_LOCK_DIR = "/tmp"
EVERYONE_READ_WRITE = 0o666
Progress = Callable[[str], None]
Lock = AbstractContextManager[float]  # held inside ``with``; its value: the seconds spent waiting


@dataclass
class Aside:
    """The seconds this process spent waiting for a lock or installing under one: a why's time
    budget leaves them out (``own_since``), so what it finds does not depend on what else runs.
    Nested spans count once; only the main thread's count (a background install runs beside)."""

    clock: Callable[[], float] = time.monotonic
    total: float = 0.0
    depth: int = 0
    since: float = 0.0

    @contextmanager
    def span(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        if self.depth == 0:
            self.since = self.clock()
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            if self.depth == 0:
                self.total += self.clock() - self.since

    def seconds(self) -> float:
        """Every span's seconds so far, the one under way too."""
        return self.total + (self.clock() - self.since if self.depth else 0.0)

    def mark(self) -> tuple[float, float]:
        """Now, on the clock and aside: where ``own_since`` counts from."""
        return self.clock(), self.seconds()

    def own_since(self, mark: tuple[float, float]) -> float:
        """The seconds of this process's own work since ``mark``: less the spans meanwhile."""
        started, aside = mark
        return (self.clock() - started) - (self.seconds() - aside)


ASIDE = Aside()  # this process's: every lock below counts its waits here


class LockUnusable(Exception):
    """Why a lock file cannot be used, in a few words."""


class LockHeld(Exception):
    """Another run holds the lock, and the caller would not wait (``wait=False``)."""


def _open_lock(path: Path) -> int:
    """A descriptor of the lock file, made for every user if missing; else LockUnusable."""
    # O_NONBLOCK: a FIFO planted at the path would block the open until a writer came.
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    create = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(3):  # created or removed by another run meanwhile: look again
        try:
            fd = os.open(path, flags)
        except FileNotFoundError:
            try:
                fd = os.open(path, create, 0o600)
            except FileExistsError:
                continue
            except FileNotFoundError:
                raise LockUnusable(f"its folder {path.parent} does not exist") from None
            except OSError as exc:
                raise LockUnusable(f"it cannot be created ({exc.strerror})") from None
            os.fchmod(fd, EVERYONE_READ_WRITE)  # the mode asked of open is cut by the umask
        except PermissionError:
            unreadable = "another user's lock file there is not readable by this user"
            raise LockUnusable(unreadable) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LockUnusable("a symbolic link is at its path") from None
            raise LockUnusable(f"it cannot be opened ({exc.strerror})") from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise LockUnusable("something other than a file (a folder?) is at its path")
        return fd
    raise LockUnusable("it kept being replaced while it was opened")


# Warnings already given: a run takes the timing lock once per case process, and says so once.
_WARNED: set[str] = set()


def _warn_once(line: str, progress: Progress) -> None:
    if line not in _WARNED:
        _WARNED.add(line)
        progress(line)


def _first_usable(name: str, progress: Progress) -> int | None:
    folder = os.environ.get(LOCK_DIR_VARIABLE) or SHARED_LOCK_DIR
    if name == TIMING_LOCK:
        folder = os.environ.get(TIMING_LOCK_DIR_VARIABLE) or folder
    # Where the lock may be, first choice first, with what the fallback leaves unexcluded.
    candidates = [(Path(folder) / name, "")]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_dir():
        candidates.append((Path(runtime) / name, "other users' runs"))
    tried: list[str] = []
    for path, unexcluded in candidates:
        try:
            fd = _open_lock(path)
        except LockUnusable as exc:
            tried.append(f"{path}: {exc}")
            continue
        if tried:
            fallback = f"using {path}, which does not exclude {unexcluded}"
            _warn_once(f"harness: warning: the lock {tried[0]}; {fallback}", progress)
        return fd
    without = "measuring without waiting for other runs"
    _warn_once(f"harness: warning: no usable lock ({'; '.join(tried)}); {without}", progress)
    return None


@contextmanager
def _exclusive(name: str, waiting: str, progress: Progress, wait: bool = True) -> Iterator[float]:
    started = time.monotonic()
    fd = _first_usable(name, progress)
    if fd is None:
        yield 0.0
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                raise LockHeld(name) from None
            progress(f"    {waiting} (lock {name})")
            with ASIDE.span():  # another run's turn: none of this run's own work
                fcntl.flock(fd, fcntl.LOCK_EX)
        yield time.monotonic() - started
    finally:
        os.close(fd)  # closing the last descriptor releases the lock


def timing_lock(progress: Progress) -> Lock:
    """Hold the machine-wide measurement lock: two processes measuring at once slow each other."""
    return _exclusive(TIMING_LOCK, "waiting for another sweep's measurement to finish", progress)


def _path_lock(kind: str, path: Path, waiting: str, progress: Progress, wait: bool = True) -> Lock:
    digest = hashlib.sha256(os.fsencode(path.resolve())).hexdigest()[:16]
    return _exclusive(f"jax-repro-harness-{kind}-{digest}.lock", waiting, progress, wait)


def folder_lock(results_dir: Path, progress: Progress) -> Lock:
    """Hold a results folder for one run, so two sweeps into it measure each cell once."""
    waiting = f"waiting for another sweep into {results_dir} to finish"
    return _path_lock("results", results_dir, waiting, progress)


def stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@contextmanager
def venv_lock(venv: Path, progress: Progress = stderr_line, wait: bool = True) -> Iterator[float]:
    """Hold a venv while it is checked and made, so two runs make it once; held or waited for, it
    counts ``ASIDE``. ``wait=False``: LockHeld at once where a run holds it (``prune`` skips it)."""
    waiting = f"waiting while another install (this run's or another's) makes {venv}"
    with ASIDE.span(), _path_lock("venv", venv, waiting, progress, wait) as waited:
        yield waited
