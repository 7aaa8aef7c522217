"""The harness's end of the workers: one per side (``Worker``), started together and restarted when
one died, each side's host facts taken from its worker (``WorkerPool``); and whether a side's venv
changed under the running command (``VenvGone``). A worker has a session of its own, so a Ctrl-C
reaches the harness alone, which kills the case process's group and ends the worker.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import selectors
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.host.environment import REPO_ROOT, scrub, shown_path
from harness.measure import venv_files
from harness.measure.guardian import die_with_parent
from harness.measure.sides import Side
from harness.store.schema import HostFacts, SchemaError, read_record

# Seconds a worker may take to import JAX and take the host's facts on a busy machine.
READY_TIMEOUT_S = 300.0
# Seconds to wait for the worker to report a case process it was told to kill.
REAP_TIMEOUT_S = 30.0
# Seconds an idle worker gets to end once its stdin closes; it holds no state, then is killed.
CLOSE_TIMEOUT_S = 5.0
LOG_TAIL_LINES = 15


class WorkerGone(Exception):
    """The worker ended (or could not start); its case process, if any, died with it."""


@dataclass(frozen=True)
class Exited:
    """How a case process ended, as the worker reaped it."""

    returncode: int  # negative: killed by that signal
    cpu_s: float  # user and system CPU seconds of the case process and the children it waited for
    maxrss_bytes: int


def kill_group(pid: int) -> None:
    """Kill a case process and its group; right after the fork the group may not exist yet."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


class Worker:
    def __init__(
        self, interpreter: str, environ: dict[str, str], isolation: str, log: Path
    ) -> None:
        self.log = log
        # This checkout's harness, whatever the interpreter has: the protocol's ends always match.
        path = os.pathsep.join(p for p in (str(REPO_ROOT), environ.get("PYTHONPATH", "")) if p)
        with open(log, "ab") as handle:
            self.proc = subprocess.Popen(
                [interpreter, "-m", "harness.measure.worker", "--isolation", isolation],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=handle,
                env={**environ, "PYTHONPATH": path},
                start_new_session=True,
                # SIGTERM, not SIGKILL, when the harness dies: the worker then ends its case
                # process's whole tree (``worker.end_all``), not only the process.
                preexec_fn=functools.partial(die_with_parent, signal.SIGTERM),
            )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin, self._stdout, self._buffer = self.proc.stdin, self.proc.stdout.fileno(), b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._stdout, selectors.EVENT_READ)
        self.running: int | None = None  # the pid of the case process it runs now
        self.facts: dict[str, Any] = {}
        self.closed = False

    def _ended(self) -> WorkerGone:
        code = self.proc.wait()
        return WorkerGone(f"the worker ended (exit code {code})\n{self.log_tail()}".strip())

    def log_tail(self) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return scrub("\n".join(text.strip().splitlines()[-LOG_TAIL_LINES:]))

    def _message(self, timeout: float | None) -> dict[str, Any] | None:
        """The next message, or None at the timeout; WorkerGone when the worker has ended."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not self._selector.select(left):
                return None
            chunk = os.read(self._stdout, 65536)
            if not chunk:
                # it died with the worker; what it started in its group did not
                if self.running is not None:
                    kill_group(self.running)
                self.running = None
                raise self._ended()
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        with contextlib.suppress(json.JSONDecodeError):
            message = json.loads(line)
            if isinstance(message, dict):
                return message
        raise WorkerGone(f"the worker said something unreadable: {line[:200]!r}")

    def _expect(self, kind: str, timeout: float | None) -> dict[str, Any] | None:
        message = self._message(timeout)
        if message is None:
            return None
        if kind not in message:
            raise WorkerGone(f"the worker answered {message!r} where {kind!r} was due")
        return dict(message[kind])

    def ready(self, timeout: float = READY_TIMEOUT_S) -> dict[str, Any]:
        """Wait until the worker imported what it preloads; its facts (``host``, ``release``...)."""
        facts = self._expect("ready", timeout)
        if facts is None:
            self.close()
            late = f"the worker was not ready within {timeout:g} s\n{self.log_tail()}"
            raise WorkerGone(late.strip())
        self.facts = facts
        return facts

    def start(self, request: dict[str, Any]) -> int:
        try:
            self._stdin.write((json.dumps({"run": request}) + "\n").encode())
            self._stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._ended() from None
        started = self._expect("started", READY_TIMEOUT_S)
        if started is None:
            raise WorkerGone("the worker did not start the case process")
        self.running = int(started["pid"])
        return self.running

    def wait(self, timeout: float | None) -> Exited | None:
        """How the running case process ended; None while it runs at the timeout."""
        exited = self._expect("exited", timeout)
        if exited is None:
            return None
        self.running = None
        return Exited(
            int(exited["returncode"]), float(exited["cpu_s"]), int(exited["maxrss_bytes"])
        )

    def kill(self) -> Exited | None:
        """Kill the running case process with its group; how it ended, once the worker reaped it."""
        if self.running is None:
            return None
        kill_group(self.running)
        try:
            exited = self.wait(REAP_TIMEOUT_S)
        except WorkerGone:
            return None
        if exited is None:  # the worker is stuck: end it, which ends the case process too
            self.close()
        return exited

    def close(self) -> None:
        """End the worker (and a case process it still runs); waits briefly, then kills."""
        if self.closed:
            return
        self.closed = True
        if self.running is not None:
            kill_group(self.running)
            self.running = None
        with contextlib.suppress(OSError):
            self._stdin.close()
        try:
            self.proc.wait(CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._selector.close()
        with contextlib.suppress(OSError):
            self.proc.stdout.close()  # type: ignore[union-attr]


# What a process says where jax is not in its venv (never the script's doing: every venv has jax).
JAX_MISSING = ("No module named 'jax'", "No module named 'jaxlib'")
JAX_IN_A_VENV = "lib/python*/site-packages/jax/__init__.py"


class VenvGone(HarnessError):
    """A side's venv changed under the running command: the machine's fault, not the script's."""


