import os
import socket

from harness import environment


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
