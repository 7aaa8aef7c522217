"""jax's commits between two releases, read from a git repository: first-parent order, and the
jaxlibs each accepts.

A commit accepts a jaxlib J only when ``_minimum_jaxlib_version`` ≤ J ≤ ``_version`` (its
``jax/version.py``); commits after release U carry the next number, which need not be the next
release's, so this is read commit by commit, never assumed. The commits are those ``git bisect
--first-parent`` walks, from ``--jax-repo`` (a clone or a URL; by default a bare clone of jax's
repository cached beside the venvs). Standard library only.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import UsageError
from harness.units import version_key

JAX_REPO_URL = "https://github.com/jax-ml/jax"
COMMIT_URL = JAX_REPO_URL + "/commit/{sha}"
GIT_TIMEOUT_S = 1800  # a first clone of jax's whole history
VERSION_FILE = "jax/version.py"
_FIELD, _RECORD = "\x1f", "\x1e"
ATTRIBUTIONS = 3  # (commit, jaxlib, jaxlib) choices measured to attribute a change
_VERSION = re.compile(r"^_version\s*(?::\s*str)?\s*=\s*['\"]([^'\"]+)['\"]", re.M)
_MINIMUM = re.compile(r"^_minimum_jaxlib_version\s*(?::\s*str)?\s*=\s*['\"]([^'\"]+)['\"]", re.M)
# "Merge pull request #23415 from …", "… (#23415)", or copybara's "…/pull/23415".
_PULL = re.compile(r"pull request #(\d+)|\(#(\d+)\)\s*$|/pull/(\d+)", re.I | re.M)


@dataclass(frozen=True)
class Commit:
    sha: str
    title: str
    date: str  # the committer date, ISO 8601
    # ``_version`` of its jax/version.py (None: the file or the line is missing)
    version: str | None
    minimum_jaxlib: str | None
    pull_request: int | None = None

    @property
    def short(self) -> str:
        return self.sha[:10]

    @property
    def url(self) -> str:
        return COMMIT_URL.format(sha=self.sha)

    def accepts(self, jaxlib: str) -> bool:
        """Whether jax at this commit imports with ``jaxlib`` as far as its version check goes."""
        if self.version is None or self.minimum_jaxlib is None:
            return False
        return version_key(self.minimum_jaxlib) <= version_key(jaxlib) <= version_key(self.version)

    def accepted(self, jaxlibs: Sequence[str]) -> list[str]:
        return [jaxlib for jaxlib in jaxlibs if self.accepts(jaxlib)]


def git(repo: Path, *args: str) -> str:
    """``git -C repo ARGS``'s output; a failure is a UsageError naming ``--jax-repo``."""
    command = ["git", "-C", str(repo), *args]
    where = f"`git {' '.join(args[:2])}` in the jax repository {repo}"
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(f"{where} failed: {exc}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"{where} (--jax-repo) failed: {last}")
    return done.stdout


def is_url(spec: str) -> bool:
    return "://" in spec or spec.startswith("git@")


def clone_folder(cache: Path, url: str) -> Path:
    """Where a clone of ``url`` is cached: jax's as ``jax-repo.git``, any other by its hash."""
    if url.rstrip("/").removesuffix(".git") == JAX_REPO_URL:
        return cache / "jax-repo.git"
    return cache / f"jax-repo-{hashlib.sha256(url.encode()).hexdigest()[:12]}.git"


def open_repo(spec: str | None, cache: Path) -> Path:
    """``--jax-repo``'s git folder: a local clone as it is, a URL (jax's) cloned into ``cache``."""
    if spec is not None and not is_url(spec):
        repo = Path(spec).expanduser()
        if not repo.exists():
            wanted = "a local clone of jax, or a URL to clone"
            raise UsageError(f"--jax-repo {spec}: no such folder ({wanted})")
        git(repo, "rev-parse", "--git-dir")
        return repo
    url = spec or JAX_REPO_URL
    folder = clone_folder(cache, url)
    if (folder / "HEAD").is_file():
        return folder
    cache.mkdir(parents=True, exist_ok=True)
    # Large blobs (images, test data) stay on the server: version.py and the package are small.
    command = ["git", "clone", "--bare", "--quiet", "--filter=blob:limit=1m", url, str(folder)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=GIT_TIMEOUT_S, check=False
        )
        problem = (done.stderr.strip().splitlines() or ["no output"])[-1] if done.returncode else ""
    except (OSError, subprocess.TimeoutExpired) as exc:
        problem = str(exc)
    if problem:
        offline = "without network, give a local clone of jax with --jax-repo PATH"
        raise UsageError(f"cannot clone {url} into {folder} ({problem}); {offline}")
    return folder


def release_commit(repo: Path, version: str, *, fetch: bool = False) -> str:
    """The commit of jax release ``version`` by its tag; ``fetch`` (a clone the harness keeps): a
    release newer than the clone is fetched before it is refused."""
    for attempt in range(2 if fetch else 1):
        if attempt:
            git(repo, "fetch", "--quiet", "--tags", "origin")
        for tag in (f"jax-v{version}", f"jax-{version}", f"v{version}"):
            with contextlib.suppress(UsageError):  # no such tag: the next spelling
                found = git(repo, "rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}")
                return found.strip()
    fuller = "give a fuller clone with --jax-repo"
    raise UsageError(f"the jax repository {repo} has no tag jax-v{version} ({fuller})")


def parse_version_file(text: str) -> tuple[str | None, str | None]:
    """(``_version``, ``_minimum_jaxlib_version``) of a jax/version.py; None for a line it lacks."""
    version, minimum = _VERSION.search(text), _MINIMUM.search(text)
    return (version.group(1) if version else None, minimum.group(1) if minimum else None)


def pull_request(message: str) -> int | None:
    found = _PULL.search(message)
    return int(next(group for group in found.groups() if group)) if found else None


def files_at(repo: Path, shas: Sequence[str], path: str) -> dict[str, str]:
    """sha → the text of ``path`` in that commit (where it has it), in one ``git cat-file``."""
    if not shas:
        return {}
    output = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch"],
        input="".join(f"{sha}:{path}\n" for sha in shas).encode(),
        capture_output=True,
        timeout=GIT_TIMEOUT_S,
        check=True,
    ).stdout
    found, at = {}, 0
    for sha in shas:
        end = output.index(b"\n", at)
        header = output[at:end].decode().split()
        at = end + 1
        if len(header) == 3 and header[1] == "blob":
            size = int(header[2])
            found[sha] = output[at : at + size].decode(errors="replace")
            at += size + 1
    return found


