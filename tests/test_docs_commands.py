"""Every command the README and docs/ show in a shell block works as written on a fresh clone.

Each command is read from its page's ``sh``/``console`` blocks.  A ``nox`` command must name real
sessions or tags (one release of ``repro``, never the whole family) and its posargs must pass the
checks the session makes before installing anything; a ``jax-repro`` (or ``python -m harness``)
command must name a real command whose options pass its checks.  Both are checked in a folder
holding what the commands name (a script, result folders), so a check fails on the options, never on
a missing file.  A ``console`` block shows a command's output: those commands run and must print it.
The cheap commands of ``RUN_AS_WRITTEN`` run too, and the two that need a venv run in a copy of the
working tree, as on a fresh clone.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.cli.options import release_version
from harness.cli.parser import COMMANDS, parse, validate
from harness.cli.sessions import RELEASE_SETS, session_view, watch_view
from harness.errors import UsageError
from harness.pins import PROFILE_BY_NAME, RELEASE_BY_VERSION

from . import test_noxfile
from .conftest import REPO, nox_in_repo

PAGES = [REPO / "README.md", REPO / "cases" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SHELL_BLOCKS = ("sh", "shell", "bash", "console")
# Sessions whose posargs go to pytest, not to the harness: nothing of the harness's to check.
PYTEST_SESSIONS = ("tests", "compat", "workflow", "lint")
# The commands that run as written, on a fresh state, and must exit 0: cheap, no JAX, nothing
# installed.
RUN_AS_WRITTEN = (
    "jax-repro list",
    "jax-repro list --case scan_sync",
    "jax-repro export --case scan_sync --size N=16 --size M=3",
    "nox -l",
)
# What the commands name, made in the folder they are checked in (a checkout of the harness): a
# plain script, result folders, a folder of scripts (watch --scripts) and, beside the checkout, a
# library's pytest-benchmark suite (watch --pytest-benchmark).
NAMED_FILES = ("repro.py",)
NAMED_FOLDERS = ("results", "main-results", "pr-results", "artifacts/ci")
NAMED_CLONE = "src/jax"
NAMED_SCRIPT_FOLDERS = ("benchmarks/regressions", "../lineax/benchmarks")
NAMED_SUITES = (
    "../blackjax/tests/test_benchmarks.py",
    "../optimistix/benchmarks/test_benchmarks.py",
)
CUT = "…"  # a shown output line ending in it is a prefix of the real line


@dataclass(frozen=True)
class Command:
    where: str  # page:line
    argv: tuple[str, ...]
    shown: tuple[str, ...] = ()  # the output a console block shows under it
    console: bool = False
    # a command named in a table (as `jax-repro bisect`): it must parse, not run as it is
    named: bool = False

    @property
    def text(self) -> str:
        return shlex.join(self.argv)

    def __str__(self) -> str:
        return f"{self.where}: {self.text}"


def fenced_blocks(text: str) -> Iterator[tuple[str, int, list[str]]]:
    """(info string, line number of the first line, lines) of every fenced block."""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = re.match(r"^(`{3,})\s*(\S*)", lines[index])
        if not opening:
            index += 1
            continue
        fence, info, start = opening.group(1), opening.group(2), index + 1
        index += 1
        while index < len(lines) and not lines[index].startswith(fence):
            index += 1
        yield info, start + 1, lines[start:index]
        index += 1


def split_commands(line: str) -> list[tuple[str, ...]]:
    """The commands of one shell line: its words, comments dropped, split at ``&&`` and ``;``."""
    words = shlex.split(line, comments=True)
    commands, current = [], []
    for word in words:
        if word in ("&&", ";"):
            commands.append(tuple(current))
            current = []
        else:
            current.append(word)
    return [c for c in (*commands, tuple(current)) if c]


def commands_of(page: Path) -> list[Command]:
    name = page.relative_to(REPO).as_posix()
    found = []
    for info, first, lines in fenced_blocks(page.read_text()):
        if info not in SHELL_BLOCKS:
            continue
        joined: list[tuple[int, str]] = []
        for number, line in enumerate(lines, first):
            if joined and joined[-1][1].endswith("\\"):
                joined[-1] = (joined[-1][0], joined[-1][1][:-1] + " " + line)
            else:
                joined.append((number, line))
        if info == "console":
            for position, (number, line) in enumerate(joined):
                if line.startswith("$ "):
                    shown = []
                    for _, after in joined[position + 1 :]:
                        if after.startswith("$ "):
                            break
                        shown.append(after)
                    for argv in split_commands(line[2:]):
                        found.append(Command(f"{name}:{number}", argv, tuple(shown), console=True))
        else:
            found += [
                Command(f"{name}:{n}", argv) for n, line in joined for argv in split_commands(line)
            ]
    for number, line in enumerate(page.read_text().splitlines(), 1):
        if line.startswith("| "):
            first_cell = line.split(" | ")[0]
            for span in re.findall(r"`([^`]+)`", first_cell):
                if span == "nox" or span.startswith(("nox ", "jax-repro ")):
                    found.append(Command(f"{name}:{number}", tuple(shlex.split(span)), named=True))
    return found


DOCUMENTED = [command for page in PAGES for command in commands_of(page)]


def harness_argv(command: Command) -> list[str] | None:
    """The arguments after ``jax-repro`` / ``python -m harness``; None for any other command."""
    argv = list(command.argv)
    # The command run once from its package (README, "Without cloning"): the same command line after
    # it.
    for runner in (("uvx", "--from"), ("pipx", "run", "--spec")):
        if tuple(argv[: len(runner)]) == runner and argv[len(runner) + 1 : len(runner) + 2] == [
            "jax-repro"
        ]:
            argv = argv[len(runner) + 1 :]
    if argv[0] == "jax-repro":
        return argv[1:]
    if argv[0] in ("python", "python3") and argv[1:3] == ["-m", "harness"]:
        return argv[3:]
    return None


def is_pip_install(command: Command) -> bool:
    return command.argv[0] in ("python", "python3") and command.argv[1:4] == (
        "-m",
        "pip",
        "install",
    )


@pytest.fixture(scope="module")
def sessions() -> list[dict]:
    listed = subprocess.run(
        [sys.executable, "-m", "nox", "-l", "--json", "-k", "not a_name_no_session_has"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(listed.stdout)


@pytest.fixture
def named_state(tmp_path, monkeypatch) -> Path:
    """A folder holding what the documented commands name, as the current folder."""
    checkout = tmp_path / "harness"
    # A repro that imports a library, as most do: the documented --hold and --vary name it.
    block = '# /// script\n# dependencies = ["equinox"]\n# ///\n'
    repro = block + 'import json\nprint(json.dumps({"loop_ms": 1.0}))\n'
    for file in NAMED_FILES:
        (checkout / file).parent.mkdir(parents=True, exist_ok=True)
        (checkout / file).write_text(repro)
    for folder in NAMED_FOLDERS:
        (checkout / folder).mkdir(parents=True)
    for folder in NAMED_SCRIPT_FOLDERS:
        (checkout / folder).mkdir(parents=True)
        (checkout / folder / "repro.py").write_text(repro)
    for suite in NAMED_SUITES:
        (checkout / suite).parent.mkdir(parents=True)
        (checkout / suite).write_text("def test_sum(benchmark):\n    benchmark(sum, [1, 2])\n")
    # The clone a documented --jax-repo names (~/src/jax), under a home folder of the test's own: a
    # folder that is not a git repository is refused before anything runs.
    subprocess.run(["git", "init", "-q", str(tmp_path / NAMED_CLONE)], check=True)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(checkout)
    return checkout


@dataclass
class NoxCall:
    names: list[str]
    tags: list[str]
    listing: bool
    posargs: list[str]


def nox_call(argv: tuple[str, ...]) -> NoxCall:
    """The sessions, tags and posargs of a nox command line (the options the docs use; any other is
    an error)."""
    call = NoxCall([], [], False, [])
    words = list(argv[1:])
    if "--" in words:
        call.posargs.extend(words[words.index("--") + 1 :])
        words = words[: words.index("--")]
    target: list[str] | None = None
    for word in words:
        if word in ("-s", "--session", "--sessions"):
            target = call.names
        elif word in ("-t", "--tags"):
            target = call.tags
        elif word in ("-l", "--list"):
            call.listing = True
        elif word in ("--json", "--install-only"):
            target = None
        elif target is not None and not word.startswith("-"):
            target.append(word)
        else:
            raise AssertionError(f"nox option the docs test does not know: {word}")
    return call


def check_nox(command: Command, sessions: list[dict]) -> None:
    call = nox_call(command.argv)
    by_signature = {s["session"]: s for s in sessions}
    families: dict[str, list[dict]] = {}
    for s in sessions:
        families.setdefault(s["name"], []).append(s)
    tags = {tag for s in sessions for tag in s["tags"]}
    for tag in call.tags:
        assert tag in tags, f"{command}: no session is tagged {tag}"
    selected = []
    for name in call.names:
        if name in by_signature:
            selected.append(by_signature[name])
            continue
        assert name in families, f"{command}: no session {name}"
        members = families[name]
        one = [m for m in members if m["call_spec"].get("profile") == "cpu"] or members
        assert call.listing or len(members) <= 2, (
            f"{command}: `nox -s {name}` selects {len(members)} sessions; name one, e.g. "
            f"{one[-1]['session']!r}"
        )
        selected += members
    if not call.names and not call.tags and not call.listing:
        selected = [by_signature[name] for name in test_noxfile.noxfile.nox.options.sessions]
    if call.posargs:
        for session in selected:
            check_posargs(command, session, call.posargs)


def check_posargs(command: Command, session: dict, posargs: list[str]) -> None:
    """The posargs as the session checks them before installing anything (help printed is fine)."""
    name = session["name"]
    if name in PYTEST_SESSIONS:
        return
    try:
        if name == "repro":
            session_view("run", ["--profile", session["call_spec"]["profile"], *posargs])
        elif name == "matrix":
            check_matrix(posargs)
        elif name in ("run", "flags"):
            check_one_release_run(posargs, name)
        elif name == "watch":
            watch_view(posargs)
        else:
            session_view(name, posargs)
    except UsageError as exc:
        raise AssertionError(f"{command}: refused: {exc}") from None
    except SystemExit as exc:  # -- --help: the command's help, exit 0
        assert exc.code == 0, f"{command}: exit {exc.code}"


def take(words: list[str], option: str) -> str | None:
    """Remove ``option VALUE`` / ``option=VALUE`` from ``words``; the value."""
    for index, word in enumerate(words):
        if word == option:
            value = words[index + 1]
            del words[index : index + 2]
            return value
        if word.startswith(option + "="):
            del words[index]
            return word.split("=", 1)[1]
    return None


def check_matrix(posargs: list[str]) -> None:
    rest = list(posargs)
    releases = take(rest, "--jax")
    if releases is not None and releases not in RELEASE_SETS:
        unknown = [r for r in releases.split(",") if r not in RELEASE_BY_VERSION]
        assert not unknown, f"not in the release table: {unknown}"
    profiles = take(rest, "--profile")
    if profiles is not None:
        assert all(p in PROFILE_BY_NAME for p in profiles.split(",")), profiles
    validate(["run", *rest])


def check_one_release_run(posargs: list[str], command: str = "run") -> None:
    """``nox -s run`` or ``nox -s flags``: a release of the index (``--jax``), then the command."""
    rest = list(posargs)
    jax = take(rest, "--jax")
    if jax is not None:
        release_version(jax)
    validate([command, *rest])


def as_the_shell_expands(argv: list[str]) -> list[str]:
    """Words with a ``*`` replaced by the files they match in the current folder, as a shell
    would."""
    return [
        m for word in argv for m in (sorted(glob.glob(word)) or [word] if "*" in word else [word])
    ]


def check_harness(command: Command, argv: list[str]) -> None:
    assert argv and argv[0] in COMMANDS, f"{command}: no command {argv[:1]}"
    try:
        if command.named:
            parse(argv)
        else:
            validate(as_the_shell_expands(argv))
    except UsageError as exc:
        raise AssertionError(f"{command}: refused: {exc}") from None


def refusal(command: Command) -> bool:
    """A console example of bad input: it shows the one line the harness answers with."""
    return command.console and any(line.startswith("harness: error:") for line in command.shown)


STATIC = [c for c in DOCUMENTED if not refusal(c)]


def test_the_pages_show_commands_of_every_kind():
    kinds = {c.argv[0] for c in DOCUMENTED}
    assert {"nox", "jax-repro"} <= kinds
    assert len(STATIC) >= 80, len(STATIC)


@pytest.mark.parametrize("command", STATIC, ids=str)
def test_a_documented_command_names_real_sessions_or_commands_and_its_options_pass(
    command, sessions, named_state
):
    argv = harness_argv(command)
    if command.argv[0] == "nox":
        check_nox(command, sessions)
    elif argv is not None:
        check_harness(command, argv)
    else:
        assert is_pip_install(command), f"{command}: a kind of command this test cannot check"


@pytest.mark.parametrize("name", sorted({a[0] for c in DOCUMENTED if (a := harness_argv(c))}))
def test_the_help_of_every_documented_command_renders(name, capsys):
    with pytest.raises(SystemExit) as stopped:
        parse([name, "--help"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: jax-repro {name}")


def test_every_session_the_docs_give_arguments_has_its_help_checked_before_installing():
    """tests/test_noxfile.py runs ``-- --help`` of each session; the docs name no session it leaves
    out."""
    [mark] = [
        m
        for m in test_noxfile.test_every_session_answers_help_before_installing_anything.pytestmark
    ]
    helped = {"run" if name == "run_one" else name for name, _ in mark.args[1]}
    given = set()
    for command in DOCUMENTED:
        if command.argv[0] == "nox" and "--" in command.argv:
            call = nox_call(command.argv)
            given |= {re.sub(r"\(.*", "", n) for n in call.names} or {"matrix", "report"}
    assert given - set(PYTEST_SESSIONS) <= helped, given - helped


def test_the_cheap_commands_are_documented_as_they_run():
    texts = {c.text for c in DOCUMENTED}
    assert set(RUN_AS_WRITTEN) <= texts, set(RUN_AS_WRITTEN) - texts


def console_script() -> str:
    found = shutil.which("jax-repro", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip(
            "jax-repro is not installed beside this Python (reinstall the project: nox -s tests)"
        )
    return found


def run_as_written(argv: tuple[str, ...], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    if argv[0] == "nox" and cwd == REPO:
        return nox_in_repo(*argv[1:], env=env, timeout=120)
    if argv[0] == "jax-repro":
        real = [console_script(), *argv[1:]]
    elif argv[0] == "nox":
        real = [sys.executable, "-m", "nox", *argv[1:]]
    else:
        real = [sys.executable, *argv[1:]]
    return subprocess.run(real, cwd=cwd, capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("text", RUN_AS_WRITTEN)
def test_a_cheap_command_runs_as_written_on_a_fresh_state(text, tmp_path):
    argv = tuple(shlex.split(text))
    done = run_as_written(argv, REPO if argv[0] == "nox" else tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert not (tmp_path / "results").exists() and not (tmp_path / "reports").exists(), (
        "it wrote nothing"
    )


def matches(shown: tuple[str, ...], output: str) -> bool:
    real = [line for line in output.splitlines() if line.strip() and not line.startswith("nox >")]
    wanted = [line for line in shown if line.strip()]
    if len(real) != len(wanted):
        return False
    pairs = zip(wanted, real, strict=True)
    return all(
        r.startswith(s[: -len(CUT)].rstrip()) if s.endswith(CUT) else r == s for s, r in pairs
    )


CONSOLE = [c for c in DOCUMENTED if c.console]
VENV_CONSOLE = [c for c in CONSOLE if c.argv[:3] == ("nox", "-s", "issue")]


@pytest.mark.parametrize("command", [c for c in CONSOLE if c not in VENV_CONSOLE], ids=str)
def test_a_console_example_prints_what_its_page_shows(command, tmp_path):
    done = run_as_written(command.argv, REPO if command.argv[0] == "nox" else tmp_path)
    assert matches(command.shown, done.stdout + done.stderr), done.stdout + done.stderr
    if refusal(command):
        assert done.returncode == 2


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory) -> Path:
    """A copy of the working tree as a fresh clone has it: tracked and new files, nothing
    ignored."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    )
    clone = tmp_path_factory.mktemp("clone")
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    return clone


