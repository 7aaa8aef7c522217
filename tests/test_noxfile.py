"""The sessions: posargs checked by the harness before anything is installed, what each installs and
runs."""

import ast
import contextlib
import json
import subprocess
import sys
import time
import types
from pathlib import Path

import packaging
import pytest

import noxfile
from harness import pins
from harness.cli import ranges
from harness.commands import nox_session
from harness.errors import HarnessError, UsageError
from harness.install.environments import Environments, Prepared
from harness.install.index import pair_with_jaxlib, parse_pip_listing
from harness.install.venvs import read_plan
from harness.pins import PROFILE_BY_NAME
from harness.store.schema import Libraries

from .conftest import FIXTURES, REPO, nox_in_repo

LISTINGS = FIXTURES / "bisect"
PACKAGES = ("jax", "jaxlib")
NO_GPU = "nvidia-smi not found on PATH (no NVIDIA driver here)"


def harness_imports_of_the_noxfile() -> list[ast.ImportFrom]:
    tree = ast.parse((REPO / "noxfile.py").read_text())
    return [
        node
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("harness")
    ]


def harness_modules_of_the_noxfile() -> list[str]:
    """The modules the noxfile imports from: ``from harness.cli import sessions`` names
    harness.cli.sessions."""
    named = set()
    for node in harness_imports_of_the_noxfile():
        named.add(str(node.module))
        for alias in node.names:
            module = f"{node.module}.{alias.name}"
            if (REPO / (module.replace(".", "/") + ".py")).is_file():
                named.add(module)
    return sorted(named)


# What importing the noxfile's harness imports may load: the declarations of its sessions and their
# checks' entry points, not the harness behind them (issue 42: 57 modules, which held a third of it
# to the standard library).
MOST_NOXFILE_MODULES = 25


def test_the_noxfile_s_harness_imports_load_few_harness_modules():
    statements = "\n".join(ast.unparse(node) for node in harness_imports_of_the_noxfile())
    script = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
{statements}
print(sorted(m for m in sys.modules if m.split(".")[0] == "harness"))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    loaded = ast.literal_eval(done.stdout.strip())
    assert "harness.cli.sessions" in loaded
    assert len(loaded) <= MOST_NOXFILE_MODULES, loaded


def test_the_noxfile_imports_only_standard_library_harness_modules():
    """nox imports the noxfile in its own environment: no JAX, no hypothesis, no tabulate; packaging
    (nox needs it).

    The harness modules it imports are imported, and every session's check run, in an
    interpreter without site-packages (``-S``, isolated) but for packaging's folder, last on
    the path: an import chain that reaches anything heavy from there shows in ``sys.modules``.
    """
    modules = harness_modules_of_the_noxfile()
    assert {"harness.cli.sessions", "harness.pins"} <= set(modules)
    packaging_folder = str(Path(packaging.__file__).parent.parent)
    script = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
sys.path.append({packaging_folder!r})
for name in {modules!r}:
    __import__(name)
