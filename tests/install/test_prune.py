"""Which venvs a prune removes: only the harness's, unused for the days asked, never through a
link, never one a run holds; what it frees counted as the disk does."""

import os
import time

from harness.install import prune
from harness.install.venvs import INSTALLED, USED, mark_used
from harness.measure.locks import venv_lock

DAY = prune.DAY_S


def fake_venv(folder, name, days_ago, size=4096):
    venv = folder / name
    (venv / "lib").mkdir(parents=True)
    (venv / "lib" / "module.so").write_bytes(b"x" * size)
    (venv / INSTALLED).write_text("{}")
    (venv / USED).write_text("home = /usr/bin\n")
    then = time.time() - days_ago * DAY
    for path in (venv / INSTALLED, venv / USED, venv):
        os.utime(path, (then, then))
    return venv


def names(venvs):
    return sorted(venv.path.name for venv in venvs)


def test_only_the_harness_s_own_venvs_are_looked_at(tmp_path):
    for name in (
        "release-jax-0.4.30",
        "plain-jax-0.4.30",
        "script-env-0123",
        "commit-abc-jaxlib-1",
    ):
        fake_venv(tmp_path, name, 30)
    for name in ("tests", "lint", "triage", "export-tools"):
        fake_venv(tmp_path, name, 30)
    outside = fake_venv(tmp_path / "elsewhere", "release-jax-0.4.31", 30)
    (tmp_path / "release-jax-0.4.31").symlink_to(outside)
    (tmp_path / "release-jax-0.5.0").write_text("a file, not a venv")
    found = prune.harness_venvs(tmp_path)
    assert names(found) == [
        "commit-abc-jaxlib-1",
        "plain-jax-0.4.30",
        "release-jax-0.4.30",
        "script-env-0123",
    ]
    prune.prune(found, days=1, now=time.time(), dry_run=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "elsewhere",
        "export-tools",
        "lint",
        "release-jax-0.4.31",
        "release-jax-0.5.0",
        "tests",
        "triage",
    ]
    assert (outside / "lib" / "module.so").is_file()


def test_a_venv_used_within_the_days_is_kept_by_its_stamp_though_made_long_ago(tmp_path):
    old = fake_venv(tmp_path, "release-jax-0.4.30", 40)
    used = fake_venv(tmp_path, "script-env-1", 40)
    made = used.stat().st_mtime_ns
    mark_used(used)
    assert time.time() - (used / USED).stat().st_mtime < 60
    assert used.stat().st_mtime_ns == made, "marked, the venv's folder is as it was"

    found = prune.harness_venvs(tmp_path)
    assert [venv.path for venv in found] == [old, used]  # oldest use first
    done = prune.prune(found, days=14, now=time.time(), dry_run=False)
    assert names(done.removed) == ["release-jax-0.4.30"]
    assert [(venv.path, why) for venv, why in done.kept] == [(used, prune.RECENT)]
    assert not old.exists() and used.is_dir()


def test_the_days_are_a_bound_on_the_last_use(tmp_path):
    fake_venv(tmp_path, "release-jax-a", 13)
    fake_venv(tmp_path, "release-jax-b", 15)
    done = prune.prune(prune.harness_venvs(tmp_path), days=14, now=time.time(), dry_run=False)
    assert names(done.removed) == ["release-jax-b"]
    assert names(venv for venv, _ in done.kept) == ["release-jax-a"]


def test_a_dry_run_counts_and_removes_nothing(tmp_path):
    venv = fake_venv(tmp_path, "release-jax-0.4.30", 30, size=100_000)
    done = prune.prune(prune.harness_venvs(tmp_path), days=1, now=time.time(), dry_run=True)
    assert names(done.removed) == ["release-jax-0.4.30"]
    assert done.freed == done.taken >= 100_000
    assert (venv / "lib" / "module.so").is_file()


def test_a_venv_a_run_holds_is_kept(tmp_path):
    held = fake_venv(tmp_path, "release-jax-0.4.30", 30)
    with venv_lock(held, progress=lambda line: None):
        done = prune.prune(prune.harness_venvs(tmp_path), days=1, now=time.time(), dry_run=False)
    assert done.removed == []
    assert [why for _, why in done.kept] == ["a run is making or checking it"]
    assert held.is_dir()


def test_a_file_also_linked_from_uv_s_cache_is_not_counted_as_freed(tmp_path):
    venv = fake_venv(tmp_path / "nox", "release-jax-0.4.30", 30, size=1_000_000)
    cache = tmp_path / "uv-cache"
    cache.mkdir()
    os.link(venv / "lib" / "module.so", cache / "module.so")
    taken, freed = prune.disk_bytes([venv])
    assert taken >= 1_000_000 and freed < 1_000_000 / 10
    # two removed venvs holding links to one file free it, where nothing else links it
    twin = fake_venv(tmp_path / "nox", "release-jax-0.4.31", 30)
    (cache / "module.so").unlink()
    os.link(venv / "lib" / "module.so", twin / "lib" / "shared.so")
    assert prune.disk_bytes([venv])[1] < 1_000_000 / 10
    assert prune.disk_bytes([venv, twin])[1] >= 1_000_000


def test_a_missing_folder_holds_no_venvs(tmp_path):
    assert prune.harness_venvs(tmp_path / "missing") == []
