"""A venv per (jax commit, jaxlib): jax from the commit's tree over a release's install, tried by
importing it."""

import json
import os
import subprocess
import sys

import pytest

from harness.install import commit_venvs, venvs
from harness.install.commit_venvs import OUTCOME, CommitEnv, commit_label
from harness.install.venvs import INSTALLED, ReleaseEnv, install_record
from tests.install.fake_jax_repo import make_repo


def base(tmp_path, install=()):
    return ReleaseEnv(
        "0.4.31", "0.4.31", sys.executable, tuple(install), tmp_path / "release-jax-0.4.31"
    )


def test_a_commit_venv_is_named_for_the_commit_and_its_jaxlib_beside_the_release_venvs(tmp_path):
    env = CommitEnv(
        "a" * 40, "0.4.32", base(tmp_path, ["-e", ".", "jax==0.4.32", "jaxlib==0.4.32"]), tmp_path
    ).env
    assert env.venv == tmp_path / "commit-aaaaaaaaaaaa-jaxlib-0.4.32"
    assert env.install == ("-e", ".", "jax==0.4.32", "jaxlib==0.4.32", f"jax@git:{'a' * 40}")
    assert (env.jax, env.jaxlib) == ("aaaaaaaaaaaa (commit)", "0.4.32")
    cuda = ReleaseEnv("0.4.31", "0.4.31", "3.12", (), tmp_path / "release-jax-0.4.31-cuda12")
    assert (
        CommitEnv("b" * 40, "0.4.31", cuda, tmp_path).env.venv.name
        == "commit-bbbbbbbbbbbb-jaxlib-0.4.31-cuda12"
    )
    assert commit_label("c" * 40, "0.4.31") == "git-cccccccccccc-jaxlib-0.4.31"


def test_an_earlier_outcome_is_reused_without_installing(tmp_path, monkeypatch):
    commit = CommitEnv("a" * 40, "0.4.32", base(tmp_path), tmp_path)
    commit.env.venv.mkdir()
    (commit.env.venv / venvs.USED).write_text("home = /usr/bin\n")
    os.utime(commit.env.venv / venvs.USED, (0, 0))
    record = install_record(commit.env)
    (commit.env.venv / OUTCOME).write_text(
        json.dumps({"record": record, "problem": "does not import: X"})
    )
    monkeypatch.setattr(commit_venvs, "_install", lambda *args: pytest.fail("installed again"))
    assert commit_venvs.ensure(commit, {}) == "does not import: X"
    assert (commit.env.venv / venvs.USED).stat().st_mtime > 0, "stamped used, for prune"


@pytest.mark.venv
def test_jax_installs_from_a_commit_and_a_commit_that_does_not_import_is_told_apart(tmp_path):
    repo, shas = make_repo(tmp_path)
    folder = tmp_path / "venvs"
    folder.mkdir()
    good = CommitEnv(shas["a"], "0.1.0", base(folder), repo)
    assert commit_venvs.ensure(good, {}) is None
    mark = subprocess.run(
        [str(good.env.interpreter), "-c", "import jax; print(jax.COMMIT_MARK, jax.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert mark == ["a", "0.1.1"], "jax is the commit's tree"
    assert json.loads((good.env.venv / INSTALLED).read_text()) == install_record(good.env), (
        "a prober reuses it"
    )

    broken = CommitEnv(shas["b"], "0.1.0", base(folder), repo)
    problem = commit_venvs.ensure(broken, {})
    assert problem is not None and problem.startswith("does not import:") and "new_api" in problem
    assert not (broken.env.venv / INSTALLED).exists()
    assert commit_venvs.ensure(broken, {}) == problem, "tried once, then known"
