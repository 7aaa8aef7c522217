"""The workers of a measurement's sides: one per side, started together, restarted when one died.

A side's worker (``harness.measure.launch``) runs every case process of that side; its host facts
(the machine, the release's versions, the devices) are what that side's results record.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from harness.errors import HarnessError
from harness.measure.launch import Worker, WorkerGone
from harness.measure.sides import Side
from harness.store.schema import HostFacts, SchemaError, parse_host


class WorkerPool:
    """A worker per side, each started in ``isolation`` with its side's interpreter and
    environment."""

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
        """The side's worker, ready; the first call starts every side's worker at once, a dead one
        is restarted."""
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
            raise HarnessError(f"the worker of side {side.label!r} did not start: {exc}") from None
        self._workers[side.label] = worker
        return worker

    def _ready(self, label: str, worker: Worker) -> None:
        try:
            worker.ready()
        except WorkerGone as exc:
            raise HarnessError(f"the worker of side {label!r} did not start: {exc}") from None
        try:
            self.hosts[label] = parse_host(worker.facts.get("host") or {})
        except SchemaError as exc:
            raise HarnessError(
                f"the worker of side {label!r} sent unreadable host facts: {exc}"
            ) from None

    def host(self, side: Side) -> HostFacts:
        """The side's host facts; its worker is started for them if it never ran (a cell refused on
        every side)."""
        if side.label not in self.hosts:
            self.worker(side)
        return self.hosts[side.label]
