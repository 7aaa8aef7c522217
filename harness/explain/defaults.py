"""The options whose defaults differ between two releases: jax's config options and XLA's flags.

A step often comes from a default that changed (XLA:CPU's thunk runtime, 0.4.31 → 0.4.33). Both
lists are read off the releases' venvs: jax's options from the declarations in its installed
``jax/_src`` (``config.bool_flag(name=..., default=...)`` …), parsed, never imported; XLA's flags
from what a jaxlib prints when started with ``XLA_FLAGS=--help`` (it then aborts on purpose).
"""

from __future__ import annotations

import ast
import contextlib
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.install.commits import (
    COMMIT_URL,
    JAX_REPO_URL,
    clone_folder,
    files_at,
    git,
    is_url,
    release_commit,
)

JAX, XLA = "jax", "xla"
LISTING_TIMEOUT_S = 120
# A flag line of XLA's listing: a tab, --name=default (padded), a tab, its type, a tab, its help.
FLAG_LINE = re.compile(
    r"^\t--(?P<name>[A-Za-z0-9_]+)=(?P<default>.*?)\s*\t(?P<type>[A-Za-z0-9_]+)\t(?P<help>.*)$"
)
# jax's declarations of an option: bool_flag, enum_state, define_bool_state (older), DEFINE_bool …
DECLARATION = re.compile(r"^(define_)?[a-z_]*_(flag|state)$|^DEFINE_[a-z]+$")
# What a call reading an environment variable with a default looks like: bool_env('JAX_X', False).
ENV_DEFAULT = re.compile(r"^(bool|int|float|str|string)_env$")
# Options of other platforms than the profile's, by the name's parts.
GPU_PARTS = ("gpu", "cuda", "rocm", "mosaic", "pallas", "triton", "nccl", "cudnn", "cublas", "ptx")
OTHER_PLATFORMS = {
    "cpu": (*GPU_PARTS, "nvptx", "tpu"),
    "gpu": ("tpu",),
    "tpu": (*(part for part in GPU_PARTS if part not in ("mosaic", "pallas")), "nvptx"),
}


@dataclass(frozen=True)
class Option:
    name: str
    default: str
    kind: str  # JAX or XLA
    type: str = ""
    help: str = ""


@dataclass(frozen=True)
class Change:
    name: str
    kind: str
    before: str | None  # the older release's default; None: it has no such option
    after: str | None
    help: str = ""

    def text(self) -> str:
        if self.before is None:
            return f"{self.name}: added (default {self.after})"
        if self.after is None:
            return f"{self.name}: removed (default was {self.before})"
        return f"{self.name}: {self.before} → {self.after}"


def parse_xla_listing(text: str) -> dict[str, Option]:
    matches = (FLAG_LINE.match(line) for line in text.splitlines())
    return {
        m["name"]: Option(m["name"], m["default"].strip(), XLA, m["type"], m["help"].strip())
        for m in matches
        if m
    }


def xla_listing(interpreter: Path, environ: Mapping[str, str]) -> dict[str, Option] | str:
    command = [str(interpreter), "-c", "import jax; jax.devices()"]
    # on the host's CPU: the listing is the same, and an accelerator (a TPU chip, which one process
    # at a time may hold) is left to the case processes
    asked = {**environ, "XLA_FLAGS": "--help", "JAX_PLATFORMS": "cpu"}
    try:
        done = subprocess.run(
            command,
            env=asked,
            capture_output=True,
            text=True,
            timeout=LISTING_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"XLA's flags could not be listed: {exc}"
    found = parse_xla_listing(done.stdout + "\n" + done.stderr)
    if not found:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return f"XLA's flags could not be listed (exit code {done.returncode}): {last}"
    return found


def site_packages(venv: Path) -> Path | None:
    found = sorted(venv.glob("lib/python3*/site-packages"))
    return found[-1] if found else None


def _literal(node: ast.expr | None) -> str | None:
    """An option's default as its source writes it: a constant, an environment reading's default,
    else the expression."""
    if node is None:
        return None
    if isinstance(node, ast.Constant):
        return repr(node.value)
    if isinstance(node, ast.Call) and ENV_DEFAULT.match(_called(node)) and len(node.args) >= 2:
        return _literal(node.args[1])
    return ast.unparse(node)


def _called(call: ast.Call) -> str:
    function = call.func
    if isinstance(function, ast.Attribute):
        return function.attr
    return function.id if isinstance(function, ast.Name) else ""


def _argument(call: ast.Call, keyword: str, position: int) -> ast.expr | None:
    for given in call.keywords:
        if given.arg == keyword:
            return given.value
    return call.args[position] if len(call.args) > position else None


def declared_options(source: str) -> dict[str, Option]:
    found = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not DECLARATION.match(_called(node)):
            continue
        name = _string(_argument(node, "name", 0))
        if name is None or not name.startswith("jax_"):
            continue
        default = _literal(_argument(node, "default", 1)) or ""
        help_text = " ".join((_string(_argument(node, "help", 2)) or "").split())
        found[name] = Option(name, default, JAX, _called(node), help_text)
    return found


def _string(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def jax_options(packages: Path) -> dict[str, Option]:
    found: dict[str, Option] = {}
    for path in sorted((packages / "jax" / "_src").rglob("*.py")):
        with contextlib.suppress(OSError, UnicodeDecodeError, SyntaxError):
            source = path.read_text()
            if any(declares in source for declares in ("_flag(", "_state(", "DEFINE_")):
                found.update(declared_options(source))
    return found


def changes(before: Mapping[str, Option], after: Mapping[str, Option]) -> list[Change]:
    found = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old is not None and new is not None and old.default == new.default:
            continue
        either = new or old
        assert either is not None
        was, now = (each.default if each else None for each in (old, new))
        found.append(Change(name, either.kind, was, now, either.help))
    return found


def relevant(found: list[Change], platform: str) -> list[Change]:
    others = OTHER_PLATFORMS.get(platform, ())
    return [
        change for change in found if not any(part in others for part in change.name.split("_"))
    ]


# The jax commit that changed an option's default between two releases, read from a clone of jax at
# hand (``--jax-repo``, or the one ``bisect --commits`` keeps under ``.nox/``; none is cloned): the
# last first-parent commit of the declaring file that turned the default into the newer release's.
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
