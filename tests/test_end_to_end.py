"""A real case on the real JAX installed in this environment, through the real CLI."""

import json
import os
import re
import shutil
import subprocess

import pytest

pytest.importorskip("jax")

from harness.render.screen import fits
from harness.store.schema import SCHEMA_VERSION

from .conftest import FIXTURES, harness_command

pytestmark = pytest.mark.jax


def run_harness(*args, env=None, cwd):
    return subprocess.run(
        harness_command(*args),
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
        env={"XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr
    assert "(1/1) async_dispatch N=64" in done.stderr
    [path] = list((tmp_path / "results").rglob("*.json"))
    result = json.loads(path.read_text())
    assert result["status"] == "ok", result.get("detail")
    assert result["sizes"] == {"N": 64} and result["profile"] == "e2e"
    assert (
        result["schema_version"] == SCHEMA_VERSION
        and len(result["processes"]) == result["settings"]["processes"] == 5
    )
    process = result["processes"][0]
    assert process["jax"]["backend"] == "cpu"
    assert process["jax"]["device_count"] == 1
    assert result["release"] == process["jax"]["jax_version"]
    eager = process["programs"]["eager"]
    assert len(eager["samples"]) == 5 and eager["loops"] >= 1
    assert all(s["wall_ns"] >= s["marks_ns"][-1] > 0 for s in eager["samples"])
    assert (
        set(process["claim"]) == {"holds", "evidence", "backend"}
        and process["claim"]["backend"] == "cpu"
    )
    token = (tmp_path / "cache" / "jax-repro-harness" / "machine-token").read_text().strip()
    assert result["host"]["machine"] == {
        "id": result["host"]["machine"]["id"],
        "basis": "machine token and hardware",
    }
    assert token not in path.read_text(), "only the hash of the token is stored"
    assert all(len(p["compiled"]["jit"]["compile_ns"]) == 1 for p in result["processes"]), (
        "5 processes: 1 each"
    )

    shown = run_harness("report", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "async_dispatch" in (tmp_path / "reports" / "index.md").read_text()


def test_a_one_device_case_under_more_cpu_devices_is_skipped_in_one_process(tmp_path):
    """XLA flags apply from process start: two CPU devices exist, and async_dispatch (DEVICES_USED
    = 1) says why it does not measure itself again beside an idle one."""
    env = {
        "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    done = run_harness(
        "run",
        "--case",
        "async_dispatch",
        "--size",
        "N=64",
        "--profile",
        "e2e-2",
        "--results",
        "results",
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    [path] = list((tmp_path / "results").rglob("*.json"))
    result = json.loads(path.read_text())
    assert result["status"] == "skipped" and len(result["processes"]) == 1
    assert "uses 1 device (DEVICES_USED) and this profile made 2 CPU devices" in result["detail"]
    assert result["host"]["variables"]["XLA_FLAGS"] == env["XLA_FLAGS"]


def test_issue_draft_end_to_end(tmp_path):
    shutil.copytree(FIXTURES / "results", tmp_path / "results")
    (tmp_path / "reports").mkdir()
    shutil.copy(FIXTURES / "issue" / "bisect-scan_sync.json", tmp_path / "reports")
    done = run_harness(
        "issue",
        "scan_sync",
        "--size",
        "N=16",
        "--size",
        "M=3",
        "--repeats",
        "3",
        "--profile",
        "e2e",
        cwd=tmp_path,
        env={"JAX_PLATFORMS": "cpu"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "Draft: reports/issues/scan_sync.md"
    assert fits(done.stdout) and "full script on jax " in done.stdout
    folder = tmp_path / "reports" / "issues"
    short, full = (folder / "scan_sync.py").read_text(), (folder / "scan_sync-full.py").read_text()
    draft = (folder / "scan_sync.md").read_text()
    assert short.rstrip() in draft and full.rstrip() not in draft, (
        "the short script shown, the full one beside"
    )
    assert "claim holds: " in draft and "metric two_scans wall_ns median=" in draft, (
        "both scripts' real output"
    )
    assert (
        re.search(r"`JAX_PLATFORMS=cpu (\S+ )*python scan_sync\.py`", draft)
        and "`JAX_PLATFORMS=cpu`" in draft
    )
    assert "Bisect" not in draft, (
        "the stored answer is for other sizes (M=500 N=100): not this draft's"
    )
    assert "jax.print_environment_info()" in draft and "jaxlib: " in draft
