"""The jax commit that changed an option's default between two releases, read from a clone of jax
at hand (``--jax-repo``, or the one ``bisect --commits`` keeps under ``.nox/``; none is cloned): the
last first-parent commit of the declaring file that turned the default into the newer release's."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.explain.defaults import JAX, Change, declared_options
from harness.install.commits import (
    COMMIT_URL,
    JAX_REPO_URL,
    clone_folder,
    files_at,
    git,
    is_url,
    release_commit,
)

_FIELD = "\x1f"
TITLE_CHARS = 72  # a commit title, cut where a long first line would drown the answer


@dataclass(frozen=True)
class OptionCommit:
    option: str
    sha: str
    title: str

    def words(self) -> str:
        title = self.title
        if len(title) > TITLE_CHARS:
            title = title[: TITLE_CHARS - 1].rstrip() + "…"
        return f'jax commit {self.sha[:10]} ("{title}")'

    @property
    def url(self) -> str:
        return COMMIT_URL.format(sha=self.sha)


def repo_at_hand(jax_repo: str | None, cache: Path) -> Path | None:
    if jax_repo is not None and not is_url(jax_repo):
        return Path(jax_repo).expanduser()
    folder = clone_folder(cache, jax_repo or JAX_REPO_URL)
    return folder if (folder / "HEAD").is_file() else None


def _declaring_files(repo: Path, sha: str, name: str) -> list[str]:
    quoted = ["-e", f'"{name}"', "-e", f"'{name}'"]
    command = ["git", "-C", str(repo), "grep", "-l", "-F", *quoted, sha, "--", "jax/_src"]
    # not ``git``: grep exits 1 where no file names it
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    return [line.split(":", 1)[1] for line in done.stdout.splitlines() if ":" in line]


def _default_in(text: str | None, name: str) -> str | None:
    if text is None:
        return None
    try:
        option = declared_options(text).get(name)
    except SyntaxError:
        return None
    return option.default if option is not None else None


def option_commit(repo: Path, before: str, after: str, change: Change) -> OptionCommit | None:
    """The first-parent commit from ``before`` to ``after`` after which ``change.name`` has the
    newer release's default, or None."""
    files = _declaring_files(repo, after if change.after is not None else before, change.name)
    if not files:
        return None
    form = f"--format=%H{_FIELD}%s"
    log = git(repo, "log", "--first-parent", "--reverse", form, f"{before}..{after}", "--", *files)
    commits = [line.split(_FIELD, 1) for line in log.splitlines() if _FIELD in line]
    shas = [before, *(sha for sha, _ in commits)]
    defaults: list[str | None] = [None] * len(shas)
    for path in files:  # an option moved between files has its default in one of them
        texts = files_at(repo, shas, path)
        for i, sha in enumerate(shas):
            defaults[i] = defaults[i] or _default_in(texts.get(sha), change.name)
    turned = [i for i in range(1, len(shas)) if defaults[i] == change.after != defaults[i - 1]]
    if not turned:
        return None
    sha, title = commits[turned[-1] - 1]
    return OptionCommit(change.name, sha, title)


def option_commits(
    repo: Path, before: str, after: str, listed: Sequence[Change]
) -> dict[str, OptionCommit]:
    """For each jax option of ``listed``, the commit that changed it; UsageError where the clone
    lacks either release's tag (the answer says so rather than naming nothing in silence)."""
    old, new = release_commit(repo, before), release_commit(repo, after)
    found = {c.name: option_commit(repo, old, new, c) for c in listed if c.kind == JAX}
    return {name: commit for name, commit in found.items() if commit is not None}
