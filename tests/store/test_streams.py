"""A --json or --markdown target that is not a regular file is written where it is, never
replaced."""

import os
import stat
import threading
from pathlib import Path

import pytest

from harness.main import main

from ..conftest import FIXTURES


def read_all(path: Path, into: list) -> threading.Thread:
    def reader():
        with open(path, "rb") as handle:
            into.append(handle.read())

    thread = threading.Thread(target=reader)
    thread.start()
    return thread


@pytest.mark.parametrize("option", ["--json", "--markdown"])
def test_a_fifo_gets_the_output_and_stays_a_fifo(two_sets, tmp_path, option, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    thread = read_all(fifo, got)
    assert main(["compare", *two_sets, option, str(fifo)]) == 0
    thread.join(10)
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and got and got[0].strip()
    assert "Nothing got significantly worse" in capsys.readouterr().out


def test_dev_null_stays_a_character_device(two_sets):
    assert main(["compare", *two_sets, "--json", "/dev/null"]) == 0
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_pipe_named_by_its_descriptor_gets_the_output(two_sets):
    read_end, write_end = os.pipe()  # what a shell's >(cat) hands over: /dev/fd/N
    got: list[bytes] = []
    thread = threading.Thread(target=lambda: got.append(os.read(read_end, 1 << 20)))
    thread.start()
    try:
        assert main(["compare", *two_sets, "--json", f"/dev/fd/{write_end}"]) == 0
    finally:
        os.close(write_end)
    thread.join(10)
    os.close(read_end)
    assert got and got[0].startswith(b"{")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="Linux's /dev/full")
def test_a_full_device_is_one_line_exit_2_and_no_verdict(two_sets, capsys):
    assert main(["compare", *two_sets, "--json", "/dev/full"]) == 2
    out, err = capsys.readouterr()
    assert err.strip() == "harness: error: cannot write /dev/full: No space left on device"
    assert "worse" not in out, "a verdict printed with exit 2 would contradict the help"
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_regular_file_is_still_replaced_atomically(two_sets, tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")
    inode = target.stat().st_ino
    assert main(["compare", *two_sets, "--json", str(target)]) == 0
    assert target.read_text().startswith("{") and target.stat().st_ino != inode


def test_a_report_folder_that_cannot_be_made_is_exit_2(tmp_path, capsys):
    assert (
        main(["report", "--results", str(FIXTURES / "results"), "--out", "/proc/no-such-folder"])
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("harness: error: cannot write the report under /proc/no-such-folder")
        and "\n" not in err
    )
