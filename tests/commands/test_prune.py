"""``jax-repro prune``: the clone's and the cache's old venvs removed, a line for each venv, the
space freed; bad input one line and exit 2."""

import pytest

from harness.cli.prune import PruneOptions
from harness.commands import prune as command
from harness.install import prune as prune_module
from harness.main import main
from tests.install.test_prune import fake_venv


@pytest.fixture
def clone_and_cache(tmp_path, monkeypatch):
    """A clone of its own (never this checkout's .nox) and a cache, each with an old and a new
    venv."""
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "noxfile.py").touch()
    monkeypatch.setattr(command, "REPO", clone)
    monkeypatch.chdir(tmp_path)
    cache = tmp_path / "cache"
    for folder in (clone / ".nox", cache / "nox"):
        fake_venv(folder, "release-jax-0.4.30", 40, size=200_000)
        fake_venv(folder, "script-env-0123", 2)
        fake_venv(folder, "tests", 400)
    return clone / ".nox", cache / "nox", {"JAX_REPRO_CACHE": str(cache)}


def test_the_old_venvs_of_the_clone_and_the_cache_go_each_said_with_the_space_freed(
    clone_and_cache, capsys
):
    clone, cache, environ = clone_and_cache
    assert command.execute(PruneOptions(days=14, dry_run=False), environ) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [
        "removed clone/.nox/release-jax-0.4.30: last used 40 days ago",
        "removed cache/nox/release-jax-0.4.30: last used 40 days ago",
    ]
    assert lines[2:4] == [
        "kept clone/.nox/script-env-0123: used 2 days ago",
        "kept cache/nox/script-env-0123: used 2 days ago",
    ]
    assert lines[4].startswith("freed ") and lines[4].endswith(
        " in 2 venvs; kept 2 used in the last 14 days"
    )
    assert float(lines[4].split()[1]) >= 390  # KiB: two files of 200,000 bytes
    for folder in (clone, cache):
        assert sorted(p.name for p in folder.iterdir()) == ["script-env-0123", "tests"]


def test_a_dry_run_says_what_would_go_and_removes_nothing(clone_and_cache, capsys):
    clone, cache, environ = clone_and_cache
    assert command.execute(PruneOptions(days=1, dry_run=True), environ) == 0
    out = capsys.readouterr().out
    assert out.count("would remove ") == 4 and "would free " in out and " in 4 venvs;" in out
    assert (clone / "release-jax-0.4.30").is_dir() and (cache / "script-env-0123").is_dir()


def test_no_venvs_is_said(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(command, "REPO", tmp_path)  # not a clone: no noxfile.py
    monkeypatch.chdir(tmp_path)
    assert command.execute(PruneOptions(days=1, dry_run=False), {"JAX_REPRO_CACHE": "c"}) == 0
    assert capsys.readouterr().out == "no venvs of the harness in c/nox: nothing to remove\n"


@pytest.mark.parametrize("days", ["-3", "0", "x", "1.5", "", "１２"])
def test_days_that_are_not_a_whole_number_from_1_are_one_line_and_exit_2(days, capsys):
    assert main(["prune", "--days", days]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("harness: error: argument --days: ") and "\n" not in err, err


def test_a_venv_that_cannot_be_removed_is_said_and_exit_1(clone_and_cache, monkeypatch, capsys):
    environ = clone_and_cache[2]

    def refused(path):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(prune_module.shutil, "rmtree", refused)
    assert command.execute(PruneOptions(days=14, dry_run=False), environ) == 1
    out = capsys.readouterr().out
    assert "kept clone/.nox/release-jax-0.4.30: not removed whole: Permission denied" in out
    assert out.splitlines()[-1].startswith("freed 0 B in 0 venvs;")
    assert out.splitlines()[-1].endswith("; kept 2 used in the last 14 days, 2 for another reason")
