import os
import subprocess
import sys

import pytest

from harness.host import installed_jax
from harness.host.environment import REPO_ROOT


@pytest.mark.parametrize(
    ("installed", "build"),
    [
        ({"jax": "0.7.2", "jaxlib": "0.7.2", "jax_cuda13_plugin": "0.7.2"}, "cuda13"),
        ({"jax": "0.6.2", "jaxlib": "0.6.2", "jax_cuda12_plugin": "0.6.2"}, "cuda12"),
        ({"jax": "0.4.23", "jaxlib": "0.4.23+cuda12.cudnn89"}, "cuda12"),
        ({"jax": "0.4.35", "jaxlib": "0.4.35"}, None),
        ({}, None),
    ],
)
def test_the_cuda_build_comes_from_the_installed_distributions(monkeypatch, installed, build):
    monkeypatch.setattr(installed_jax, "version", installed.get)
    assert installed_jax.cuda_build() == build


def test_a_cuda_build_gets_its_profile_only_where_a_gpu_is_usable(monkeypatch):
    monkeypatch.setattr(installed_jax, "cuda_build", lambda: "cuda12")
    monkeypatch.setattr(installed_jax.gpu, "absence_reason", lambda: None)
    assert installed_jax.device_profile() == "cuda12"
    monkeypatch.setattr(installed_jax.gpu, "absence_reason", lambda: "no /dev/nvidia*")
    assert installed_jax.device_profile() is None


def test_a_package_not_installed_has_no_version():
    assert installed_jax.version("no_such_package_here") is None
    assert installed_jax.version("packaging") is not None


def fake_tpu_box(tmp_path, libtpu: str | None, chip: bool):
    """A site folder with jax's libtpu (its distribution ``libtpu``) where asked, and a PCI bus with
    a TPU v5e chip where asked: what a Cloud TPU VM shows without JAX starting."""
    site, pci = tmp_path / "site", tmp_path / "pci" / "0000:00:05.0"
    (site / "libtpu").mkdir(parents=True)
    pci.mkdir(parents=True)
    if libtpu:
        (site / "libtpu" / "__init__.py").write_text("")
        info = site / f"{libtpu.replace('-', '_')}-0.0.42.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {libtpu}\nVersion: 0.0.42.1\n"
        )
    (pci / "vendor").write_text("0x1ae0\n")
    (pci / "device").write_text("0x0063\n" if chip else "0x0042\n")
    return site, pci.parent


@pytest.mark.parametrize(
    ("libtpu", "chip", "profile"),
    [
        ("libtpu", True, "tpu"),
        ("libtpu-nightly", True, "tpu"),
        ("libtpu", False, "None"),  # libtpu installed on a machine without a chip
        (None, True, "None"),  # a chip, and a jax without libtpu
    ],
)
def test_a_jax_with_libtpu_on_a_tpu_box_gets_the_tpu_profile(tmp_path, libtpu, chip, profile):
    """Faked in a process of its own: libtpu's distribution on its path, the PCI bus a folder."""
    site, pci = fake_tpu_box(tmp_path, libtpu, chip)
    code = (
        "import sys; from pathlib import Path; from harness.host import tpu, installed_jax; "
        "tpu.PCI = Path(sys.argv[1]); tpu.DEV = Path(sys.argv[1]) / 'dev'; "
        "print(installed_jax.device_profile())"
    )
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(REPO_ROOT)])}
    done = subprocess.run(
        [sys.executable, "-c", code, str(pci)],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == profile
