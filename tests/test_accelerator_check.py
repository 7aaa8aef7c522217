"""``benchmarks/accelerator_check.sh`` where there is no accelerator (CI): one line, exit 2, and
what it found written down without opening any device."""

import os
import subprocess
import sys

import pytest

from harness.host import installed_jax
from harness.host.environment import REPO_ROOT


def test_without_a_gpu_or_tpu_the_check_says_so_in_one_line_and_exits_2(tmp_path):
    if installed_jax.device_profile() is not None:
        pytest.skip("this machine has an accelerator")
    folder = tmp_path / "check"
    done = subprocess.run(
        [REPO_ROOT / "benchmarks" / "accelerator_check.sh", str(folder)],
        env={**os.environ, "PYTHON": sys.executable},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "accelerator_check: no jax here with a usable GPU (a CUDA build) or TPU (libtpu); what was "
        f"found: {folder}/devices.txt"
    ]
    found = (folder / "devices.txt").read_text()
    assert "TPU chips:" in found and "profile: None" in found
    assert not (folder / "results").exists(), "nothing measured"
