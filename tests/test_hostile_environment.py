"""Hostile inputs of round three: odd output targets, odd paths, odd version strings, faults of the
environment.

Each either works or is one ``harness: error:`` line with a non-zero exit; never a traceback, a
hang, or a device or link of the system replaced by a file.  (Signals:
tests/measure/test_guardian.py; the lock's faults: tests/measure/test_locks.py; FIFOs and devices as
outputs: tests/store/test_files.py.)
"""

import os
import stat
from pathlib import Path

import pytest

from harness.cli.sessions import interleaved_request, session_view
from harness.errors import UsageError
from harness.main import main

from .conftest import FIXTURES

CASES = str(FIXTURES / "cases")


def one_error_line(err: str) -> str:
    err = err.strip()
    assert (
        "Traceback" not in err and len(err.splitlines()) == 1 and err.startswith("harness: error: ")
    ), err
    return err


# Odd version strings: refused in one line, a zero-padded one with the release it spells.
PADDED = [
    ("0.4.026", "0.4.26"),
    ("00.4.26", "0.4.26"),
    ("0.04.26", "0.4.26"),
    ("0.12.00.1", "0.12.0.1"),
]
NOT_VERSIONS = ["v0.4.26", "0.4.٢٦", "0.4", "1e3", "0.4.26-1", "0.4.99999", "0..26", "-0.4.26"]


@pytest.mark.parametrize(("typed", "meant"), PADDED)
def test_a_zero_padded_release_is_refused_with_the_one_it_spells(typed, meant):
    for view in (
        lambda: session_view("search", ["scan_sync", "--jax", typed]),
        lambda: session_view("issue", ["scan_sync", "--jax", typed]),
        lambda: interleaved_request(["--jax", f"0.4.30,{typed}"]),
    ):
        with pytest.raises(UsageError, match=rf"did you mean {meant}\?"):
            view()


@pytest.mark.parametrize("typed", NOT_VERSIONS)
def test_a_string_that_is_no_release_is_one_line(typed):
    for view in (
        lambda: session_view("search", ["scan_sync", "--jax", typed]),
        lambda: interleaved_request(["--jax", typed]),
    ):
        with pytest.raises(UsageError) as refused:
            view()
        assert "\n" not in str(refused.value).strip()
        assert "did you mean" not in str(refused.value)


@pytest.mark.parametrize("typed", [" 0.4.26", "0.4.26\n", "0.4.26,", ",0.4.26"])
def test_blanks_around_a_release_in_a_list_are_ignored(typed):
    assert {release.jax for release, _ in interleaved_request(["--jax", typed]).sides} == {"0.4.26"}


# Odd --json targets: a file is replaced atomically (a link there too, never written through); one
# of our descriptors or a device is written in place; what cannot take it is one line, exit 2, and
# no verdict.
def test_json_at_a_link_to_dev_null_is_written_through_and_the_link_stays(two_sets, tmp_path):
    link = tmp_path / "null"
    link.symlink_to("/dev/null")
    assert main(["compare", *two_sets, "--json", str(link)]) == 0
    assert link.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_json_at_a_dangling_link_replaces_the_link_not_its_target(two_sets, tmp_path):
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "elsewhere")
    assert main(["compare", *two_sets, "--json", str(link)]) == 0
    assert not link.is_symlink() and not (tmp_path / "elsewhere").exists()


def test_json_at_dev_stdout_is_written_to_our_stdout_which_stays_a_link(two_sets, capfd):
    assert main(["compare", *two_sets, "--json", "/dev/stdout"]) == 0
    assert '"schema": "jax-repro-harness/comparison"' in capfd.readouterr().out
    assert Path("/dev/stdout").is_symlink()


def test_json_at_a_descriptor_keeps_its_append_mode(two_sets, tmp_path):
    log = tmp_path / "log"
    log.write_text("kept\n")
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        assert main(["compare", *two_sets, "--json", f"/dev/fd/{fd}"]) == 0
    finally:
        os.close(fd)
    assert log.read_text().startswith("kept\n{")


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("/dev/fd/987", "Bad file descriptor"),
        ("FOLDER", "is a folder"),
        ("MISSING/out.json", "No such file or directory"),
        ("/proc/version", "cannot write /proc/version"),
    ],
)
def test_json_somewhere_it_cannot_go_is_one_line_exit_2(two_sets, tmp_path, target, said, capsys):
    target = target.replace("FOLDER", str(tmp_path)).replace("MISSING", str(tmp_path / "missing"))
    assert main(["compare", *two_sets, "--json", target]) == 2
    out, err = capsys.readouterr()
    assert said in one_error_line(err) and "worse in B" not in out


@pytest.mark.parametrize(
    "name", [b"j\xff.json", b"with\nnewline.json", b"with space.json", b"-dash.json"]
)
def test_json_with_an_odd_file_name_is_written(two_sets, tmp_path, name):
    target = os.fsdecode(os.path.join(os.fsencode(tmp_path), name))
    assert main(["compare", *two_sets, "--json", target]) == 0
    assert Path(target).read_text().startswith("{")


# Odd report folders.
@pytest.mark.parametrize("name", [b"o\xfe", b"line\nbreak", b"sp ace"])
def test_a_report_under_an_odd_folder_name_is_written(tmp_path, name, capsys):
    out = os.fsdecode(os.path.join(os.fsencode(tmp_path), name))
    assert main(["report", "--results", str(FIXTURES / "results"), "--out", out]) == 0
    assert (Path(out) / "index.md").is_file()


@pytest.mark.parametrize("out", ["/dev/null", "/proc/self", "/dev/full/x"])
def test_a_report_where_no_folder_can_be_is_one_line_exit_2(out, capsys):
    assert main(["report", "--results", str(FIXTURES / "results"), "--out", out]) == 2
    one_error_line(capsys.readouterr().err)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


# A non-UTF-8 results folder, a missing runtime folder (after `su`) and --strict on a resumed
# failure, measured.
def test_a_run_into_a_non_utf8_results_folder_is_stored_and_resumed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "gone"))
    results = os.fsdecode(os.fsencode(tmp_path) + b"/r\xff")
    argv = ["run", "--cases-dir", CASES, "--case", "steady", "--processes", "1", "--repeats", "2"]
    assert main([*argv, "--results", results]) == 0
    assert main([*argv, "--results", results, "--strict"]) == 0
    assert "already measured" in capsys.readouterr().err
    assert main(["report", "--results", results, "--out", str(tmp_path / "o")]) == 0


def test_strict_fails_on_a_resumed_cell_whose_stored_run_failed(tmp_path, capsys):
    argv = [
        "run",
        "--cases-dir",
        CASES,
        "--case",
        "raises",
        "--processes",
        "1",
        "--results",
        str(tmp_path / "r"),
    ]
    assert main(argv) == 0, "without --strict a failed cell is stored, exit 0"
    assert main([*argv, "--strict"]) == 1, "resumed: the stored failure still fails --strict"
    assert "already measured (stored as failed)" in capsys.readouterr().err


# Help that describes what the user gets.
def test_the_top_help_is_for_users(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "Reproduce and measure JAX performance surprises" in out and "UsageError" not in out


def test_the_script_help_says_it_runs_in_its_own_venv_per_release(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert (
        "in a venv of its own per release" in out
        and "# /// script" in out
        and "--requirements" in out
    )
    assert "through nox" not in out
