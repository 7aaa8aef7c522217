"""The harness's end of a side's worker (``harness.measure.worker``): start it, start case
processes, stop them. A worker is started in a session of its own, so a Ctrl-C at the terminal
reaches the harness alone, which then kills the running case process with its whole process group
and ends the worker; and it ends with the harness (Linux), taking its case process with it.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.host.environment import REPO_ROOT, scrub
from harness.measure.worker import worker_dies_with_harness

__all__ = ["Exited", "Worker", "WorkerGone", "kill_group"]

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
    """One side's worker process and the JSON lines exchanged with it."""

    def __init__(
        self, interpreter: str, environ: dict[str, str], isolation: str, log: Path
    ) -> None:
        self.log = log
        # The worker runs this checkout's harness whatever the interpreter has installed, so
        # the two ends of the protocol always match.
        path = os.pathsep.join(p for p in (str(REPO_ROOT), environ.get("PYTHONPATH", "")) if p)
        with open(log, "ab") as handle:
            self.proc = subprocess.Popen(
                [interpreter, "-m", "harness.measure.worker", "--isolation", isolation],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=handle,
                env={**environ, "PYTHONPATH": path},
                start_new_session=True,
                preexec_fn=worker_dies_with_harness,
            )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin = self.proc.stdin
        self._stdout = self.proc.stdout.fileno()
        self._buffer = b""
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
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(self.running, signal.SIGKILL)
                self.running = None
                raise self._ended()
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            raise WorkerGone(f"the worker said something unreadable: {line[:200]!r}") from None
        if not isinstance(message, dict):
            raise WorkerGone(f"the worker said something unreadable: {line[:200]!r}")
        return message

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
        """Start a case process; its pid."""
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
        """How the running case process ended, or None if it is still running at the timeout."""
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
