"""The workers of a measurement's sides: one per side, started together, restarted when one died.

A side's worker (``harness.measure.launch``) runs every case process of that side; its host facts
(the machine, the release's versions, the devices) are what that side's results record.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from harness.errors import HarnessError
from harness.host.environment import shown_path
from harness.measure.launch import Worker, WorkerGone
from harness.measure.sides import Side
from harness.store.schema import HostFacts, SchemaError, parse_host

# What a process says where jax is not in its venv: never the script's doing, jax is in every venv
# the harness prepares.
JAX_MISSING = ("No module named 'jax'", "No module named 'jaxlib'")
JAX_IN_A_VENV = "lib/python*/site-packages/jax/__init__.py"


class VenvGone(HarnessError):
    """A side's venv changed or vanished under the running command (a clean-up outside the
    harness): a fault of the machine, not of the script; the process that met it is not kept."""


def venv_gone(side: Side, output: str = "") -> str:
    """Why ``side``'s venv is no longer the one prepared ("" where nothing says so): its interpreter
    is gone, or a process's ``output`` says jax is not in it."""
    python = Path(side.interpreter)
    if not python.exists():
        return f"{shown_path(python, anywhere=True)} is gone"
    venv = python.parent.parent
    # A venv of the harness's (not a system's Python), and jax truly gone from it: not the script's
    # own subprocess under another Python.
    gone = (venv / "pyvenv.cfg").is_file() and not any(venv.glob(JAX_IN_A_VENV))
    if gone and any(missing in output for missing in JAX_MISSING):
        return f"jax is gone from {shown_path(venv, anywhere=True)}"
    return ""


def check_venv(side: Side, output: str = "") -> None:
    """VenvGone where ``side``'s venv is no longer the one prepared (``venv_gone``)."""
    if why := venv_gone(side, output):
        raise VenvGone(
            f"the venv of side {side.label!r} changed under the running command ({why}; a clean-up "
            "outside the harness?): a fault of the machine, not of the script; the command again "
            "makes the venv anew and measures it"
        )


class WorkerPool:
    """A worker per side, started in ``isolation`` with its side's interpreter and environment."""

    def __init__(self, sides: list[Side], isolation: str) -> None:
        self.sides = sides
        self.isolation = isolation
        self._workers: dict[str, Worker] = {}
        self.hosts: dict[str, HostFacts] = {}  # per side label: the host facts its worker took
        self._started = 0
        self._scratch = Path(tempfile.mkdtemp(prefix="harness-workers-"))  # the workers' logs

    def close(self) -> None:
        for worker in self._workers.values():
            worker.close()
        self._workers.clear()
        for leftover in self._scratch.glob("*"):
            leftover.unlink(missing_ok=True)
        self._scratch.rmdir()

    def _alive(self, side: Side) -> bool:
        worker = self._workers.get(side.label)
        return worker is not None and not worker.closed and worker.proc.poll() is None

    def worker(self, side: Side) -> Worker:
        """The side's worker, ready; the first call starts every side's, a dead one is restarted."""
        if not self._alive(side):
            starting = [
                s for s in self.sides if s.label == side.label or s.label not in self._workers
            ]
            started = {each.label: self._start(each) for each in starting}
            for label, worker in started.items():
                self._ready(label, worker)
        return self._workers[side.label]

    def _start(self, side: Side) -> Worker:
        previous = self._workers.pop(side.label, None)
        if previous is not None:
            previous.close()
        log = self._scratch / f"worker-{self._started}.log"
        self._started += 1
        try:
            worker = Worker(side.interpreter, side.environment(), self.isolation, log)
        except OSError as exc:
            check_venv(side)
            raise HarnessError(f"the worker of side {side.label!r} did not start: {exc}") from None
        self._workers[side.label] = worker
        return worker

    def _ready(self, label: str, worker: Worker) -> None:
        try:
            worker.ready()
        except WorkerGone as exc:
            check_venv(next(s for s in self.sides if s.label == label), str(exc))
            raise HarnessError(f"the worker of side {label!r} did not start: {exc}") from None
        try:
            self.hosts[label] = parse_host(worker.facts.get("host") or {})
        except SchemaError as exc:
            unreadable = f"the worker of side {label!r} sent unreadable host facts: {exc}"
            raise HarnessError(unreadable) from None

    def host(self, side: Side) -> HostFacts:
        """The side's host facts, its worker started for them if it never ran (a cell refused)."""
        if side.label not in self.hosts:
            self.worker(side)
        return self.hosts[side.label]
