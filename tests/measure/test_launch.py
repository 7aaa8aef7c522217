"""A side's worker, for real: started with its environment, it runs case processes in sessions of
their own."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from harness.measure.isolation import default_isolation
from harness.measure.launch import Worker, WorkerGone
from tests.conftest import FIXTURES, alive

CASES = FIXTURES / "cases"
SETTINGS = {"warmup": 0, "repeats": 2, "min_repeats": 2, "max_seconds": 1.0, "compile_repeats": 1}


def test_a_fork_of_a_warm_worker_unless_a_gpu_is_pinned():
    assert default_isolation({"JAX_PLATFORMS": "cpu"}) == "fork"
    assert default_isolation({}) == "fork"
    assert default_isolation({"JAX_PLATFORMS": "cuda"}) == "spawn"
    assert default_isolation({"JAX_PLATFORMS": "cpu, cuda"}) == "spawn"


def wait_until(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


@pytest.fixture(params=["fork", "spawn"])
def worker(request, tmp_path):
    # A test before may have imported JAX into pytest's process, which sets TPU_SKIP_MDS_QUERY
    # there.
    inherited = {name: value for name, value in os.environ.items() if name != "TPU_SKIP_MDS_QUERY"}
    environ = {
        **inherited,
        "XLA_FLAGS": "--xla_force_host_platform_device_count=3",
        "HARNESS_TEST_PIDFILE": str(tmp_path / "pid"),
    }
    started = Worker(sys.executable, environ, request.param, tmp_path / "worker.log")
    started.ready()
    yield started
    started.close()


def request(tmp_path, case, **extra):
    return {
        "case_file": str(CASES / f"{case}.py"),
        "sizes": {"K": 10},
        "settings": SETTINGS,
        "out": str(tmp_path / f"{case}.json"),
        "log": str(tmp_path / f"{case}.log"),
        "affinity": None,
        **extra,
    }


def test_the_worker_reports_the_sides_host_and_runs_a_case(worker, tmp_path):
    facts = worker.facts
    assert facts["host"]["variables"]["XLA_FLAGS"] == "--xla_force_host_platform_device_count=3", (
        "the side's environment, not the harness's"
    )
    assert "TPU_SKIP_MDS_QUERY" not in facts["host"]["variables"], (
        "taken before JAX's import adds its own"
    )
    assert facts["pid"] == worker.proc.pid and facts["isolation"] in ("fork", "spawn")
    pid = worker.start(request(tmp_path, "flaky", affinity=[0]))
    exited = worker.wait(60)
    assert exited is not None and exited.returncode == 0, (tmp_path / "flaky.log").read_text()
    assert exited.cpu_s > 0 and exited.maxrss_bytes > 0
    payload = json.loads((tmp_path / "flaky.json").read_text())
    assert payload["status"] == "ok" and payload["facts"]["cpus"] == [0], (
        "pinned before the case ran"
    )
    assert pid != worker.proc.pid


def test_a_case_process_has_a_session_of_its_own_and_is_killed_with_it(worker, tmp_path):
    pid = worker.start(request(tmp_path, "hangs"))
    wait_until(lambda: (tmp_path / "pid").exists() and (tmp_path / "pid").read_text().strip() != "")
    assert int((tmp_path / "pid").read_text()) == pid
    assert os.getpgid(pid) == pid and os.getsid(pid) == pid
    assert worker.wait(0.2) is None, "still running"
    exited = worker.kill()
    assert exited is not None and exited.returncode == -signal.SIGKILL
    assert not alive(pid)
    worker.start(request(tmp_path, "raises"))
    assert worker.wait(60).returncode == 0, (
        "the worker goes on; the case's failure is in its payload"
    )


def test_a_dead_worker_takes_its_case_process_with_it(worker, tmp_path):
    pid = worker.start(request(tmp_path, "hangs"))
    wait_until(lambda: (tmp_path / "pid").exists() and (tmp_path / "pid").read_text().strip() != "")
    worker.proc.kill()
    with pytest.raises(WorkerGone, match="the worker ended"):
        worker.wait(30)
    wait_until(lambda: not alive(pid), timeout=10)


def test_the_worker_answers_a_bad_request_and_keeps_its_protocol_clean(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "harness.measure.worker", "--isolation", "spawn"],
        input='not json\n{"run": {"sizes": {}}}\n',
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    ready, *answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert "ready" in ready
    assert [list(answer) for answer in answers] == [["error"], ["error"]]
    assert "missing case_file" in answers[1]["error"]


def test_a_worker_that_cannot_start_says_why(tmp_path):
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\necho 'No module named harness' >&2\nexit 1\n")
    script.chmod(0o755)
    broken = Worker(str(script), dict(os.environ), "fork", tmp_path / "worker.log")
    with pytest.raises(
        WorkerGone, match=r"the worker ended \(exit code 1\)\nNo module named harness"
    ):
        broken.ready(30)
    broken.close()
