"""Sweeps that are interrupted, resumed, or run twice at once lose nothing and clobber nothing."""

import itertools
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from harness import main as cli
from tests.conftest import FIXTURES, alive, document, harness_command, stored_in

CASES = str(FIXTURES / "cases")


def harness_args(results, *cases, extra=()):
    """``run`` of these cases, two processes each unless ``extra`` says how many (an option is given
    once)."""
    args = [
        "run",
        "--cases-dir",
        CASES,
        "--results",
        str(results),
        "--repeats",
        "2",
        "--warmup",
        "1",
    ]
    args += [] if "--processes" in extra else ["--processes", "2"]
    for case in cases:
        args += ["--case", case]
    return [*args, *extra]


@pytest.fixture
def launch():
    """``subprocess.Popen`` for a test's sweeps, each killed at teardown if still running: a test
    that fails while its sweep hangs must not leave it holding the timing lock that every later test
    waits for."""
    started = []

    def start(*args, **kwargs):
        started.append(subprocess.Popen(*args, **kwargs))
        return started[-1]

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()  # the sweep's workers and case processes die with it
            process.wait()


def test_a_second_run_skips_measured_cells_and_says_so(tmp_path, capsys):
    results = tmp_path / "r"
    assert cli.main(harness_args(results, "steady", "raises")) == 0
    assert len(stored_in(results)) == 2
    capsys.readouterr()

    assert cli.main(harness_args(results, "steady", "raises")) == 0
    err = capsys.readouterr().err
    assert "resuming: 2 of 2 cells already in" in err
    assert "2 cells, 0 results stored" in err
    assert len(stored_in(results)) == 2

    assert cli.main(harness_args(results, "steady", "raises", extra=["--retry-failed"])) == 0
    assert sorted(r.result.case for r in stored_in(results)) == ["raises", "raises", "steady"]

    assert cli.main(harness_args(results, "steady", extra=["--force"])) == 0
    assert sorted(r.result.case for r in stored_in(results)) == [
        "raises",
        "raises",
        "steady",
        "steady",
    ]


def test_cells_measured_on_another_machine_are_measured_here_too(tmp_path):
    results = tmp_path / "r"
    assert cli.main(harness_args(results, "steady")) == 0
    [mine] = stored_in(results)
    elsewhere = {**document(mine), "id": document(mine)["id"] + "-elsewhere"}
    elsewhere["host"] = {
        **document(mine)["host"],
        "machine": {"id": "0" * 16, "basis": "another machine"},
    }
    mine.path.unlink()
    (mine.path.parent / "elsewhere.json").write_text(json.dumps(elsewhere))
    assert cli.main(harness_args(results, "steady")) == 0
    assert sorted(r.result.machine for r in stored_in(results)) == sorted(
        ["0" * 16, mine.result.machine]
    )


def test_budget_refusals_are_not_counted_as_measured(tmp_path):
    results = tmp_path / "r"
    assert cli.main(harness_args(results, "steady", extra=["--budget", "memory=1"])) == 0
    assert [r.result.status for r in stored_in(results)] == ["skipped"]
    assert cli.main(harness_args(results, "steady")) == 0
    assert sorted(r.result.status for r in stored_in(results)) == ["ok", "skipped"]


def wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_sweep_keeps_finished_results_and_resumes(tmp_path, launch, sig, code):
    results, pidfile = tmp_path / "r", tmp_path / "hang.pid"
    argv = harness_args(results, "steady", "hangs", "raises", extra=["--timeout", "120"])
    env = {**os.environ, "HARNESS_TEST_PIDFILE": str(pidfile)}
    sweep = launch(harness_command(*argv), env=env, stderr=subprocess.PIPE, text=True)
    wait_for(pidfile.exists)
    wait_for(lambda: pidfile.read_text().strip() != "")
    hanging = int(pidfile.read_text())
    sweep.send_signal(sig)
    _, err = sweep.communicate(timeout=30)

    assert sweep.returncode == code
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith("harness: interrupted; every result stored so far is kept")
    )
    assert "Traceback" not in err
    wait_for(lambda: not alive(hanging), timeout=10)
    assert [r.result.case for r in stored_in(results)] == ["steady"]
    assert not list(results.rglob(".tmp-*")), "no half-written file"

    resumed = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            *harness_args(results, "steady", "hangs", "raises", extra=["--timeout", "3"]),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "resuming: 1 of 3 cells already in" in resumed.stderr
    assert (
        "1 of 3 cells already in" in resumed.stderr
        and "1 of them cut short by an interrupt" in resumed.stderr
    )
    assert sorted(
        (r.result.case, r.result.status, len(r.result.processes)) for r in stored_in(results)
    ) == [
        ("hangs", "timeout", 2),
        ("raises", "failed", 2),
        ("steady", "ok", 1),
        ("steady", "ok", 2),
    ], (
        "steady had run once when the interrupt came (the cells take turns), so it is measured "
        "again in full"
    )


