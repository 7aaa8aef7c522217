import os
import re
import socket
from pathlib import Path

from harness.host import machine

HARDWARE = machine.hardware("AMD EPYC 7763 64-Core Processor", 4, 16 * machine.GIB + 123_456, [])


def test_the_token_is_created_once_and_kept(tmp_path):
    first = machine.machine_token(tmp_path / "cache")
    assert re.fullmatch(r"[0-9a-f]{32}", first)
    assert machine.machine_token(tmp_path / "cache") == first
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name != machine.TOKEN_NAME], (
        "no temporary file left"
    )


def test_the_id_is_stable_and_changes_with_the_token_or_the_hardware():
    same = machine.machine_id(HARDWARE, "a" * 32)
    assert (
        re.fullmatch(r"[0-9a-f]{16}", same) and machine.machine_id(dict(HARDWARE), "a" * 32) == same
    )
    assert machine.machine_id(HARDWARE, "b" * 32) != same, "identical hardware, another machine"
    with_gpu = machine.hardware(
        "AMD EPYC 7763 64-Core Processor", 4, 16 * machine.GIB, ["NVIDIA H200"]
    )
    assert machine.machine_id(with_gpu, "a" * 32) != same, "a GPU put in makes another machine"


def test_memory_counts_in_whole_gib_and_gpus_in_any_order():
    assert HARDWARE["memory_gib"] == 16
    two = machine.hardware("x", 1, None, ["NVIDIA H200", "NVIDIA A100"])
    assert two["gpus"] == ["NVIDIA A100", "NVIDIA H200"] and two["memory_gib"] is None


def test_identify_keeps_the_token_in_the_cache_folder_and_names_nothing_personal(tmp_path):
    found = machine.identify(HARDWARE, tmp_path / "cache")
    assert found == {"id": found["id"], "basis": "machine token and hardware"}
    assert machine.identify(HARDWARE, tmp_path / "cache") == found
    token = (tmp_path / "cache" / machine.TOKEN_NAME).read_text().strip()
    assert found["id"] == machine.machine_id(HARDWARE, token)
    assert socket.gethostname() not in str(found) and os.path.expanduser("~") not in str(found)


def test_without_a_writable_cache_the_id_rests_on_the_hardware_and_says_so(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    found = machine.identify(HARDWARE, blocked / "cache")
    assert found["basis"].startswith("hardware only: no machine token")
    assert found["id"] == machine.machine_id(HARDWARE, None)


def test_the_cache_folder_follows_xdg():
    assert machine.cache_folder({"XDG_CACHE_HOME": "/somewhere"}) == Path(
        "/somewhere/jax-repro-harness"
    )
    assert machine.cache_folder({}).name == "jax-repro-harness"


def test_a_token_file_planted_as_a_link_to_dev_zero_or_binary_reads_as_a_bounded_token(tmp_path):
    (tmp_path / machine.TOKEN_NAME).symlink_to("/dev/zero")  # read whole, it would fill memory
    assert len(machine.machine_token(tmp_path)) == machine.TOKEN_CHARS
    (tmp_path / machine.TOKEN_NAME).unlink()
    (tmp_path / machine.TOKEN_NAME).write_bytes(b"\xff\xfe token")
    assert machine.machine_token(tmp_path) == "\ufffd\ufffd token"
