import sys

from harness.measure.invocation import harness_command, run_harness


def test_the_command_is_this_interpreter_running_the_harness():
    assert harness_command("run", ["--case", "x"]) == [sys.executable, "-m", "harness", "run", "--case", "x"]


def test_a_real_invocation_returns_its_exit_code(capfd):
    assert run_harness(["--case", "nope"]) == 2
    assert "harness: error: unknown case nope" in capfd.readouterr().err
