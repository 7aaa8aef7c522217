"""An installer's command ends whole: what it started (compileall's workers) goes with it on an
interrupt or a time-out, never left running into the venv."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from harness.install.subprocesses import run_whole

# A command that starts a worker of its own (as compileall -j 0 does), says the worker's pid, then
# waits.
STARTS_A_WORKER = textwrap.dedent(
    """
    import subprocess, sys, time
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    print(worker.pid, flush=True)
    open(sys.argv[1], "w").write(str(worker.pid))
    time.sleep(60)
    """
)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is gone, only not yet reaped by its parent
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(path, seconds=20.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def gone_soon(pid: int, seconds=5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_sigterm_to_the_harness_ends_the_command_and_its_workers(tmp_path):
    # The harness as main.py runs it: SIGTERM raised as an interrupt, while an install command runs.
    harness = textwrap.dedent(
        f"""
        import signal, sys
        from pathlib import Path
        from harness.install.subprocesses import run_whole
        def terminate(signum, frame):
            raise KeyboardInterrupt
        signal.signal(signal.SIGTERM, terminate)
        try:
            run_whole([sys.executable, "-c", {STARTS_A_WORKER!r}, sys.argv[1]], Path("."), 120)
        except KeyboardInterrupt:
            sys.exit(143)
        """
    )
    pid_file = tmp_path / "worker.pid"
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    started = subprocess.Popen([sys.executable, "-c", harness, str(pid_file)], env=env)
    worker = wait_for(pid_file)
    started.send_signal(signal.SIGTERM)
    assert started.wait(timeout=20) == 143
    assert gone_soon(worker), "compileall's worker outlived the harness"


def test_a_command_past_its_time_is_ended_with_its_workers(tmp_path):
    pid_file = tmp_path / "worker.pid"
    done = run_whole([sys.executable, "-c", STARTS_A_WORKER, str(pid_file)], tmp_path, 2)
    assert done.returncode == 124 and "did not finish within 2 s" in done.stderr
    assert gone_soon(wait_for(pid_file))


def test_a_command_that_cannot_start_is_a_failed_run():
    done = run_whole(["/no/such/program"], Path("."), 5)
    assert done.returncode == 127 and "No such file" in done.stderr
