"""One cached venv per (jax commit, jaxlib): a release's install, then jax from the commit's tree.

jax is pure Python, so any commit installs (``--no-deps``, over a release install). ``import jax``
is then tried, as a jaxlib accepted by number may still lack an API the commit uses: one that does
not install or import is set aside with its reason. Whether it imports is recorded beside the venv
(a failed install is tried again: the network may be back), in the record ``venvs.ensure`` checks.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tarfile
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.install import venvs
from harness.install.venvs import INSTALL_TIMEOUT_S, ReleaseEnv, run_whole

OUTCOME = ".harness-commit.json"  # whether the commit installed and imported, beside the venv
IMPORT_TIMEOUT_S = 300
# The folders jax's package is built from, with the top-level files: leaving out tests, docs and
# jaxlib's sources keeps the build and the export small.
PACKAGE_TREES = ("jax", "jax_plugins")
# Imports jax and runs one operation: a jaxlib refused by number, or missing an API, fails here.
IMPORT_CHECK = (
    "import jax, jax.numpy as jnp; jnp.zeros(2).block_until_ready(); print(jax.__version__)"
)


def commit_label(sha: str, jaxlib: str) -> str:
    """The release label a commit's results are stored under: its hash and its jaxlib."""
    return f"git-{sha[:12]}-jaxlib-{jaxlib}"


def is_commit_label(label: str) -> bool:
    return label.startswith("git-")


@dataclass(frozen=True)
class CommitEnv:
    """jax at ``sha`` with ``jaxlib``: ``base`` is the release venv whose install it starts from."""

    sha: str
    jaxlib: str
    base: ReleaseEnv  # a release of that jaxlib: what it installs, before jax is replaced
    repo: Path  # the git repository the tree comes from
    # A script's libraries (``name==version``), held at the good release's on every commit.
    libraries: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return commit_label(self.sha, self.jaxlib)

    @property
    def env(self) -> ReleaseEnv:
        """As a release prober sees it: its own venv, and an install naming the commit."""
        build = self.base.venv.name.removeprefix(f"release-jax-{self.base.jax}")
        digest = hashlib.sha256(" ".join(self.libraries).encode()).hexdigest()[:12]
        held = f"-with-{digest}" if self.libraries else ""
        venv = self.base.venv.with_name(f"commit-{self.sha[:12]}-jaxlib-{self.jaxlib}{build}{held}")
        install = (*self.base.install, *self.libraries, f"jax@git:{self.sha}")
        return ReleaseEnv(f"{self.sha[:12]} (commit)", self.jaxlib, self.base.python, install, venv)


def export_tree(repo: Path, sha: str, into: Path) -> str | None:
    """The commit's files and ``PACKAGE_TREES`` under ``into``: None when done, else why not."""
    listed = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", sha], capture_output=True, text=True, check=False
    )
    if listed.returncode != 0:
        return f"`git ls-tree {sha[:12]}` failed: {venvs.last_lines(listed.stderr)}"
    entries = [line.split(None, 3) for line in listed.stdout.splitlines()]
    paths = [name for _, kind, _, name in entries if kind == "blob" or name in PACKAGE_TREES]
    with tempfile.TemporaryFile() as archive:
        done = subprocess.run(
            ["git", "-C", str(repo), "archive", "--format=tar", sha, "--", *paths],
            stdout=archive,
            stderr=subprocess.PIPE,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            why = venvs.last_lines(done.stderr.decode(errors="replace"))
            return f"`git archive {sha[:12]}` failed: {why}"
        archive.seek(0)
        with tarfile.open(fileobj=archive) as tar:
            tar.extractall(into, filter="data")
    return None


def _run(
    command: list[str], env: Mapping[str, str] | None = None, timeout: float = INSTALL_TIMEOUT_S
) -> str | None:
    done = run_whole(command, venvs.REPO, timeout, env)
    return None if done.returncode == 0 else venvs.last_lines(done.stderr or done.stdout)


def ensure(commit: CommitEnv, environ: Mapping[str, str]) -> str | None:
    """Make the commit's venv hold jax at the commit with its jaxlib, importable under ``environ``;
    None when ready, else why not (also when an earlier try found that)."""
    env = commit.env
    wanted = venvs.install_record(env)
    outcome = env.venv / OUTCOME
    try:
        stored = json.loads(outcome.read_text())
        if stored["record"] == wanted and (stored["problem"] or env.interpreter.exists()):
            venvs.mark_used(env.venv)
            return stored["problem"]
    except (OSError, ValueError, KeyError, TypeError):
        pass  # never tried with this install
    problem = _install(commit, env)
    if problem:  # perhaps the network, or the disk: tried again next time
        return problem
    problem = _run([str(env.interpreter), "-c", IMPORT_CHECK], environ, IMPORT_TIMEOUT_S)
    # The traceback's last line says why (``module 'jaxlib.gpu_linalg' has no attribute ...``).
    if problem is not None:
        problem = f"does not import: {problem.split(' / ')[-1].strip()}"
    outcome.write_text(json.dumps({"record": wanted, "problem": problem}))
    if problem is None:
        (env.venv / venvs.INSTALLED).write_text(json.dumps(wanted))
    return problem


def _install(commit: CommitEnv, env: ReleaseEnv) -> str | None:
    uv = venvs.uv_command()
    if uv is None:
        return venvs.UV_MISSING
    if not (env.venv / "pyvenv.cfg").is_file():
        problem = _run([*uv, "venv", "--quiet", "--python", env.python, str(env.venv)])
        if problem:
            return f"`uv venv` failed: {problem}"
    install = [*uv, "pip", "install", "--quiet", "--python", str(env.interpreter)]
    if commit.base.install or commit.libraries:
        problem = _run([*install, *commit.base.install, *commit.libraries])
        if problem:
            return f"jaxlib {commit.jaxlib} and jax's dependencies do not install: {problem}"
    with tempfile.TemporaryDirectory(prefix="harness-jax-tree-") as scratch:
        tree = Path(scratch) / "jax"
        problem = export_tree(commit.repo, commit.sha, tree)
        if problem:
            return problem
        # Its dependencies came with the release install above: jax alone is replaced.
        replace = ["--no-deps", "--reinstall-package", "jax", str(tree)]
        problem = _run([*install, *replace])
    if problem:
        return f"jax at {commit.sha[:12]} does not install: {problem}"
    problem = _run(venvs.compile_all(env.venv))
    return f"jax at {commit.sha[:12]} does not compile: {problem}" if problem else None
