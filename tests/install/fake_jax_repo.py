"""A small git repository shaped like jax's: a package ``jax`` with ``jax/version.py``, release
tags, a merged branch.

Its ``jax`` is a tiny stand-in (``jax.numpy.zeros`` and ``block_until_ready``), so a venv can
install and import it from any commit in a second; ``jax.COMMIT_MARK`` says which commit it is.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "jax"
version = "{version}"

[tool.setuptools]
packages = ["jax"]
"""
NUMPY = """class Array(list):
    def block_until_ready(self):
        return self


def zeros(n):
    return Array([0.0] * n)
"""


def git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env
    )
    return done.stdout.strip()


def write_jax(repo: Path, version: str, minimum: str, mark: str, broken: bool = False) -> None:
    (repo / "jax").mkdir(parents=True, exist_ok=True)
    (repo / "pyproject.toml").write_text(PYPROJECT.format(version=version))
    (repo / "jax" / "version.py").write_text(
        f'_version: str = "{version}"\n_release_version: str | None = '
        f'None\n\n_minimum_jaxlib_version = "{minimum}"\n'
    )
    (repo / "jax" / "numpy.py").write_text(NUMPY)
    body = 'raise ImportError("module jaxlib has no attribute new_api")\n' if broken else ""
    init = f'{body}from jax import numpy\n__version__ = "{version}"\nCOMMIT_MARK = "{mark}"\n'
    (repo / "jax" / "__init__.py").write_text(init)


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def make_repo(root: Path) -> tuple[Path, dict[str, str]]:
    """Tags jax-v0.1.0 and jax-v0.1.2, four commits between them along the first parents (one a
    merge of a side branch whose own commit is not on that line, one that does not import); name →
    sha."""
    repo = root / "jax-clone"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    shas = {}
    write_jax(repo, "0.1.0", "0.0.9", "v0.1.0")
    shas["v0.1.0"] = commit(repo, "Prepare for v0.1.0 release.")
    git(repo, "tag", "jax-v0.1.0")
    write_jax(repo, "0.1.1", "0.1.0", "a")
    shas["a"] = commit(repo, "Start 0.1.1 (#101)")
    git(repo, "checkout", "-q", "-b", "side")
    (repo / "side.txt").write_text("side\n")
    shas["side"] = commit(repo, "A side branch's own commit")
    git(repo, "checkout", "-q", "main")
    write_jax(repo, "0.1.1", "0.1.0", "b", broken=True)
    shas["b"] = commit(repo, "Use an API of a newer jaxlib")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge pull request #202 from someone:side", "side")
    shas["merge"] = git(repo, "rev-parse", "HEAD")
    write_jax(repo, "0.1.2", "0.1.2", "v0.1.2")
    shas["v0.1.2"] = commit(repo, "Prepare for v0.1.2 release.\n\nPiperOrigin-RevId: 1")
    git(repo, "tag", "jax-v0.1.2")
    return repo, shas
