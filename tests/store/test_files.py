"""Bounded reads of untrusted documents, and writes into output folders that never go through a
planted link; a --json or --markdown target that is not a regular file is written where it is,
never replaced."""

import errno
import json
import os
import stat
import threading
from pathlib import Path

import pytest

from harness.errors import UsageError
from harness.main import main
from harness.store import files
from harness.store.files import (
    DocumentProblem,
    output_folder,
    parse_document,
    read_bounded,
    replace_file,
)

from ..conftest import FIXTURES


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        (b"[Infinity]", "Infinity is not a number"),
        (b"[-Infinity]", "-Infinity is not a number"),
        (b"[NaN]", "NaN is not a number"),
        (b"[1e308]", "number 1e308 is out of range"),
        (b"[1e400]", "out of range"),
        (b"[" + b"1" + b"0" * 400 + b"]", "a number of 401 digits"),
        (b"[" + b"7" * 5000 + b"]", "4300 digits"),
        (b"[12345678901234567890]", "a number of 20 digits"),
        (b"[-12345678901234567890]", "a number of 20 digits"),
        (b"[" * 10_000 + b"]" * 10_000, "nested deeper than 64 levels"),
        (b"[" * 65 + b"]" * 65, "nested deeper than 64 levels"),
        (b'{"a": ' * 65 + b"1" + b"}" * 65, "nested deeper than 64 levels"),
        ('["x"]'.encode("utf-16"), "not UTF-8"),
        ('["x"]'.encode("utf-32"), "not UTF-8"),
        (b"\xef\xbb\xbf[1]", "BOM"),
        (b'["\xff"]', "not UTF-8"),
        (b"{", "unreadable JSON"),
        (b'["x\\ud800y"]', "half a UTF-16 pair"),
        (b'{"a": ["\\udc80"]}', "half a UTF-16 pair"),
    ],
)
def test_a_document_out_of_bounds_is_refused_in_words(document, reason):
    with pytest.raises(DocumentProblem, match=reason.replace("(", r"\(")):
        parse_document(document)


def test_a_document_within_bounds_parses_as_json_would():
    text = json.dumps(
        {
            "a\\": [1],
            'b"]': "[[[[{{",
            "n": [9_223_372_036_854_775_807, -1.5e18, 0.25],
            "deep": [[[[[[[1]]]]]]],
        }
    ).encode()
    assert parse_document(text) == json.loads(text)
    assert parse_document(b"[" * 64 + b"]" * 64) == json.loads(b"[" * 64 + b"]" * 64)
    # A float's shortest form can run to 20 digits after its point (a p-value, say): not a long
    # integer.
    assert parse_document(b"[0.00012345678901234567, 1.2345678901234567e-05]") == [
        0.00012345678901234567,
        1.2345678901234567e-05,
    ]
    # a pair; a backslash
    assert parse_document(b'["\\ud83d\\ude00", "\\\\ud800"]') == ["\U0001f600", "\\ud800"]


def test_only_a_regular_file_within_the_cap_is_read(tmp_path):
    (tmp_path / "small.json").write_text("[1]")
    assert read_bounded(tmp_path / "small.json") == b"[1]"
    os.mkfifo(tmp_path / "fifo.json")
    with pytest.raises(DocumentProblem, match="not a regular file"):
        read_bounded(tmp_path / "fifo.json")  # opened without blocking: no writer is waited for
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    with pytest.raises(DocumentProblem, match="not a regular file"):
        read_bounded(tmp_path / "zero.json")
    with open(tmp_path / "sparse.json", "wb") as handle:
        handle.truncate(4 * 2**30)  # 4 GB, sparse: no disk used, and never read whole
    with pytest.raises(DocumentProblem, match="too large"):
        read_bounded(tmp_path / "sparse.json")
    (tmp_path / "link.json").symlink_to(tmp_path / "small.json")
    assert read_bounded(tmp_path / "link.json") == b"[1]"
    with pytest.raises(DocumentProblem, match="a link"):
        read_bounded(tmp_path / "link.json", follow_links=False)
    with pytest.raises(FileNotFoundError):
        read_bounded(tmp_path / "absent.json")


def test_a_file_is_replaced_never_written_through_a_link(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    (out / "page.md").symlink_to(victim)
    replace_file(out / "page.md", "new")
    assert victim.read_text() == "keep"
    assert not (out / "page.md").is_symlink() and (out / "page.md").read_text() == "new"
    replace_file(out / "plot.png", b"\x89PNG")
    assert (out / "plot.png").read_bytes() == b"\x89PNG"
    # no temporary file left
    assert sorted(p.name for p in out.iterdir()) == ["page.md", "plot.png"]


def test_a_replaced_file_is_as_readable_as_one_written_with_open(tmp_path):
    replace_file(tmp_path / "page.md", "x")
    (tmp_path / "plain.md").write_text("x")
    assert (tmp_path / "page.md").stat().st_mode == (tmp_path / "plain.md").stat().st_mode


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch):
    (tmp_path / "page.md").write_text("old")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        replace_file(tmp_path / "page.md", "new")
    assert [p.name for p in tmp_path.iterdir()] == ["page.md"] and (
        tmp_path / "page.md"
    ).read_text() == "old"


def test_a_link_or_a_file_where_a_folder_is_expected_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    assert output_folder(out, "plots") == out / "plots" and (out / "plots").is_dir()
    (out / "issues").symlink_to(elsewhere)
    with pytest.raises(UsageError, match="is a link"):
        output_folder(out, "issues")
    (out / "notes").write_text("")
    with pytest.raises(UsageError, match="not a folder"):
        output_folder(out, "notes")
    (out / "dir.md").mkdir()
    with pytest.raises(UsageError, match="is a folder"):
        replace_file(out / "dir.md", "x")
    linked_root = tmp_path / "chosen"
    # the folder the user names may be a link: only what is below is checked
    linked_root.symlink_to(elsewhere)
    assert output_folder(linked_root, "plots").is_dir() and (elsewhere / "plots").is_dir()


def test_the_temporary_name_is_fresh_each_time(tmp_path):
    """A fixed temporary name (``page.md.tmp``) could be planted as a link; mkstemp's is created
    exclusively."""
    names = set()
    real_replace = os.replace

    def spy(src: str, dst: Path) -> None:
        names.add(Path(src).name)
        real_replace(src, dst)

    os_replace = files.os.replace
    try:
        files.os.replace = spy  # type: ignore[assignment]
        for _ in range(3):
            replace_file(tmp_path / "page.md", "x")
    finally:
        files.os.replace = os_replace  # type: ignore[assignment]
    assert len(names) == 3 and all(name.startswith(".page.md.") for name in names)


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
def test_a_full_device_is_one_line_exit_5_and_no_verdict(two_sets, capsys):
    """R8-20: a full disk has an exit status of its own: not 1 (a verdict), not 2 (bad input)."""
    assert main(["compare", *two_sets, "--json", "/dev/full"]) == 5
    out, err = capsys.readouterr()
    assert err.strip() == "harness: error: cannot write /dev/full: No space left on device"
    assert "worse" not in out, "a verdict printed with exit 5 would contradict the help"
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
