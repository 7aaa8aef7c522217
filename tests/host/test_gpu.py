"""GPU detection without JAX, against stand-ins for nvidia-smi (tests/fixtures/gpu/) run as real
processes."""

import pytest

from harness.host import gpu
from tests.conftest import FIXTURES

SMI = FIXTURES / "gpu"


@pytest.fixture
def dev_with_gpu(tmp_path):
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "nvidia0").touch()
    (dev / "nvidiactl").touch()  # the control file is no GPU
    return dev


def test_a_working_nvidia_smi_is_parsed(monkeypatch):
    monkeypatch.setenv("PATH", str(SMI / "working"))
    smi = gpu.query()
    assert smi.failure is None
    assert smi.gpus == (
        {"name": "NVIDIA H200", "driver_version": "570.86.15", "memory.total": "143771"},
    )
    assert smi.cuda_driver == "12.8"


def test_a_gpu_with_its_device_file_is_usable(monkeypatch, dev_with_gpu):
    monkeypatch.setenv("PATH", str(SMI / "working"))
    assert gpu.absence_reason(dev=dev_with_gpu) is None


@pytest.mark.parametrize(
    ("folder", "reason"),
    [
        (None, "nvidia-smi not found on PATH (no NVIDIA driver here)"),
        (
            "failing",
            "nvidia-smi failed with exit code 9: NVIDIA-SMI has failed because it couldn't "
            "communicate",
        ),
    ],
)
def test_no_usable_driver_is_said_in_words(monkeypatch, tmp_path, dev_with_gpu, folder, reason):
    monkeypatch.setenv("PATH", str(SMI / folder) if folder else str(tmp_path))
    assert gpu.query().gpus == ()
    assert str(gpu.absence_reason(dev=dev_with_gpu)).startswith(reason)


def test_a_container_without_the_device_files_has_no_usable_gpu(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(SMI / "working"))
    assert "no " + str(tmp_path) + "/nvidia0" in str(gpu.absence_reason(dev=tmp_path))


def test_output_that_is_not_utf8_is_read_with_the_bytes_replaced(monkeypatch):
    monkeypatch.setenv("PATH", str(SMI / "garbled"))
    smi = gpu.query()
    assert smi.failure is None and smi.cuda_driver == "12.8"
    assert smi.gpus == (
        {"name": "NVIDIA Caf\ufffd", "driver_version": "570.86.15", "memory.total": "143771"},
    )
