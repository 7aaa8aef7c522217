"""The release and profile tables: the only place versions and flags are listed."""

import json
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

import noxfile
from harness.releases.index import pair_with_jaxlib, parse_pip_listing
from harness.releases.venvs import read_plan
from noxfile import PROFILE_BY_NAME, RELEASES, Release, version_key

from .conftest import FIXTURES, REPO

LISTINGS = FIXTURES / "bisect"
PACKAGES = ("jax", "jaxlib")


def test_releases_are_unique_ordered_and_cover_the_discussion_release():
    versions = [r.jax for r in RELEASES]
    assert versions == sorted(versions, key=version_key)
    assert len(set(versions)) == len(versions)
    assert versions[0] == "0.4.26"
    assert "0.4.32" not in versions, "0.4.32 is yanked"


def test_requirements_pin_exactly():
    assert Release("0.4.37", "0.4.36", pins=("numpy<2",)).requirements() == [
        "jax==0.4.37",
        "jaxlib==0.4.36",
        "numpy<2",
    ]


def test_a_gpu_profile_installs_the_cuda_build_of_the_release():
    release = noxfile.RELEASE_BY_VERSION["0.4.35"]
    assert release.requirements(PROFILE_BY_NAME["cpu"]) == ["jax==0.4.35", "jaxlib==0.4.35"]
    # jax[cuda12]==0.4.35 pins jaxlib 0.4.34 itself: a jaxlib pin of ours would make it unresolvable.
    assert release.requirements(PROFILE_BY_NAME["cuda12"]) == ["jax[cuda12]==0.4.35"]


def test_gpu_profiles_pin_the_gpu_and_apply_from_their_first_wheels_on_pypi():
    for name, first in (("cuda12", "0.4.23"), ("cuda13", "0.7.2")):
        profile = PROFILE_BY_NAME[name]
        assert profile.kind == "gpu" and profile.env["JAX_PLATFORMS"] == "cuda"
        assert profile.env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
        assert [r.jax for r in RELEASES if profile.applies_to(r)] == [
            r.jax for r in RELEASES if version_key(r.jax) >= version_key(first)
        ]
        assert not profile.applies_to(Release("0.4.20", "0.4.20")), "before the plugin: Google's index only"
    assert {p.kind for p in noxfile.PROFILES} == {"cpu", "gpu"}


def test_profiles_declare_where_they_apply():
    assert {"cpu", "cpu8"} <= set(PROFILE_BY_NAME)
    assert "device_count=8" in PROFILE_BY_NAME["cpu8"].env["XLA_FLAGS"]
    classic = PROFILE_BY_NAME["cpu-classic"]
    applies = [r.jax for r in RELEASES if classic.applies_to(r)]
    assert applies and all(version_key("0.4.29") <= version_key(v) <= version_key("0.6.2") for v in applies)
    assert all(PROFILE_BY_NAME["cpu"].applies_to(r) for r in RELEASES)


