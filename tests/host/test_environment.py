import os
import re
import socket
from types import SimpleNamespace

from harness.host import environment, machine
from tests.conftest import FIXTURES


def test_only_allow_listed_variables_are_kept():
    kept = environment.allowed_variables(
        {
            "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
            "JAX_PLATFORMS": "cpu",
            "CUDA_VISIBLE_DEVICES": "0",
            "HOME": "/home/someone",
            "AWS_SECRET_ACCESS_KEY": "hunter2",
            "PATH": "/usr/bin",
            "MY_JAX_TOKEN": "x",
        }
    )
    assert kept == {
        "CUDA_VISIBLE_DEVICES": "0",
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
    }


def test_scrub_removes_home_and_hostname():
    home = os.path.expanduser("~")
    host = socket.gethostname()
    text = f"dump to {home}/dumps on node='{host}'"
    cleaned = environment.scrub(text)
    assert home not in cleaned and host not in cleaned
    assert "~/dumps" in cleaned and "<host>" in cleaned


def test_host_facts_carry_versions_cpu_and_revision():
    facts = environment.host_facts()
    assert facts["python"].count(".") == 2
    assert facts["cpu_count"] >= 1
    assert set(facts["harness"]) == {"commit", "dirty"}
    assert all(k.startswith(environment.ALLOWED_PREFIXES) for k in facts["variables"])
    assert re.fullmatch(r"[0-9a-f]{16}", facts["machine"]["id"]) and facts["machine"]["basis"]
    assert isinstance(facts["gpus"], list)


def test_gpus_enter_the_host_facts_and_the_machine_id(monkeypatch):
    monkeypatch.setenv("PATH", f"{FIXTURES / 'gpu' / 'working'}{os.pathsep}{os.environ['PATH']}")
    facts = environment.host_facts()
    assert facts["gpus"] == [{"name": "NVIDIA H200", "driver_version": "570.86.15", "memory.total": "143771"}]
    hardware = machine.hardware(facts["cpu_model"], facts["cpu_count"], facts["memory_total_bytes"], ["NVIDIA H200"])
    assert facts["machine"]["id"] == machine.machine_id(hardware, machine.machine_token(machine.cache_folder()))


def test_gpu_facts_name_device_driver_cuda_and_wheels(monkeypatch):
    monkeypatch.setenv("PATH", f"{FIXTURES / 'gpu' / 'working'}{os.pathsep}{os.environ['PATH']}")
    devices = [SimpleNamespace(device_kind="NVIDIA H200", compute_capability="9.0")] * 2
    gpu = environment._gpu_facts(devices)
    assert gpu["device_kinds"] == ["NVIDIA H200"] and gpu["compute_capabilities"] == ["9.0"]
    assert gpu["driver_versions"] == ["570.86.15"] and gpu["cuda_driver"] == "12.8"
    assert gpu["cuda_packages"] == environment.cuda_packages()


def test_cuda_wheels_are_recognised_by_name():
    names = ["jax-cuda12-plugin", "jax-cuda13-pjrt", "nvidia-cudnn-cu12", "nvidia-cuda-runtime", "jaxlib", "numpy"]
    assert [n for n in names if environment.CUDA_PACKAGE.match(n)] == names[:4]


def test_credentials_under_an_allowed_prefix_are_redacted():
    from harness.host.environment import REDACTED, allowed_variables, shareable_variables

    environ = {
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
        "JAX_SOME_TOKEN": "s3cr3t",
        "XLA_SERVICE_PASSWORD": "hunter2",
        "CUDA_API_KEY": "k",
        "JAX_OPAQUE": "ghp_0123456789abcdefghijklmnopqrstuvwx",
        "CUDA_VISIBLE_DEVICES": "0,1",
        "HOME": "/home/x",
    }
    recorded = allowed_variables(environ)
    assert recorded["JAX_PLATFORMS"] == "cpu" and recorded["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert recorded["XLA_FLAGS"] == "--xla_force_host_platform_device_count=8"
    for name in ("JAX_SOME_TOKEN", "XLA_SERVICE_PASSWORD", "CUDA_API_KEY", "JAX_OPAQUE"):
        assert recorded[name] == REDACTED, name
    assert "HOME" not in recorded
    assert set(shareable_variables(environ)) == {"JAX_PLATFORMS", "XLA_FLAGS", "CUDA_VISIBLE_DEVICES"}
