"""Hostile inputs met end to end: planted secrets, resource bombs in arguments and case files,
over-long paths.

Each is named and refused in one line, or kept out of every output; never a traceback, a hang or a
leak."""

import os
import re
import socket
import subprocess

import pytest

from .conftest import FIXTURES, harness_command

# Values no output could hold by chance; a URL's password, a key, an XLA_ one.
PLANTED = {
    "JAX_SECRET_TOKEN": "planted-token-0001",
    "JAX_PASS": "planted-pass-0002",
    "JAX_LICENSE_KEY": "planted-licence-0003",
    "JAX_CACHE_URL": "https://alice:planted-url-0004@cache.example/",
    "XLA_SERVICE_SECRET": "planted-xla-0005",
}
LEAKS = ["planted-", "alice", os.path.expanduser("~")]
# matched as a word: a short name ("vm") is part of other words and of PNG bytes
HOST = socket.gethostname()


def harness(*args, cwd, env=None):
    return subprocess.run(
        harness_command(*args),
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def leaks_in(folder):
    found = []
    for path in folder.rglob("*"):
        if path.is_file():
            text = path.read_text(errors="replace")
            found += [f"{path.name}: {leak}" for leak in LEAKS if leak and leak in text]
            if (
                path.suffix != ".png"
                and HOST
                and re.search(rf"(?<![\w.-]){re.escape(HOST)}(?![\w-])", text)
            ):
                found.append(f"{path.name}: the host name")
    return found


@pytest.mark.jax
def test_planted_secrets_reach_neither_the_stored_result_nor_the_report(tmp_path):
    pytest.importorskip("jax")
    env = {**PLANTED, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    cases = str(FIXTURES / "secrets" / "cases")
    done = harness(
        "run",
        "--cases-dir",
        cases,
        "--case",
        "leaks",
        "--processes",
        "2",
        "--results",
        "R",
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    done = harness("report", "--results", "R", "--out", "O", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    stored = (tmp_path / "R").rglob("*.json")
    assert any("JAX_SECRET_TOKEN=<redacted>" in p.read_text() for p in stored), (
        "environment_info was recorded"
    )
    assert leaks_in(tmp_path / "R") == [] and leaks_in(tmp_path / "O") == []


LONG = "a" * 300  # one component over NAME_MAX (255 bytes)
WIDE = "é" * 200  # 200 characters, 400 bytes: the limit is in bytes
DEEP = "/".join(["b" * 200] * 25)  # every component fits, the whole is over PATH_MAX (4096)
RANGE = ["scan_sync", "--good", "0.4.26", "--bad", "0.4.35"]
# Command lines whose one hostile argument once gave a traceback, a hang or a memory bomb; each must
# now be one "harness: error:" line and exit 2, before anything is measured or written.
HOSTILE_COMMAND_LINES = [
    *(
        [command, option, f"TMP/{bad}", *rest]
        for bad in (LONG, WIDE, DEEP)
        for command, option, rest in [
            ("report", "--results", []),
            ("report", "--out", []),
            ("merge", "--into", ["TMP"]),
            ("run", "--results", []),
            ("run", "--cases-dir", []),
            ("run", "--script", []),
            ("list", "--cases-dir", []),
            ("export", "--out", ["async_dispatch"]),
            ("issue", "--out", []),
            ("search", "--results", ["scan_sync"]),
            ("calibrate", "--results", []),
            ("compare", "--markdown", ["TMP"]),
            ("bisect", "--releases", RANGE),
            ("new", "--cases-dir", ["fresh_case"]),
        ]
    ),
    ["merge", f"TMP/{LONG}", "--into", "TMP/merged"],
    ["compare", f"TMP/{LONG}"],
    *(
        ["run", "--affinity", cpus]
        for cpus in (
            "0-99999999999",
            "99999999999",
            "0-8192",
            "0,1,99999",
            "１",
            "0-²",
            "0" + ",0" * 20_000,
        )
    ),
    ["search", "scan_sync", "--affinity", "0-99999999999"],
    ["run", "--case", "scan_sync", "--size", "N=20000"],  # outside the case's range [16, 10000]
    ["run", "--case", "scan_sync", "--size", "N=1"],
    ["export", "scan_sync", "--size", "N=99999"],
]


def test_the_hostile_command_line_table_is_large():
    assert len(HOSTILE_COMMAND_LINES) >= 50


@pytest.mark.parametrize(
    "argv", HOSTILE_COMMAND_LINES, ids=[" ".join(a)[:50] for a in HOSTILE_COMMAND_LINES]
)
def test_a_hostile_argument_is_one_line_and_exit_2(argv, tmp_path, capsys):
    from harness.main import main

    out = tmp_path / "out"
    out.mkdir()
    placed = [a.replace("TMP", str(out)) for a in argv]
    if placed[0] in ("run", "search", "calibrate", "issue") and "--results" not in placed:
        placed[1:1] = ["--results", str(out / "results")]
    if placed[0] in ("search", "issue", "report") and "--out" not in placed:
        placed[1:1] = ["--out", str(out / "reports")]
    assert main(placed) == 2, placed
    err = capsys.readouterr().err.strip()
    assert (
        "Traceback" not in err and len(err.splitlines()) == 1 and err.startswith("harness: error: ")
    ), err
    assert not any(out.iterdir()), f"{placed} wrote {sorted(p.name for p in out.iterdir())}"


@pytest.mark.parametrize(
    ("command", "posargs"),
    [
        ("run", ["--affinity", "0-99999999999"]),
        ("run", ["--results", f"/tmp/{LONG}"]),
        ("run", ["--cases-dir", f"/tmp/{WIDE}"]),
        ("run", ["--case", "scan_sync", "--size", "N=20000"]),
        ("report", ["--results", f"/tmp/{LONG}"]),
        ("report", ["--out", f"/tmp/{DEEP}"]),
        ("compare", [f"/tmp/{LONG}"]),
        ("search", ["scan_sync", "--affinity", "0-99999999999"]),
    ],
)
def test_a_nox_sessions_hostile_posargs_are_refused_at_once(command, posargs):
    from harness.cli.sessions import session_view
    from harness.errors import UsageError

    with pytest.raises(UsageError):
        session_view(command, posargs)


def test_a_link_loop_planted_in_the_results_folder_is_one_line_not_a_traceback(tmp_path, capsys):
    from harness.main import main

    results = tmp_path / "results"
    results.mkdir()
    (results / "steady").symlink_to("steady")
    argv = ["run", "--cases-dir", str(FIXTURES / "cases"), "--case", "steady", "--processes", "1"]
    assert main([*argv, "--repeats", "2", "--results", str(results)]) == 2
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("harness: error: refusing to write")
        and "loop" in err
        and len(err.splitlines()) == 1
    )