def test_session_listing_matches_the_tables():
    listed = subprocess.run(
        [sys.executable, "-m", "nox", "-l", "--json", "-k", "repro or report or tests or lint or issue"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    sessions = json.loads(listed.stdout)
    repro = {s["session"] for s in sessions if s["name"] == "repro"}
    assert repro == {f"repro({noxfile.session_id(r, p)})" for r, p in noxfile.MATRIX}
    for listed in (s for s in sessions if s["name"] == "repro"):
        kind = PROFILE_BY_NAME[listed["call_spec"]["profile"]].kind
        assert kind in listed["tags"], "the profile's kind is a tag: CI picks the runner by it"
    assert {"report", "tests", "lint", "issue"} <= {s["name"] for s in sessions}
    assert noxfile.nox.options.sessions == [
        f"repro(jax='{noxfile.DEFAULT_RELEASE.jax}', profile='cpu')",
        "report",
    ]


@pytest.mark.parametrize(
    ("posargs", "message"),
    [
        (["--case", "nope"], "unknown case nope"),
        (["--size", "N=x"], "malformed size"),
        (["--budget", "gpu=1"], "malformed budget"),
        (["--repeats", "none"], "not an integer"),
        (["--frobnicate"], "unrecognized arguments"),
    ],
)
def test_repro_posargs_are_checked_before_anything_is_installed(posargs, message, capsys):
    with pytest.raises(SystemExit) as stopped:
        noxfile.check_harness_args(["run", "--profile", "cpu", *posargs])
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("harness: error:") and message in err


@pytest.mark.parametrize(
    ("posargs", "message"),
    [
        (["scan_sync", "--jax", "9.9"], "unknown release 9.9"),
        (["scan_sync", "--profile", "tpu"], "unknown profile tpu"),
        (["scan_sync", "--jax", "0.4.26", "--profile", "cpu-classic"], "does not apply"),
        (["nope"], "unknown case nope"),
    ],
)
def test_nox_search_answers_bad_posargs_with_one_line_and_exit_2(posargs, message):
    done = subprocess.run(
        [sys.executable, "-m", "nox", "-s", "search", "--", *posargs], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 2
    ours = [line for line in done.stderr.splitlines() if not line.startswith("nox >")]
    assert len(ours) == 1 and message in ours[0], done.stderr


class RecordingSession:
    """Stands in for nox.Session: records what a session function installs and runs."""

    def __init__(self, *posargs: str) -> None:
        self.posargs = list(posargs)
        self.virtualenv = types.SimpleNamespace(location=None)
        self.installed: list[tuple[str, ...]] = []
        self.ran: list[tuple[tuple[str, ...], dict[str, str] | None]] = []

    def install(self, *args: str) -> None:
        self.installed.append(args)

    def run(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.ran.append((args, env))

    def error(self, message: str) -> None:
        raise SystemExit(message)

    def skip(self, reason: str) -> None:
        raise Skipped(reason)


class Skipped(Exception):
    pass


def test_a_gpu_session_without_a_gpu_is_skipped_before_installing(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    session = RecordingSession("--case", "scan_sync")
    with pytest.raises(Skipped, match=r"^profile cuda12 needs an NVIDIA GPU: nvidia-smi not found on PATH"):
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


def test_issue_session_pins_the_release_and_profile_and_passes_the_rest():
    session = RecordingSession("scan_sync", "--jax", "0.4.26", "--size", "N=16", "--profile=cpu8")
    noxfile.issue(session)
    assert session.installed == [("-e", ".[report]", "jax==0.4.26", "jaxlib==0.4.26")]
    [(args, env)] = session.ran
    assert args == ("python", "-m", "harness", "issue", "scan_sync", "--size", "N=16", "--profile", "cpu8")
    assert env == PROFILE_BY_NAME["cpu8"].env
    default = RecordingSession("scan_sync")
    noxfile.issue(default)
    assert default.installed[0][2] == f"jax=={noxfile.DEFAULT_RELEASE.jax}"


def test_install_once_skips_a_venv_that_already_holds_the_requirements(tmp_path):
    session = RecordingSession()
    session.virtualenv = types.SimpleNamespace(location=str(tmp_path))
    session.log = lambda message: None
    noxfile.install_once(session, "-e", ".", "jax==0.4.26")
    noxfile.install_once(session, "-e", ".", "jax==0.4.26")
    assert session.installed == [("-e", ".", "jax==0.4.26")]
    noxfile.install_once(session, "-e", ".", "jax==0.4.30")
    assert session.installed[-1] == ("-e", ".", "jax==0.4.30"), "other pins reinstall"


def test_index_releases_are_pinned_by_the_tables_rules():
    assert noxfile.index_release("0.4.26", "0.4.26") is noxfile.RELEASE_BY_VERSION["0.4.26"]
    assert noxfile.index_release("0.4.37", "0.4.36").requirements() == ["jax==0.4.37", "jaxlib==0.4.36"]
    assert noxfile.index_release("0.4.25", "0.4.25").pins == ("numpy<2",), "jaxlib below 0.4.26 needs NumPy 1"
    assert noxfile.install_args(RELEASES[0]) == ["-e", ".", "jax==0.4.26", "jaxlib==0.4.26"]


@pytest.mark.parametrize(
    ("session", "posargs", "message"),
    [
        ("bisect", ["nope", "--good", "0.4.26", "--bad", "0.4.35", "--claim"], "unknown case nope"),
        ("bisect", ["scan_sync", "--good", "0.4.26", "--bad", "0.4.26", "--claim"], "the same release"),
        ("bisect", ["scan_sync", "--good", "0.4.26", "--bad", "0.4.35", "--metric", "two_scans"], "malformed metric"),
        ("bisect", ["scan_sync", "--claim", "--good", "1", "--bad", "2", "--profile", "tpu"], "unknown profile"),
        ("sweep", ["scan_sync", "--from", "0.4.35", "--to", "0.4.26"], "from an older release to a newer one"),
    ],
)
def test_nox_bisect_and_sweep_answer_bad_posargs_before_installing(session, posargs, message):
    done = subprocess.run(
        [sys.executable, "-m", "nox", "-s", session, "--", *posargs], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 2
    ours = [line for line in done.stderr.splitlines() if not line.startswith("nox >")]
    assert len(ours) == 1 and message in ours[0], done.stderr


class RangeSession(RecordingSession):
    """A recording session with a venv folder and a cache holding a fresh listing of the index."""

    def __init__(self, tmp_path, *posargs: str) -> None:
        super().__init__(*posargs)
        self.bin = str(tmp_path / "bisect" / "bin")
        self.cache_dir = str(tmp_path / ".cache")
        pairs = pair_with_jaxlib(*(parse_pip_listing((LISTINGS / f"pip-index-{p}.txt").read_text()) for p in PACKAGES))
        listing = {"python": f"{self.bin}/python", "pairs": pairs, "listed_at": time.time()}
        Path(self.cache_dir).mkdir()
        (Path(self.cache_dir) / "jax-index.json").write_text(json.dumps(listing))


def test_bisect_session_plans_every_release_of_the_range_from_the_index(tmp_path):
    session = RangeSession(tmp_path, "async_dispatch", "--claim", "--good", "0.4.35", "--bad", "0.5.3")
    noxfile.bisect(session)
    assert session.installed == [("-e", ".[report]", "pip")]
    [(args, env)] = session.ran
    plan = tmp_path / ".cache" / "bisect-releases.json"
    assert args == (
        "python", "-m", "harness", "bisect", "async_dispatch", "--claim", "--good", "0.4.35", "--bad", "0.5.3",
        "--profile", "cpu", "--releases", str(plan),
    )  # fmt: skip
    assert env == PROFILE_BY_NAME["cpu"].env
    envs = read_plan(plan)
    assert [(e.jax, e.jaxlib) for e in envs] == [
        ("0.4.35", "0.4.35"), ("0.4.36", "0.4.36"), ("0.4.37", "0.4.36"), ("0.4.38", "0.4.38"),
        ("0.5.0", "0.5.0"), ("0.5.1", "0.5.1"), ("0.5.2", "0.5.1"), ("0.5.3", "0.5.3"),
    ]  # fmt: skip
    assert envs[2].install == ("-e", ".", "jax==0.4.37", "jaxlib==0.4.36")
    assert envs[2].venv == tmp_path / "release-jax-0.4.37", "beside nox's own venvs"
    assert envs[2].python == noxfile.interpreter("3.12")


def test_a_range_end_not_on_the_index_is_refused_after_listing(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        noxfile.sweep(RangeSession(tmp_path, "async_dispatch", "--from", "0.4.31", "--to", "0.4.32"))
    assert stopped.value.code == 2
    assert "jax 0.4.32 is not an installable release on the package index" in capsys.readouterr().err