def test_an_interrupt_in_the_middle_of_a_cell_stores_the_processes_it_has(tmp_path, launch):
    results, pidfile = tmp_path / "r", tmp_path / "hang.pid"
    env = {
        **os.environ,
        "HARNESS_TEST_PIDFILE": str(pidfile),
        "HARNESS_TEST_FLAKY_MARKER": str(tmp_path / "marker"),
        "HARNESS_TEST_FLAKY_MODE": "hang",
    }
    argv = harness_args(results, "flaky", extra=["--timeout", "120", "--processes", "3"])
    sweep = launch(harness_command(*argv), env=env, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: pidfile.exists() and pidfile.read_text().strip() != "")
    sweep.send_signal(signal.SIGINT)
    _, err = sweep.communicate(timeout=30)
    assert sweep.returncode == 130, err
    [result] = stored_in(results)
    assert [p["status"] for p in document(result)["processes"]] == ["ok"], (
        "the finished process, not the killed one"
    )
    assert (result.result.status, document(result)["detail"]) == (
        "ok",
        "interrupted after 1 of 3 processes",
    )
    wait_for(lambda: not alive(int(pidfile.read_text())), timeout=10)


def test_a_killed_sweep_takes_its_case_process_with_it(tmp_path, launch):
    pidfile = tmp_path / "hang.pid"
    env = {**os.environ, "HARNESS_TEST_PIDFILE": str(pidfile)}
    sweep = launch(
        harness_command(*harness_args(tmp_path / "r", "hangs", extra=["--timeout", "120"])),
        env=env,
        stderr=subprocess.DEVNULL,
    )
    wait_for(lambda: pidfile.exists() and pidfile.read_text().strip() != "")
    hanging = int(pidfile.read_text())
    sweep.kill()
    sweep.wait()
    wait_for(lambda: not alive(hanging), timeout=10)


def test_two_sweeps_into_one_folder_take_turns_and_measure_each_cell_once(tmp_path, launch):
    results = tmp_path / "r"
    # A size in every case's range: raises and unsupported take K in [1, 10], and one outside is
    # refused.
    argv = harness_command(*harness_args(results, "steady", extra=["--size", "K=10"]))
    more = ["--case", "raises", "--case", "unsupported"]
    first = launch([*argv, *more], stderr=subprocess.PIPE, text=True)
    second = launch([*argv, *more], stderr=subprocess.PIPE, text=True)
    assert first.wait(timeout=60) == 0 and second.wait(timeout=60) == 0
    found = stored_in(results)
    assert sorted(r.result.case for r in found) == ["raises", "steady", "unsupported"], (
        "each cell measured once"
    )
    windows = sorted(tuple(p["window_unix_ns"]) for r in found for p in document(r)["processes"])
    assert all(earlier[1] <= later[0] for earlier, later in itertools.pairwise(windows)), windows


def test_a_full_disk_stops_the_sweep_with_one_line_and_keeps_what_was_stored(
    tmp_path, monkeypatch, capsys
):
    import harness.store.results as store

    results = tmp_path / "r"
    real_fsync = store.os.fsync
    calls = {"n": 0}

    def fsync_until_full(fd):  # where a full disk shows: the data cannot be flushed
        if ".write-check-" in os.readlink(f"/proc/self/fd/{fd}"):  # the folder checked at the door
            return real_fsync(fd)
        calls["n"] += 1
        if calls["n"] > 1:
            raise OSError(28, "No space left on device")
        return real_fsync(fd)

    monkeypatch.setattr(store.os, "fsync", fsync_until_full)
    assert cli.main(harness_args(results, "steady", "raises")) == 5, "a full disk's own status"
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        err[-1].startswith("harness: error: cannot store results in")
        and "No space left on device" in err[-1]
    )
    monkeypatch.setattr(store.os, "fsync", real_fsync)
    assert [r.result.case for r in stored_in(results)] == ["steady"], (
        "the first result, stored before the disk filled"
    )
    assert not list(results.rglob(".tmp-*"))
