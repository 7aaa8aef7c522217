"""Status as a metric, end to end with real processes: each "release" is an interpreter that starts
this test's own Python with ``HARNESS_TEST_DIES`` set, so a case segfaults on some releases and runs
on others, with no install; triage and bisect --status find, confirm and bisect where it stops
running ok."""

import io
import json
import os
import signal
import stat
import sys
import sysconfig
import threading
import time
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

import pytest

from harness.install.venvs import INSTALLED, ReleaseEnv, install_record, write_plan
from harness.main import main
from tests.conftest import FIXTURES


def fake_release(tmp_path, release: str, dies: str) -> ReleaseEnv:
    """A venv folder whose interpreter is this Python with ``HARNESS_TEST_DIES`` set, marked
    installed."""
    venv = tmp_path / f"venv-{release}"
    env = ReleaseEnv(release, release, sys.executable, (f"jax=={release}",), venv)
    (venv / "bin").mkdir(parents=True)
    python = sysconfig.get_python_version()
    (venv / "lib" / f"python{python}" / "site-packages").mkdir(parents=True)
    interpreter = venv / "bin" / "python"
    interpreter.write_text(f'#!/bin/sh\nHARNESS_TEST_DIES={dies} exec {sys.executable} "$@"\n')
    interpreter.chmod(interpreter.stat().st_mode | stat.S_IXUSR)
    (venv / INSTALLED).write_text(json.dumps(install_record(env)))
    return env


def command(tmp_path, name, *more):
    return [
        name,
        "dies_on_release",
        "--cases-dir",
        str(FIXTURES / "cases"),
        "--releases",
        str(tmp_path / "plan.json"),
        "--results",
        str(tmp_path / "results"),
        "--out",
        str(tmp_path / "reports"),
        "--processes",
        "3",
        "--repeats",
        "3",
        *more,
    ]


def plan(tmp_path, deaths: dict[str, str]) -> None:
    write_plan(tmp_path / "plan.json", [fake_release(tmp_path, r, d) for r, d in deaths.items()])


@dataclass
class Triaged:
    code: int
    out: str
    err: str
    data: dict


@pytest.fixture(scope="module")
def crash_triage(tmp_path_factory) -> Triaged:
    """One real triage over a release that segfaults, its why given two XLA defaults turned between
    the releases (``turned_defaults``): what it finds, confirms and says, and the workaround its why
    finds, each read by a test of its own."""
    tmp_path = tmp_path_factory.mktemp("crash-triage")
    plan(tmp_path, {"0.4.30": "ok", "0.4.31": "segfault"})
    answer = tmp_path / "triage.json"
    more = ["--from", "0.4.30", "--to", "0.4.31", "--why-budget", "600", "--json", str(answer)]
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as monkeypatch, redirect_stdout(out), redirect_stderr(err):
        turned_defaults(monkeypatch)
        code = main(command(tmp_path, "triage", *more))
    data = json.loads(answer.read_text()) if answer.exists() else {}
    return Triaged(code, out.getvalue(), err.getvalue(), data)


def test_a_triage_finds_confirms_and_says_where_a_release_started_crashing(crash_triage):
    out, data = crash_triage.out, crash_triage.data
    assert crash_triage.code == 0, crash_triage.err[-3000:]
    assert "Nothing could be measured" not in out
    assert "ok → SIGSEGV (exit 139)" in out and "crashes" in out
    assert "where jax 0.4.31 died: SIGSEGV (exit 139)" in out
    assert 'dies_on_release.py", line' in out, "the innermost frame of the faulthandler stack"
    [confirmed] = data["confirmations"]
    assert (confirmed["metric"], confirmed["outcome"]) == ("process.end", "confirmed")
    assert data["answers"][0].startswith("status: crashes since 0.4.31: SIGSEGV (exit 139) in ")
    crashed = data["first_round"]["releases"][1]["died"][0]
    assert crashed["signal"] == "SIGSEGV" and "in programs" in crashed["stack"]


def test_bisect_by_status_finds_the_first_release_that_stops_running_ok(tmp_path, capsys):
    plan(tmp_path, {"0.4.30": "ok", "0.4.31": "ok", "0.4.33": "raise", "0.4.34": "raise"})
    answer = tmp_path / "bisect.json"
    code = main(
        command(
            tmp_path,
            "bisect",
            "--status",
            "--good",
            "0.4.30",
            "--bad",
            "0.4.34",
            "--json",
            str(answer),
        )
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:]
    assert "First bad: jax 0.4.33" in captured.out, captured.out
    [found] = json.loads(answer.read_text())["answers"]
    assert (found["last_good"], found["first_bad"]) == ("0.4.31", "0.4.33"), found