from harness.cli.sessions import session_view
session_view("search", ["scan_sync", "--jax", "0.4.26"])
session_view("issue", ["scan_sync", "--profile", "cpu8"])
session_view("issue", ["scan_sync", "--jax", "0.4.27", "--good", "0.4.31", "--bad", "0.4.33", "--metric", "a.wall_ns"])
from harness.cli.sessions import release_run_view
release_run_view(["scan_sync", "--jax", "0.4.27", "--size", "N=100"])
session_view("bisect", ["async_dispatch", "--metric", "eager.dispatch_ns", "--good", "0.4.26", "--bad", "0.4.35"])
session_view("sweep", ["scan_sync", "--from", "0.4.26", "--to", "0.5.3", "--size", "N=100"])
session_view("triage", ["scan_sync", "--claim"])
session_view("run", ["--profile", "cpu", "--case", "scan_sync", "--size", "N=100"])
session_view("report", ["--results", "tests/fixtures/results"])
session_view("compare", ["tests/fixtures/results", "--a-release", "0.4.26"])
from harness.cli.sessions import watch_view
watch_view(["--case", "scan_sync", "--baseline", "0.4.31"])
watch_view(["--scripts", "benchmarks/regressions"])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("jax", "hypothesis", "tabulate", "numpy", "matplotlib"))
print(heavy)
"""  # noqa: E501
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_session_listing_matches_the_tables():
    listed = subprocess.run(
        [
            sys.executable,
            "-m",
            "nox",
            "-l",
            "--json",
            "-k",
            "repro or report or tests or lint or issue",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    sessions = json.loads(listed.stdout)
    repro = {s["session"] for s in sessions if s["name"] == "repro"}
    assert repro == {f"repro({noxfile.session_id(r, p)})" for r, p in pins.MATRIX}
    for listed in (s for s in sessions if s["name"] == "repro"):
        kind = PROFILE_BY_NAME[listed["call_spec"]["profile"]].kind
        assert kind in listed["tags"], "the profile's kind is a tag: CI picks the runner by it"
    assert {"report", "tests", "lint", "issue"} <= {s["name"] for s in sessions}
    assert noxfile.nox.options.sessions == ["matrix", "report"], (
        "plain nox compares releases, then reports"
    )


@pytest.mark.parametrize(
    ("posargs", "message"),
    [
        (["--case", "nope"], "unknown case nope"),
        (["--size", "N=x"], "malformed size"),
        (["--budget", "gpu=1"], "malformed budget"),
        (["--repeats", "none"], "is not a whole number"),
        (["--frobnicate"], "unrecognized arguments"),
    ],
)
def test_repro_posargs_are_checked_before_anything_is_installed(posargs, message, capsys):
    session = RecordingSession(*posargs)
    with pytest.raises(SystemExit) as stopped:
        noxfile.repro(session, jax="0.4.26", profile="cpu")
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("harness: error:") and message in err
    assert session.installed == [] and session.ran == []


@pytest.mark.parametrize(
    ("posargs", "message"),
    [
        (["scan_sync", "--jax", "9.9"], "unknown release 9.9"),
        (["scan_sync", "--profile", "tpu9"], "unknown profile tpu9"),
        (["scan_sync", "--jax", "0.4.26", "--profile", "cpu-classic"], "does not apply"),
        (["nope"], "unknown case nope"),
    ],
)
def test_nox_search_answers_bad_posargs_with_one_line_and_exit_2(posargs, message):
    done = nox_in_repo("-s", "search", "--", *posargs)
    assert done.returncode == 2
    ours = [line for line in done.stderr.splitlines() if not line.startswith("nox >")]
    assert len(ours) == 1 and message in ours[0], done.stderr


class RecordingSession:
    """Stands in for nox.Session: records what a session function installs and runs."""

    def __init__(self, *posargs: str) -> None:
        self.posargs = list(posargs)
        self.virtualenv = types.SimpleNamespace(location=None)
        self.installed: list[tuple[str, ...]] = []
        self.folders: list[str] = []
        self.ran: list[tuple[tuple[str, ...], dict[str, str] | None]] = []
        # in nox's install step, beside the harness's prepare
        self.ran_installing: list[tuple[str, ...]] = []

    invoked_from = "/the/user's/folder"

    def chdir(self, folder: str | Path) -> contextlib.nullcontext:
        """nox's: the session works in ``folder`` (recorded), back where it was after a ``with``
        block."""
        self.folders.append(str(folder))
        return contextlib.nullcontext()

    def install(self, *args: str) -> None:
        self.installed.append(args)

    def run_install(
        self, *args: str, env: dict[str, str] | None = None, success_codes: list[int] | None = None
    ) -> None:
        if self.entry(args) is None:
            self.ran_installing.append(args)

    def run(self, *args: str, env: dict[str, str] | None = None, external: bool = False) -> None:
        """A harness command; the harness's end of a session (``harness.commands.nox_session``) run
        here, the command it launches recorded."""
        launched = self.entry(args)
        if launched is not None:
            args = tuple(launched.command())
            if not launched.python:
                args = ("python", *args[1:])
        self.ran.append((args, env))

    def entry(self, args: tuple[str, ...]) -> nox_session.Launch | None:
        if args[:3] != ("python", "-m", "harness.commands.nox_session"):
            return None
        mode, session, venvs, cache, *rest = args[3:]
        jax = rest.pop(0) if rest[0] != "--" else ""
        places = nox_session.Places(Path(venvs), Path(cache))
        try:
            launched = nox_session.launched(mode, session, rest[1:], places, jax, self.log)
        except HarnessError as exc:
            print(f"harness: error: {exc}", file=sys.stderr)
            raise noxfile.CommandFailed(str(exc), return_code=exc.exit_code) from None
        return launched if mode == "launch" else None

    def error(self, message: str) -> None:
        raise SystemExit(message)

    def log(self, message: str) -> None:
        self.logged = [*getattr(self, "logged", []), message]

    def skip(self, reason: str) -> None:
        raise Skipped(reason)


class Skipped(Exception):
    pass


def test_a_gpu_session_without_a_gpu_is_skipped_before_installing(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    session = RecordingSession("--case", "scan_sync")
    with pytest.raises(
        Skipped, match=r"^profile cuda12 needs an NVIDIA GPU: nvidia-smi not found on PATH"
    ):
        noxfile.repro(session, jax="0.12.0.1", profile="cuda12")
    assert session.installed == [] and session.ran == []
    issue = RecordingSession("scan_sync", "--profile", "cuda13")
    with pytest.raises(Skipped, match="profile cuda13 needs an NVIDIA GPU"):
        noxfile.issue(issue)


def test_a_gpu_session_with_a_gpu_installs_the_cuda_build_and_sets_the_flags(monkeypatch):
    monkeypatch.setattr(noxfile.gpu, "absence_reason", lambda: None)  # what a GPU machine answers
    session = RecordingSession("--case", "scan_sync")
    noxfile.repro(session, jax="0.12.0.1", profile="cuda12")
    assert session.installed == [("-e", ".", "jax[cuda12]==0.12.0.1")]
    [(args, env)] = session.ran
    assert args == ("python", "-m", "harness", "run", "--profile", "cuda12", "--case", "scan_sync")
    assert env == PROFILE_BY_NAME["cuda12"].env


def test_a_tpu_session_is_skipped_without_a_chip_and_installs_jax_tpu_with_one(
    monkeypatch, tmp_path
):
    monkeypatch.setattr(noxfile.tpu, "PCI", tmp_path)  # a PCI bus with no TPU chip
    monkeypatch.setattr(noxfile.tpu, "DEV", tmp_path)  # and no TPU device files
    session = RecordingSession("--case", "scan_sync")
    with pytest.raises(Skipped, match=r"^profile tpu needs a TPU: no TPU chip among the PCI"):
        noxfile.repro(session, jax="0.12.0.1", profile="tpu")
    assert session.installed == [] and session.ran == []
    monkeypatch.setattr(noxfile.tpu, "absence_reason", lambda: None)  # what a TPU VM answers
    noxfile.repro(session, jax="0.12.0.1", profile="tpu")
    assert session.installed == [("-e", ".", "jax[tpu]==0.12.0.1")]
    [(args, env)] = session.ran
    assert args == ("python", "-m", "harness", "run", "--profile", "tpu", "--case", "scan_sync")
    assert env == PROFILE_BY_NAME["tpu"].env


def test_install_once_skips_a_venv_that_already_holds_the_requirements(tmp_path):
    session = RecordingSession()
    session.virtualenv = types.SimpleNamespace(location=str(tmp_path))
    session.log = lambda message: None
    noxfile.install_once(session, "-e", ".", "jax==0.4.26")
    noxfile.install_once(session, "-e", ".", "jax==0.4.26")
    assert session.installed == [("-e", ".", "jax==0.4.26")]
    noxfile.install_once(session, "-e", ".", "jax==0.4.30")
    assert session.installed[-1] == ("-e", ".", "jax==0.4.30"), "other pins reinstall"
    assert session.ran_installing == [], "bytecode only where asked"


def test_install_once_skipped_by_nox_s_no_install_leaves_no_marker(tmp_path):
    # `nox -R` on a venv made by a run refused before installing: nox skips the install, so the
    # next plain run must install rather than read "already installed".
    session = RecordingSession()
    session.virtualenv = types.SimpleNamespace(location=str(tmp_path), _reused=True)
    session._runner = types.SimpleNamespace(global_config=types.SimpleNamespace(no_install=True))
    session.log = lambda message: None
    noxfile.install_once(session, "-e", ".", "jax==0.4.26")
    assert not (tmp_path / ".harness-installed").exists()
    session._runner.global_config.no_install = False
    noxfile.install_once(session, "-e", ".", "jax==0.4.26")
    assert (tmp_path / ".harness-installed").exists()


def test_install_once_compiles_the_venv_where_asked_and_a_venv_installed_uncompiled_is_compiled(
    tmp_path,
):
    session = RecordingSession()
    session.virtualenv = types.SimpleNamespace(location=str(tmp_path))
    session.log = lambda message: None
    compileall = ("python", "-m", "compileall", "-q", "-j", "0", str(tmp_path / "lib"))
    noxfile.install_once(session, "-e", ".", "jax==0.4.26")
    noxfile.install_once(session, "-e", ".", "jax==0.4.26", compiled=True)
    assert session.installed == [("-e", ".", "jax==0.4.26")] * 2 and session.ran_installing == [
        compileall
    ]
    noxfile.install_once(session, "-e", ".", "jax==0.4.26", compiled=True)
    assert len(session.installed) == 2 and session.ran_installing == [compileall], "compiled once"


@pytest.mark.parametrize(
    ("session", "posargs", "message"),
    [
        ("bisect", ["nope", "--good", "0.4.26", "--bad", "0.4.35", "--claim"], "unknown case nope"),
        (
            "bisect",
            ["scan_sync", "--good", "0.4.26", "--bad", "0.4.26", "--claim"],
            "the same release",
        ),
        (
            "bisect",
            ["scan_sync", "--good", "0.4.26", "--bad", "0.4.35", "--metric", "two_scans"],
            "malformed metric",
        ),
        (
            "bisect",
            ["scan_sync", "--claim", "--good", "1", "--bad", "2", "--profile", "tpu9"],
            "unknown profile",
        ),
        (
            "sweep",
            ["scan_sync", "--from", "0.4.35", "--to", "0.4.26"],
            "from an older release to a newer one",
        ),
        ("triage", ["scan_sync", "--from", "0.13"], "from an older release to a newer one"),
        (
            "bisect",
            ["scan_sync", "--claim", "--good", "0.4.26", "--fixed", "0.4.35"],
            "give one pair",
        ),
    ],
)
def test_nox_bisect_and_sweep_answer_bad_posargs_before_installing(session, posargs, message):
    done = nox_in_repo("-s", session, "--", *posargs)
    assert done.returncode == 2
    ours = [line for line in done.stderr.splitlines() if not line.startswith("nox >")]
    assert len(ours) == 1 and message in ours[0], done.stderr


class RangeSession(RecordingSession):
    """A recording session with a venv folder and a cache holding a fresh listing of the index."""

    def __init__(self, tmp_path, *posargs: str) -> None:
        super().__init__(*posargs)
        self.bin = str(tmp_path / "bisect" / "bin")
        self.cache_dir = str(tmp_path / ".cache")
        pairs = pair_with_jaxlib(
            *(parse_pip_listing((LISTINGS / f"pip-index-{p}.txt").read_text()) for p in PACKAGES)
        )
        listing = {"python": nox_session.session_python(), "pairs": pairs, "listed_at": time.time()}
        Path(self.cache_dir).mkdir(exist_ok=True)
        (Path(self.cache_dir) / "jax-index.json").write_text(json.dumps(listing))


def planned(tmp_path, command: str) -> Path:
    """The release plan a session wrote for ``command``: one file, named by its content."""
    [plan] = (tmp_path / ".cache").glob(f"{command}-releases-*.json")
    return plan


def test_bisect_session_plans_every_release_of_the_range_from_the_index(tmp_path):
    session = RangeSession(
        tmp_path, "async_dispatch", "--claim", "--good", "0.4.35", "--bad", "0.5.3"
    )
    noxfile.bisect(session)
    assert session.installed == [("-e", ".[report]", "pip")]
    [(args, env)] = session.ran
    plan = planned(tmp_path, "bisect")
    assert args == (
        "python",
        "-m",
        "harness",
        "bisect",
        "async_dispatch",
        "--claim",
        "--good",
        "0.4.35",
        "--bad",
        "0.5.3",
        "--profile",
        "cpu",
        "--releases",
        str(plan),
    )
    assert env == PROFILE_BY_NAME["cpu"].env
    envs = read_plan(plan)
    assert [(e.jax, e.jaxlib) for e in envs] == [
        ("0.4.35", "0.4.35"),
        ("0.4.36", "0.4.36"),
        ("0.4.37", "0.4.36"),
        ("0.4.38", "0.4.38"),
        ("0.5.0", "0.5.0"),
        ("0.5.1", "0.5.1"),
        ("0.5.2", "0.5.1"),
        ("0.5.3", "0.5.3"),
    ]
    assert envs[2].install == ("-e", ".", "jax==0.4.37", "jaxlib==0.4.36")
    assert envs[2].venv == tmp_path / "release-jax-0.4.37", "beside nox's own venvs"
    assert envs[2].python == nox_session.interpreter("3.12")


def test_triage_session_plans_every_release_on_the_index_between_the_tables_ends_by_default(
    tmp_path,
):
    session = RangeSession(tmp_path, "scan_sync", "--claim", "--processes", "3")
    noxfile.triage(session)
    assert session.installed == [("-e", ".[report]", "pip")], (
        "the releases install into venvs of their own"
    )
    [(args, env)] = session.ran
    plan = planned(tmp_path, "triage")
    assert args == (
        "python",
        "-m",
        "harness",
        "triage",
        "scan_sync",
        "--claim",
        "--processes",
        "3",
        "--profile",
        "cpu",
        "--releases",
        str(plan),
    )
    assert env == PROFILE_BY_NAME["cpu"].env
    envs = read_plan(plan)
    assert (envs[0].jax, envs[-1].jax) == (pins.RELEASES[0].jax, pins.RELEASES[-1].jax)
    listed = [e.jax for e in envs]
    assert {"0.4.27", "0.4.34", "0.4.37", "0.12.0"} <= set(listed), (
        "releases between the table's too"
    )
    assert "0.4.32" not in listed, "yanked"
    assert envs[1].venv == tmp_path / "release-jax-0.4.27", (
        "the same cached venvs as bisect and sweep"
    )


def test_two_sessions_of_one_name_with_other_ranges_keep_their_own_plans(tmp_path):
    """Issue 57 #9: two triages at once shared ``.nox/.cache/triage-releases.json``; the second's
    plan replaced the first's before its harness read it, which then refused it as bad input ("does
    not run from ...")."""
    first = RangeSession(tmp_path, "async_dispatch", "--from", "0.4.31", "--to", "0.4.34")
    noxfile.triage(first)
    [(args, _)] = first.ran
    plan = Path(args[args.index("--releases") + 1])
    second = RangeSession(tmp_path, "async_dispatch", "--from", "0.4.26", "--to", "0.4.30")
    noxfile.triage(second)
    [(again, _)] = second.ran
    assert [e.jax for e in read_plan(plan)] == ["0.4.31", "0.4.33", "0.4.34"], "the first's, still"
    other = Path(again[again.index("--releases") + 1])
    assert [e.jax for e in read_plan(other)][::4] == ["0.4.26", "0.4.30"]