def venv_gone(side: Side, output: str = "") -> str:
    """Why ``side``'s venv is no longer the one prepared, "" where nothing says so."""
    python = Path(side.interpreter)
    if not python.exists():
        return f"{shown_path(python, anywhere=True)} is gone"
    venv = python.parent.parent
    # A venv of the harness's (not a system's Python), and jax truly gone from it: not the script's
    # own subprocess under another Python.
    ours = (venv / "pyvenv.cfg").is_file()
    if ours and not any(venv.glob(JAX_IN_A_VENV)) and any(m in output for m in JAX_MISSING):
        return f"jax is gone from {shown_path(venv, anywhere=True)}"
    # A file the process died on that is not what was installed (a truncated module): marked, so
    # that preparing the venv again installs it again.
    bad = venv_files.damaged(venv, output) if ours and output else []
    if bad:
        venv_files.mark(venv, bad)
    bad = bad or (venv_files.marked(venv) if ours else [])
    if bad:
        more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
        return f"site-packages/{bad[0]}{more} no longer what its install recorded (RECORD's sha256)"
    return ""


def check_venv(side: Side, output: str = "") -> None:
    if why := venv_gone(side, output):
        raise VenvGone(
            f"the venv of side {side.label!r} changed under the running command ({why}; a clean-up "
            "or a disk fault outside the harness?): a fault of the machine, not of the script or "
            "of JAX; the venv is made anew and measured again"
        )


class DeviceHeld(HarnessError):
    """Another program holds the side's TPU: the machine's fault; its process is not kept."""


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

    def worker(self, side: Side) -> Worker:
        """The side's worker, ready; the first call starts every side's, a dead one is restarted."""
        running = self._workers.get(side.label)
        if running is None or running.closed or running.proc.poll() is not None:
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
            self.hosts[label] = read_record(HostFacts, worker.facts.get("host") or {}, "host")
        except SchemaError as exc:
            unreadable = f"the worker of side {label!r} sent unreadable host facts: {exc}"
            raise HarnessError(unreadable) from None

    def host(self, side: Side) -> HostFacts:
        """The side's host facts, its worker started for them if it never ran (a cell refused)."""
        if side.label not in self.hosts:
            self.worker(side)
        return self.hosts[side.label]
