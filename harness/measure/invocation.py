"""``python -m harness run ...`` as a separate invocation, from within the harness.

A command that needs whole runs (the noise floor compares separate runs of one
release) calls the command line rather than the runner, so it measures exactly what
a user's ``harness run`` measures, whatever options ``run`` grows.  The child's
progress goes straight to this terminal.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

# After a Ctrl-C (which the child receives too) it stores what it measured, then exits.
GRACE_S = 5.0


def harness_command(subcommand: str, arguments: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "harness", subcommand, *arguments]


def run_harness(arguments: Sequence[str]) -> int:
    """Run ``python -m harness run ARGUMENTS`` with this interpreter; its exit code.

    On an interrupt the child is given time to store what it has (it got the same
    Ctrl-C, or gets a SIGTERM now) before the interrupt goes on.
    """
    child = subprocess.Popen(harness_command("run", arguments))
    try:
        return child.wait()
    except KeyboardInterrupt:
        try:
            child.wait(timeout=GRACE_S)
        except subprocess.TimeoutExpired:
            child.terminate()
            child.wait()
        raise
