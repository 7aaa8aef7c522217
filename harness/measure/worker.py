"""A side's long-lived worker: one case process per request, and how it ended (docs/measuring.md).

Run as ``INTERPRETER -m harness.measure.worker`` with the side's environment, it speaks JSON lines
(requests on stdin, answers on stdout; its own output, JAX's warnings included, goes to the log):
``{"ready": {...}}`` once it imported JAX without starting a backend (``fork`` only) and took the
host facts; ``{"run": {...}}`` answered ``{"started": {"pid"}}``, then ``{"exited": {"pid",
"returncode", "cpu_s", "maxrss_bytes"}}`` (from ``os.wait4``); anything else ``{"error": ...}``.
EOF on stdin ends it.

Nothing a case process starts outlives it: its process group is killed once it exited
(``wait_for``); as a child subreaper (Linux) the worker kills what left the group
(``end_leftovers``); on SIGTERM, sent when the harness dies (even by SIGKILL), it ends the case
process's tree (``end_all``), and a case process gets SIGKILL when the worker dies.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import signal
import sys
import traceback
import warnings
from pathlib import Path
from typing import IO, Any

from harness.measure.guardian import PR_SET_CHILD_SUBREAPER, die_with_parent, prctl
from harness.measure.isolation import ISOLATIONS

# Older JAX releases (0.4.26) warn on every ``os.fork()`` once imported; the worker never starts the
# backend whose threads the warning is about, so its forks are as safe as a new interpreter.
warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called", category=RuntimeWarning)

# Imported once by a ``fork`` worker, so that each case process starts with them loaded.
PRELOAD = ("jax", "jax.numpy", "numpy", "harness.measure.child")
# Exit code of a case process that ended by an exception outside the case's own code
# (pinning to CPUs failed, the case called sys.exit...); its log holds the traceback.
CASE_PROCESS_ERROR = 70
# Rounds of killing the worker's leftover children: each round's dead hand their own children
# to the worker, so a tree n deep takes n rounds; a fork bomb is given up on after this many.
LEFTOVER_ROUNDS = 100
# A request's keys without which ``harness.measure.child`` cannot run it.
REQUIRED = ("case_file", "sizes", "settings", "out", "log")


def children() -> list[int]:
    """The worker's children, from ``/proc`` (none where there is no ``/proc``)."""
    me, found = os.getpid(), []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # The parent's pid is the second field after the command's name, which may hold ") ".
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # it ended while we looked
            continue
        if len(fields) > 1 and fields[1] == str(me):
            found.append(int(stat.parent.name))
    return found


def end_leftovers() -> None:
    """Kill and reap every child of the worker: with no case process running, each is one a case
    left (only a child subreaper inherits them; elsewhere they went to init and this finds none)."""
    for _ in range(LEFTOVER_ROUNDS):
        left = children()
        if not left:
            return
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in left:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def end_all(running: list[int], signum: int) -> None:
    """The worker's SIGTERM (its harness died, or it was ended): end the case process's tree."""
    for pid in running:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    end_leftovers()  # the case process, and what left its group, now the worker's children
    os._exit(128 + signum)


# The environment the worker was started with, before a preload's JAX import set variables of its
# own: a plain script's process gets this one (harness.measure.script_process).
SIDE_ENVIRON: dict[str, str] = {}


def start_case_process(request: dict[str, Any], isolation: str) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    worker_pid = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    code = CASE_PROCESS_ERROR
    try:
        # A session of its own, standard descriptors only, its output to the request's log.
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the worker's cleanup is not the case's
        die_with_parent()
        if os.getppid() != worker_pid:  # the worker died before it was asked to die with it
            os._exit(CASE_PROCESS_ERROR)
        fd = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        # The worker's protocol pipes must not stay open in a case process.
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        if request.get("affinity") is not None:
            os.sched_setaffinity(0, request["affinity"])
        if isolation == "spawn":
            child = [sys.executable, "-m", "harness.measure.child", json.dumps(request)]
            os.execv(sys.executable, child)
        from harness.measure.child import run_request  # fork: the case process is this one

        if request.get("script_sha256") and SIDE_ENVIRON:
            # A plain script gets the side's environment, not what this worker's JAX import added.
            os.environ.clear()
            os.environ.update(SIDE_ENVIRON)
        run_request(request)
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def wait_for(pid: int) -> dict[str, Any]:
    # Once it exited, however it ended, kill what it started: its group while it is unreaped
    # (WNOWAIT), then, once reaped, what left the group and came to the worker.
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    # Unreaped, its pid stays taken, so the group's id cannot have passed to another group.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    _, status, usage = os.wait4(pid, 0)
    end_leftovers()
    return {
        "pid": pid,
        "returncode": os.waitstatus_to_exitcode(status),
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "maxrss_bytes": usage.ru_maxrss * 1024,  # Linux reports KiB
    }


def serve(requests: IO[str], answers: IO[str], isolation: str) -> None:
    def answer(message: dict[str, Any]) -> None:
        answers.write(json.dumps(message) + "\n")
        answers.flush()

    from harness.host.environment import host_facts, package_versions

    # Before the preload: JAX's import sets variables (TPU_SKIP_MDS_QUERY) that are not the side's.
    host = host_facts()
    SIDE_ENVIRON.update(os.environ)
    preloaded = []  # what every case process needs; a module that fails is left to it
    for name in PRELOAD if isolation == "fork" else ():
        try:
            importlib.import_module(name)
            preloaded.append(name)
        except Exception as exc:  # no JAX in this venv, or a broken one: the case will say so
            said = f"worker: not preloaded {name}: {type(exc).__name__}: {exc}"
            print(said, file=sys.stderr, flush=True)
    ready = dict(pid=os.getpid(), isolation=isolation, host=host, preloaded=preloaded)
    answer({"ready": {**ready, "release": package_versions().get("jax")}})
    running: list[int] = []  # the case process now running, for ``end_all``
    signal.signal(signal.SIGTERM, lambda signum, _: end_all(running, signum))
    for line in requests:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            request = request.get("run") if isinstance(request, dict) else None
            if not isinstance(request, dict):
                raise ValueError('expected {"run": {...}}')
            if missing := [key for key in REQUIRED if key not in request]:
                raise ValueError(f"missing {', '.join(missing)}")
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            answer({"error": f"bad request: {exc}"})
            continue
        pid = start_case_process(request, isolation)
        running.append(pid)
        answer({"started": {"pid": pid}})
        answer({"exited": wait_for(pid)})
        running.clear()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.measure.worker")
    parser.add_argument("--isolation", choices=ISOLATIONS, default="fork")
    args = parser.parse_args(argv)
    # Whatever a case leaves behind comes to the worker, not to init, to be killed (end_leftovers).
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    # Answers go to a copy of stdout; anything else printed there (a banner) lands in the log.
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    serve(sys.stdin, answers, args.isolation)
    return 0


if __name__ == "__main__":
    sys.exit(main())