def first_parent_commits(repo: Path, good: str, bad: str) -> list[Commit]:
    """The commits after ``good`` up to ``bad`` along bad's first parents, oldest first."""
    form = f"--format=%H{_FIELD}%s{_FIELD}%cI{_FIELD}%B{_RECORD}"
    log = git(repo, "log", "--first-parent", "--reverse", form, f"{good}..{bad}")
    rows = [record.strip("\n").split(_FIELD, 3) for record in log.split(_RECORD) if record.strip()]
    files = files_at(repo, [row[0] for row in rows], VERSION_FILE)
    return [
        Commit(sha, title, date, *parse_version_file(files.get(sha, "")), pull_request(message))
        for sha, title, date, message in rows
    ]


def candidate_jaxlibs(
    commits: Sequence[Commit], listed: Sequence[str], first: str, last: str
) -> list[str]:
    """Every jaxlib worth trying, oldest first: those listed from ``first`` to ``last``, and every
    number a commit names (a yanked 0.4.32 installs by pin; an early commit may want an older)."""
    named = {v for c in commits for v in (c.version, c.minimum_jaxlib) if v is not None}
    within = {v for v in listed if version_key(first) <= version_key(v) <= version_key(last)}
    return sorted(named | within, key=version_key)


@dataclass(frozen=True)
class Segment:
    """Consecutive commits that all accept one jaxlib (None: none of the candidates)."""

    jaxlib: str | None
    commits: tuple[Commit, ...]


def segments(
    commits: Sequence[Commit], jaxlibs: Sequence[str], preferred: Sequence[str] = ()
) -> list[Segment]:
    """The range cut where no one jaxlib fits on: from each cut, the jaxlib that the most commits in
    a row accept (the older of two that go as far: they were written against it). One of
    ``preferred`` (the releases' own and those between) goes first wherever one fits."""
    step = [j for j in preferred if j in jaxlibs]
    found: list[Segment] = []
    at = 0
    while at < len(commits):
        fitting = [j for j in step if commits[at].accepts(j)]
        best, reach = None, at + 1
        for jaxlib in fitting or jaxlibs:
            end = at
            while end < len(commits) and commits[end].accepts(jaxlib):
                end += 1
                # a jaxlib of the step fits from here on: the older one gives way
                if (
                    not fitting
                    and end < len(commits)
                    and any(commits[end].accepts(j) for j in step)
                ):
                    break
            if end > at and (best is None or end > reach):
                best, reach = jaxlib, end
        found.append(Segment(best, tuple(commits[at:reach])))
        at = reach
    return found


def attribution_choices(
    commits: Sequence[Commit], jaxlibs: Sequence[str], good: str, bad: str
) -> list[tuple[Commit, str, str]]:
    """Up to ``ATTRIBUTIONS`` (commit, older jaxlib, newer jaxlib), best first: the pair nearest
    the releases' own that some commit accepts, widest first, with the latest commits accepting both
    (they have caught up with the newer jaxlib's API; an early one may not import)."""
    around = [j for j in jaxlibs if version_key(good) <= version_key(j) <= version_key(bad)]
    pairs = [(a, b) for i, a in enumerate(around) for b in around[i + 1 :]]

    def rank(pair: tuple[str, str]) -> tuple[int, int]:
        a, b = pair
        return (-(int(a == good) + int(b == bad)), -(around.index(b) - around.index(a)))

    for a, b in sorted(pairs, key=rank):
        both = [c for c in commits if c.accepts(a) and c.accepts(b)]
        if both:
            return [(c, a, b) for c in reversed(both[-ATTRIBUTIONS:])]
    return []