def test_a_triage_of_a_range_plans_that_range(tmp_path):
    session = RangeSession(tmp_path, "async_dispatch", "--from", "0.4.31", "--to", "0.4.34")
    noxfile.triage(session)
    envs = read_plan(planned(tmp_path, "triage"))
    assert [e.jax for e in envs] == ["0.4.31", "0.4.33", "0.4.34"]


def test_a_range_end_not_on_the_index_is_refused_after_listing(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        noxfile.sweep(
            RangeSession(tmp_path, "async_dispatch", "--from", "0.4.31", "--to", "0.4.32")
        )
    assert stopped.value.code == 2
    assert (
        "jax 0.4.32 is not an installable release on the package index" in capsys.readouterr().err
    )


def test_a_range_over_the_bound_is_refused_after_listing_before_anything_is_installed(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setitem(ranges.MOST_RELEASES, "sweep", 2)
    session = RangeSession(tmp_path, "async_dispatch", "--from", "0.4.31", "--to", "0.4.34")
    with pytest.raises(SystemExit) as stopped:
        noxfile.sweep(session)
    assert stopped.value.code == 2 and session.ran == [], (
        "no release installed, the harness never run"
    )
    err = capsys.readouterr().err
    assert err.strip() == (
        "harness: error: jax 0.4.31–0.4.34 is 3 releases; a sweep measures each of them and takes "
        "at most 2: give a narrower --from/--to"
    )


def test_watch_session_plans_the_newest_release_on_the_index_and_the_one_before(tmp_path):
    session = RangeSession(tmp_path, "--case", "async_dispatch", "--processes", "3")
    noxfile.watch(session)
    assert session.installed == [("-e", ".[report]", "pip")], (
        "the releases install into venvs of their own"
    )
    [(args, env)] = session.ran
    plan = planned(tmp_path, "watch")
    assert args == (
        "python",
        "-m",
        "harness",
        "watch",
        "--case",
        "async_dispatch",
        "--processes",
        "3",
        "--profile",
        "cpu",
        "--baseline",
        "0.12.0",
        "--release",
        "0.12.0.1",
        "--releases",
        str(plan),
    )
    assert env == PROFILE_BY_NAME["cpu"].env
    assert [e.jax for e in read_plan(plan)] == ["0.12.0", "0.12.0.1"]


def test_a_watch_with_a_baseline_plans_that_pair(tmp_path):
    session = RangeSession(tmp_path, "--case", "async_dispatch", "--baseline", "0.4.31")
    noxfile.watch(session)
    pair = [e.jax for e in read_plan(planned(tmp_path, "watch"))]
    assert pair == ["0.4.31", "0.12.0.1"], "the newest against the baseline named, nothing between"
    [(args, _)] = session.ran
    assert args.count("--baseline") == 1 and "--release" in args


@pytest.mark.parametrize("status", [1, 3])
def test_the_watch_s_exit_status_is_nox_s(status, tmp_path):
    """1 (a regression) and 3 (something open) are the watch's answer, which CI reads from nox: not
    nox's 1."""

    class Answering(RangeSession):
        def run(self, *args, env=None, external=False):
            if args[3] == "launch":
                raise noxfile.CommandFailed("watch", return_code=status)

    with pytest.raises(SystemExit) as stopped:
        noxfile.watch(Answering(tmp_path, "--case", "async_dispatch"))
    assert stopped.value.code == status


@pytest.mark.parametrize(
    ("posargs", "message"),
    [
        (["--scripts", "no-such-folder"], "--scripts no-such-folder: no such folder"),
        (["--baseline", "0.4.33", "--release", "0.4.31"], "must be older than --release"),
        (["--profile", "tpu9"], "unknown profile tpu9"),
        (["--case", "nope"], "unknown case nope"),
    ],
)
def test_watch_session_answers_bad_posargs_with_one_line_before_installing(
    posargs, message, tmp_path, capsys
):
    session = RangeSession(tmp_path, *posargs)
    with pytest.raises(SystemExit) as stopped:
        noxfile.watch(session)
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("harness: error:") and message in err
    assert session.installed == [] and session.ran == []


def test_a_watched_release_the_index_does_not_offer_is_refused_after_listing(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        noxfile.watch(RangeSession(tmp_path, "--case", "async_dispatch", "--release", "0.4.32"))
    assert stopped.value.code == 2
    assert (
        "jax 0.4.32 is not an installable release on the package index" in capsys.readouterr().err
    )
    assert not list((tmp_path / ".cache").glob("watch-releases*.json"))


@pytest.mark.parametrize(
    ("session", "posargs"),
    [
        (
            "bisect",
            [
                "async_dispatch",
                "--metric",
                "eager.dispatch_ns",
                "--good",
                "0.4.26",
                "--bad",
                "0.4.35",
            ],
        ),
        ("sweep", ["scan_sync", "--from", "0.4.35", "--to", "0.5.3"]),
        ("triage", ["scan_sync", "--from", "0.4.35", "--to", "0.5.3"]),
        ("search", ["scan_sync", "--jax", "0.4.35"]),
    ],
)
def test_a_gpu_profile_without_a_gpu_is_skipped_before_anything_is_installed(
    session, posargs, monkeypatch, tmp_path
):
    """As ``repro`` does: the session is skipped with the reason; no venv is made, nothing installed
    or run."""
    monkeypatch.setattr(noxfile.gpu, "absence_reason", lambda: NO_GPU)
    recording = RangeSession(tmp_path, *posargs, "--profile", "cuda12")
    with pytest.raises(Skipped) as skipped:
        getattr(noxfile, session)(recording)
    assert str(skipped.value) == f"profile cuda12 needs an NVIDIA GPU: {NO_GPU}"
    assert recording.installed == [] and recording.ran == []
    assert sorted(path.name for path in tmp_path.iterdir()) == [".cache"], (
        "no release venv, no plan"
    )
    assert [path.name for path in (tmp_path / ".cache").iterdir()] == ["jax-index.json"]


def test_a_range_under_a_gpu_profile_installs_the_cuda_build_into_venvs_of_its_own(
    monkeypatch, tmp_path
):
    monkeypatch.setattr(noxfile.gpu, "absence_reason", lambda: None)  # what a GPU machine answers
    session = RangeSession(
        tmp_path, "async_dispatch", "--claim", "--good", "0.4.35", "--bad", "0.5.3"
    )
    session.posargs += ["--profile", "cuda12"]
    noxfile.bisect(session)
    [(args, env)] = session.ran
    assert args[-4:-2] == ("--profile", "cuda12") and env == PROFILE_BY_NAME["cuda12"].env
    envs = read_plan(planned(tmp_path, "bisect"))
    assert envs[2].venv == tmp_path / "release-jax-0.4.37-cuda12", "apart from the CPU build's venv"
    assert envs[2].install == ("-e", ".", "jax[cuda12]==0.4.37"), (
        "the extra picks jaxlib and the CUDA plugin"
    )
    assert envs[2].jaxlib == "pinned by jax[cuda12]"
    assert session.installed == [("-e", ".[report]", "pip")], (
        "the session's own venv only lists the index"
    )


def test_cpu_profiles_share_one_venv_per_release(tmp_path):
    session = RangeSession(
        tmp_path, "scan_sync", "--from", "0.4.35", "--to", "0.4.36", "--profile", "cpu8"
    )
    noxfile.sweep(session)
    [(args, env)] = session.ran
    assert args[-4:] == (
        "--profile",
        "cpu8",
        "--releases",
        str(planned(tmp_path, "sweep")),
    )
    assert env == PROFILE_BY_NAME["cpu8"].env
    envs = read_plan(planned(tmp_path, "sweep"))
    assert [e.venv.name for e in envs] == ["release-jax-0.4.35", "release-jax-0.4.36"]
    assert envs[0].install == ("-e", ".", "jax==0.4.35", "jaxlib==0.4.35")


@pytest.mark.parametrize(
    ("session", "posargs", "message"),
    [
        ("report", ["--results", "/nonexistent"], "results folder not found: /nonexistent"),
        ("report", ["--factor", "0.5"], "must be above 1"),
        ("compare", [], "required: A"),
        (
            "compare",
            ["/nonexistent", "--a-release", "0.4.26"],
            "results folder not found: /nonexistent",
        ),
        (
            "compare",
            [str(FIXTURES / "results"), "/nonexistent"],
            "results folder not found: /nonexistent",
        ),
    ],
)
def test_report_and_compare_check_posargs_before_installing(session, posargs, message, capsys):
    recording = RecordingSession(*posargs)
    with pytest.raises(SystemExit) as stopped:
        getattr(noxfile, session)(recording)
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("harness: error:") and message in err
    assert recording.installed == [] and recording.ran == []


def test_nox_compare_answers_bad_posargs_with_one_line_and_exit_2():
    done = nox_in_repo("-s", "compare", "--", "/nonexistent")
    assert done.returncode == 2, done.stderr
    ours = [line for line in done.stderr.splitlines() if not line.startswith("nox >")]
    assert ours == ["harness: error: results folder not found: /nonexistent"], done.stderr
    assert "install" not in done.stderr


class FailingSession(RecordingSession):
    """A session whose harness run exits with ``code``."""

    def __init__(self, code: int, *posargs: str) -> None:
        super().__init__(*posargs)
        self.code = code

    def run(self, *args: str, env: dict[str, str] | None = None) -> None:
        raise noxfile.CommandFailed(f"Returned code {self.code}", return_code=self.code)

    run_install = run


def test_bad_input_found_by_the_harness_after_installing_keeps_exit_code_2():
    with pytest.raises(SystemExit) as stopped:
        noxfile.compare(FailingSession(2, str(FIXTURES / "results"), "--a-release", "9.9"))
    assert stopped.value.code == 2
    with pytest.raises(noxfile.CommandFailed):  # B got worse: the session fails, as nox reports it
        noxfile.compare(FailingSession(1, str(FIXTURES / "results"), "--a-release", "0.4.26"))


def test_plain_nox_measures_the_oldest_and_newest_release_on_cpu_and_cpu8_then_reports(
    monkeypatch, tmp_path
):
    """What the README's main command runs: the matrix session with no posargs, seven processes a
    side, once, each case only where its claim is (``claims_only``)."""
    # The release venvs: built by the real session.
    monkeypatch.setattr(nox_session, "ensure", lambda env: None)
    session = RecordingSession()
    session.cache_dir = str(tmp_path / ".cache")
    session.log = lambda message: None
    noxfile.matrix(session)
    assert session.installed == [("-e", ".")]
    [(args, env)] = session.ran
    plan = tmp_path / ".cache" / "matrix-sides.json"
    run = (
        "run",
        "--processes",
        "7",
        "--max-seconds",
        "0.25",
        "--warmup",
        "1",
        "--decide",
        "off",
        "--sides",
        str(plan),
    )
    assert args == ("python", "-m", "harness", *run)
    assert env is None
    written = json.loads(plan.read_text())
    sides = [(side["release"], side["profile"]) for side in written]
    assert sides == [(r.jax, p) for r in pins.EDGES for p in ("cpu", "cpu8")]
    assert all(side["claims_only"] for side in written), (
        "each case only under the profiles its claim is about"
    )


def test_ci_runs_the_readme_main_command_with_options_both_default_sessions_take():
    """`.ci/run` runs plain nox (the default sessions); its posargs reach matrix and report, so both
    must take them."""
    [line] = [
        line
        for line in (REPO / ".ci" / "run").read_text().splitlines()
        if line.startswith("nox --")
    ]
    posargs = (
        line.split(" -- ", 1)[1]
        .replace('"${TMPDIR:-/tmp}/ci-results-$$"', str(FIXTURES / "results"))
        .split()
    )
    assert "-s" not in line.split(" -- ")[0] and "-t" not in line.split(" -- ")[0]
    from harness.cli.sessions import interleaved_request

    interleaved_request(posargs)
    noxfile.checked(RecordingSession(*posargs), "report", posargs)
    assert "```sh\npython3 -m pip install nox uv && nox\n```" in (REPO / "README.md").read_text()


def test_issue_session_takes_any_release_on_the_index_and_plans_every_one(tmp_path):
    session = RangeSession(
        tmp_path,
        "scan_sync",
        "--jax",
        "0.4.37",
        "--good",
        "0.4.35",
        "--bad",
        "0.4.36",
        "--profile=cpu8",
    )
    noxfile.issue(session)
    assert session.installed == [("-e", ".[report]", "pip")], (
        "the session's venv holds the harness, never JAX"
    )
    [(args, env)] = session.ran
    plan = planned(tmp_path, "issue")
    assert args == (
        "python",
        "-m",
        "harness",
        "issue",
        "scan_sync",
        "--jax",
        "0.4.37",
        "--good",
        "0.4.35",
        "--bad",
        "0.4.36",
        "--profile=cpu8",
        "--releases",
        str(plan),
    )
    assert env == PROFILE_BY_NAME["cpu8"].env
    envs = {e.jax: e for e in read_plan(plan)}
    assert envs["0.4.37"].install == ("-e", ".", "jax==0.4.37", "jaxlib==0.4.36"), (
        "not in the table: the index's pair"
    )
    assert envs["0.4.37"].venv == tmp_path / "release-jax-0.4.37", "the venv bisect and sweep use"
    default = RangeSession(tmp_path, "scan_sync")
    noxfile.issue(default)
    assert default.ran[0][0][-4:-2] == ("--profile", "cpu")


def test_issue_session_refuses_a_release_the_index_does_not_offer(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        noxfile.issue(RangeSession(tmp_path, "scan_sync", "--jax", "0.4.32"))
    assert stopped.value.code == 2
    assert (
        "jax 0.4.32 is not an installable release on the package index" in capsys.readouterr().err
    )


def test_run_session_installs_any_index_release_into_its_cached_venv_and_runs_the_case_there(
    tmp_path, monkeypatch
):
    ensured = []
    monkeypatch.setattr(nox_session, "ensure", lambda env: ensured.append(env))
    session = RangeSession(
        tmp_path, "scan_sync", "--jax", "0.4.37", "--size", "N=100", "--profile", "cpu8"
    )
    noxfile.run_one(session)
    [env] = ensured
    assert (env.venv, env.install) == (
        tmp_path / "release-jax-0.4.37",
        ("-e", ".", "jax==0.4.37", "jaxlib==0.4.36"),
    )
    [(args, variables)] = session.ran
    assert args == (
        str(env.interpreter),
        "-m",
        "harness",
        "run",
        "--case",
        "scan_sync",
        "--size",
        "N=100",
        "--profile",
        "cpu8",
    )
    assert variables == PROFILE_BY_NAME["cpu8"].env


def test_run_session_runs_the_whole_catalogue_on_any_index_release(tmp_path, monkeypatch):
    monkeypatch.setattr(nox_session, "ensure", lambda env: None)
    session = RangeSession(tmp_path, "--jax", "0.4.37")
    noxfile.run_one(session)
    [(args, _)] = session.ran
    assert args[3:] == ("run", "--profile", "cpu") and args[0].endswith(
        "release-jax-0.4.37/bin/python"
    )


def test_bad_input_found_while_making_a_script_s_venv_exits_2_and_a_failure_fails_the_session(
    tmp_path, monkeypatch, capsys
):
    """Issue 45's #17: bad input on nox's run path (a script's venv refused for what it declares)
    exited 1, as a failed session; it is one line and exit 2, while what could not be done is still
    a failed session."""
    script = tmp_path / "repro.py"
    script.write_text("print('hello')\n")

    def refuses(environments, label, env):
        raise UsageError("the script's requires-python ==3.12.1 names a patch release")

    monkeypatch.setattr(Environments, "prepare", refuses)
    session = RangeSession(tmp_path, "--script", str(script), "--jax", "0.4.37")
    with pytest.raises(SystemExit) as stopped:
        noxfile.run_one(session)
    assert stopped.value.code == 2 and session.ran == []
    assert capsys.readouterr().err.strip() == (
        "harness: error: the script's requires-python ==3.12.1 names a patch release"
    )

    def fails(environments, label, env):
        raise HarnessError("uv could not be started")

    monkeypatch.setattr(Environments, "prepare", fails)
    with pytest.raises(noxfile.CommandFailed):  # the harness's exit 1: nox's failed session
        noxfile.run_one(RangeSession(tmp_path, "--script", str(script), "--jax", "0.4.37"))
    assert capsys.readouterr().err.strip() == "harness: error: uv could not be started"


def test_run_session_runs_a_plain_script_in_a_venv_of_its_own_a_side_its_harness_drives(
    tmp_path, monkeypatch
):
    script = tmp_path / "repro.py"
    script.write_text("# /// script\n# dependencies = ['equinox']\n# ///\nprint('hello')\n")
    asked = []
    libraries = Libraries(
        "newest", ("equinox==0.13.8", "jax==0.4.37"), "ab" * 32, None, ("equinox",)
    )

    def prepare(environments, label, env):
        asked.append((label, environments.policy, environments.case.subject.requirements))
        return Prepared(tmp_path / "script-env" / "bin" / "python", libraries)

    monkeypatch.setattr(Environments, "prepare", prepare)
    session = RangeSession(
        tmp_path, "--script", str(script), "--jax", "0.4.37", "--deps", "newest", "--profile", "cpu"
    )
    noxfile.run_one(session)
    assert asked == [("0.4.37", "newest", ("equinox",))]
    [(args, _)] = session.ran
    plan = Path(session.cache_dir) / "run-script-sides.json"
    assert args == (
        "python",
        "-m",
        "harness",
        "run",
        "--script",
        str(script),
        "--deps",
        "newest",
        "--sides",
        str(plan),
    )
    [side] = json.loads(plan.read_text())
    assert (
        side["interpreter"] == str(tmp_path / "script-env" / "bin" / "python")
        and side["profile"] == "cpu"
    )
    assert side["libraries"]["installed"] == ["equinox==0.13.8", "jax==0.4.37"], (
        "its results record what it held"
    )


@pytest.mark.parametrize(
    ("posargs", "message"),
    [
        (["--case", "scan_sync", "--script", "x.py"], "not both"),
        (
            ["scan_sync", "--jax", "0.4.32"],
            "jax 0.4.32 is not an installable release on the package index",
        ),
        (["scan_sync", "--jax", "latest"], "is not a jax release number"),
        (["scan_sync", "--jax"], "--jax needs a value"),
        (["nope", "--jax", "0.4.37"], "nope"),
        (["scan_sync", "--sides", "x.json"], "--sides is for `nox -s matrix`"),
    ],
)
def test_run_session_refuses_bad_posargs_with_one_line_and_exit_2(
    tmp_path, capsys, posargs, message
):
    session = RangeSession(tmp_path, *posargs)
    with pytest.raises(SystemExit) as stopped:
        noxfile.run_one(session)
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err
    assert session.ran == [] and not (tmp_path / "release-jax-0.4.37").exists()


@pytest.mark.parametrize(
    ("session_name", "shown"),
    [
        ("repro", "usage: jax-repro run"),
        ("matrix", "nox -s matrix -- [--jax edges|all|V,V,...]"),
        ("run_one", "nox -s run -- [--case CASE | --script FILE]"),
        ("flags", "nox -s flags -- [--case CASE | --script FILE]"),
        ("search", "usage: jax-repro search"),
        ("issue", "usage: jax-repro issue"),
        ("bisect", "usage: jax-repro bisect"),
        ("sweep", "usage: jax-repro sweep"),
        ("triage", "usage: jax-repro triage"),
        ("report", "usage: jax-repro report"),
        ("compare", "usage: jax-repro compare"),
        ("watch", "usage: jax-repro watch"),
    ],
)
def test_every_session_answers_help_before_installing_anything(
    session_name, shown, tmp_path, capsys
):
    session = RangeSession(tmp_path, "--help")
    with pytest.raises(SystemExit) as stopped:
        if session_name == "repro":
            noxfile.repro(session, jax="0.4.26", profile="cpu")
        else:
            getattr(noxfile, session_name)(session)
    assert stopped.value.code == 0
    out = capsys.readouterr().out
    assert shown in out and "exit status:" in out
    assert session.installed == [] and session.ran == []


@pytest.mark.parametrize(("name", "posargs"), [("report", ["--results", "none"]), ("compare", [])])
def test_install_only_installs_a_rendering_session_without_results(
    name, posargs, tmp_path, monkeypatch
):
    """`nox -s report --install-only` on a fresh clone: nothing is rendered, so no results folder is
    needed (and `compare`, which needs two result sets, needs none either)."""
    session = RecordingSession(*[str(tmp_path / a) if a == "none" else a for a in posargs])
    monkeypatch.setattr(sys, "argv", ["nox", "-s", name, "--install-only", "--", *session.posargs])
    getattr(noxfile, name)(session)
    assert session.installed == [("-e", ".[report]")] and session.ran == []


def test_a_session_driven_by_the_installed_command_works_in_the_user_s_folder(monkeypatch):
    """``jax-repro`` drives the sessions of its project copy (harness.commands.packaged_sessions):
    the posargs' paths, ./results and ./reports are the user's; the harness itself installs from the
    copy."""
    monkeypatch.delenv(pins.DRIVEN, raising=False)
    session = RecordingSession()
    noxfile.in_users_folder(session)
    noxfile.install_once(session, "-e", ".")
    assert session.folders == [str(noxfile.HERE)]  # a clone's session works in the clone
    monkeypatch.setenv(pins.DRIVEN, "1")
    session = RecordingSession()
    noxfile.in_users_folder(session)
    noxfile.install_once(session, "-e", ".")
    assert session.folders == [RecordingSession.invoked_from, str(noxfile.HERE)]
