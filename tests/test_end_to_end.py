"""A real case on the real JAX installed in this environment, through the real CLI."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("jax")

pytestmark = pytest.mark.jax


def run_harness(*args, env=None, cwd):
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def test_async_dispatch_end_to_end(tmp_path):
    done = run_harness(
        "run",
        "--case",
        "async_dispatch",
        "--size",
        "N=64",
        "--repeats",
        "5",
        "--profile",
        "e2e",
        "--results",
        "results",
        cwd=tmp_path,
        env={"XLA_FLAGS": "--xla_force_host_platform_device_count=2"},
    )
    assert done.returncode == 0, done.stderr
    assert "(1/1) async_dispatch N=64" in done.stderr
    [path] = list((tmp_path / "results").rglob("*.json"))
    result = json.loads(path.read_text())
    assert result["status"] == "ok", result.get("detail")
    assert result["sizes"] == {"N": 64} and result["profile"] == "e2e"
    assert result["jax"]["backend"] == "cpu"
    assert result["jax"]["device_count"] == 2, "XLA flags apply from process start"
    assert result["host"]["variables"]["XLA_FLAGS"] == "--xla_force_host_platform_device_count=2"
    assert result["release"] == result["jax"]["jax_version"]
    eager = result["programs"]["eager"]
    assert len(eager["samples"]) == 5
    assert all(s["wall_ns"] >= s["marks_ns"][-1] > 0 for s in eager["samples"])
    assert set(result["claim"]) == {"holds", "evidence"}
    assert len(result["compiled"]["jit"]["compile_ns"]) == 3

    shown = run_harness("report", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "async_dispatch" in (tmp_path / "reports" / "index.md").read_text()