def test_a_process_killed_from_outside_is_said_as_a_fault_not_a_step_nor_no_change(
    tmp_path, capsys, monkeypatch
):
    marker = tmp_path / "killed.pid"
    monkeypatch.setenv("HARNESS_TEST_DIES_MARKER", str(marker))
    plan(tmp_path, {"0.4.30": "ok", "0.4.31": "killed"})

    def kill_it():  # someone else's kill: SIGTERM to the one process that waits for it
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if marker.exists():
            os.kill(int(marker.read_text()), signal.SIGTERM)

    killer = threading.Thread(target=kill_it, daemon=True)
    killer.start()
    answer = tmp_path / "triage.json"
    code = main(
        command(tmp_path, "triage", "--from", "0.4.30", "--to", "0.4.31", "--json", str(answer))
    )
    killer.join(5)
    out = " ".join(capsys.readouterr().out.split())
    data = json.loads(answer.read_text())
    assert data["confirmations"] == [], "one process of three: no step"
    [fault] = data["faults"]
    assert fault["release"] == "0.4.31"
    assert fault["fault"].startswith("killed from outside in 1 of 3 processes")
    assert "jax 0.4.31: killed from outside in 1 of 3 processes" in out
    assert "No change found" not in out and code == 4, "nothing compared: never 'no change'"


def test_a_run_that_crashes_says_where_its_first_process_died(tmp_path, capsys):
    argv = ["run", "--cases-dir", str(FIXTURES / "cases"), "--case", "segfaults"]
    argv += ["--results", str(tmp_path / "r"), "--processes", "2", "--repeats", "2"]
    main(argv)
    captured = capsys.readouterr()
    said = captured.out + captured.err
    [line] = [line for line in said.splitlines() if "where it died" in line]
    assert (
        line.startswith("    where it died: SIGSEGV (exit 139); File ") and "segfaults.py" in line
    )


EIGEN, FAST_MATH = "xla_cpu_multi_thread_eigen", "xla_cpu_enable_fast_math"


def turned_defaults(monkeypatch) -> tuple[str, str]:
    """Two XLA defaults turned between the fake releases 0.4.30 and 0.4.31 as their jaxlibs would
    list them, the second the culprit (real flags: the case imports jax, whose XLA refuses a flag it
    does not know); the two flags' names."""
    from harness.explain import tried
    from harness.explain.defaults import XLA, Option

    eigen, fast_math = EIGEN, FAST_MATH

    def option(name, default):
        return {name: Option(name, default, XLA, "bool")}

    listed = {
        "0.4.30": {**option(eigen, "false"), **option(fast_math, "true")},
        "0.4.31": {**option(eigen, "true"), **option(fast_math, "false")},
    }
    monkeypatch.setattr(tried, "xla_flags", lambda sides, side: {})
    monkeypatch.setattr(
        tried,
        "options_of",
        lambda interpreter, flags: (listed[interpreter.parent.parent.name[5:]], ""),
    )
    return eigen, fast_math


def test_a_crash_s_why_finds_the_changed_default_that_makes_the_dying_release_run(crash_triage):
    assert crash_triage.code == 0, crash_triage.err[-3000:]
    out = " ".join(crash_triage.out.split())
    said = (
        "runs with XLA_FLAGS=--xla_cpu_multi_thread_eigen=false on 0.4.31: ok in 3 of 3 processes"
    )
    assert said in out, crash_triage.err[-4000:]
    [found] = crash_triage.data["crash"]
    tried = [(t["option"], t["runs"]) for t in found["tried"]]
    assert tried == [(FAST_MATH, False), (EIGEN, True)], tried
    assert found["workaround"]["setting"] == "XLA_FLAGS=--xla_cpu_multi_thread_eigen=false"
    assert found["crashing"] == "0.4.31" and found["dead"] == "SIGSEGV (exit 139)"


def test_a_bisect_by_status_says_the_crash_s_workaround_on_its_screen_and_in_its_json(
    tmp_path, capsys, monkeypatch
):
    turned_defaults(monkeypatch)
    plan(tmp_path, {"0.4.30": "ok", "0.4.31": "segfault"})
    answer = tmp_path / "bisect.json"
    more = ["--status", "--good", "0.4.30", "--bad", "0.4.31", "--why-budget", "600"]
    code = main(command(tmp_path, "bisect", *more, "--json", str(answer)))
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:]
    out = " ".join(captured.out.split())
    assert "XLA_FLAGS=--xla_cpu_multi_thread_eigen=false" in out, out
    [found] = json.loads(answer.read_text())["answers"]
    [crashed] = found["crash"]
    assert crashed["workaround"]["setting"] == "XLA_FLAGS=--xla_cpu_multi_thread_eigen=false"
