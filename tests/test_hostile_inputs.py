"""Hostile inputs met end to end: planted secrets, resource bombs in arguments and case files, over-long paths.

Each is named and refused in one line, or kept out of every output; never a traceback, a hang or a leak."""

import os
import socket
import subprocess
import sys

import pytest

from .conftest import FIXTURES

# Values no output could hold by chance; a URL's password, a key, an XLA_ one.
PLANTED = {
    "JAX_SECRET_TOKEN": "planted-token-0001",
    "JAX_PASS": "planted-pass-0002",
    "JAX_LICENSE_KEY": "planted-licence-0003",
    "JAX_CACHE_URL": "https://alice:planted-url-0004@cache.example/",
    "XLA_SERVICE_SECRET": "planted-xla-0005",
}
LEAKS = ["planted-", "alice", os.path.expanduser("~"), socket.gethostname()]


def harness(*args, cwd, env=None):
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def leaks_in(folder):
    found = []
    for path in folder.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            found += [f"{path.name}: {leak}" for leak in LEAKS if leak and leak in text]
    return found


@pytest.mark.jax
def test_planted_secrets_reach_neither_the_stored_result_nor_the_report(tmp_path):
    pytest.importorskip("jax")
    env = {**PLANTED, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    cases = str(FIXTURES / "secrets" / "cases")
    done = harness(
        "run", "--cases-dir", cases, "--case", "leaks", "--processes", "2", "--results", "R", cwd=tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr
    done = harness("report", "--results", "R", "--out", "O", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    stored = (tmp_path / "R").rglob("*.json")
    assert any("JAX_SECRET_TOKEN=<redacted>" in p.read_text() for p in stored), "environment_info was recorded"
    assert leaks_in(tmp_path / "R") == [] and leaks_in(tmp_path / "O") == []