@pytest.mark.venv
@pytest.mark.parametrize("command", VENV_CONSOLE, ids=str)
def test_issue_with_nothing_to_draft_about_says_so_in_one_line_on_a_fresh_clone(
    command, fresh_clone
):
    done = run_as_written(command.argv, fresh_clone)
    assert done.returncode == 2, done.stderr
    assert matches(command.shown, done.stdout + done.stderr), done.stdout + done.stderr


@pytest.mark.venv
def test_report_install_only_installs_on_a_fresh_clone(fresh_clone):
    assert "nox -s report --install-only" in {c.text for c in DOCUMENTED}
    done = run_as_written(("nox", "-s", "report", "--install-only"), fresh_clone)
    assert done.returncode == 0, done.stderr
    assert (
        not (fresh_clone / "results").exists()
        and not (fresh_clone / "reports" / "index.md").exists()
    )


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors_of(page: Path) -> set[str]:
    outside = "\n".join(line for _, _, lines in fenced_blocks(page.read_text()) for line in lines)
    text = page.read_text()
    return {anchor(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M) if h not in outside}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_link_of_a_page_reaches_a_file_and_its_heading(page):
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists() or (
            fragment and linked.suffix == ".md" and fragment not in anchors_of(linked)
        ):
            broken.append(target)
    assert not broken, broken
