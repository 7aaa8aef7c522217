"""The installed ``jax-repro`` driving its packaged nox sessions: unit tests, then the wheel itself,
built and run from an empty folder against a real release."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.commands import packaged_sessions
from harness.commands.packaged_sessions import cache_root, drive, materialized
from harness.errors import UsageError
from harness.install import venvs
from harness.pins import DEFAULT_RELEASE, DRIVEN, interpreter

from ..conftest import REPO, checkout_turn


@pytest.fixture
def reachable(tmp_path) -> dict[str, str]:
    """An index that answers for jax without the network: a local mirror's folder."""
    (tmp_path / "mirror" / "jax").mkdir(parents=True)
    return {"PIP_INDEX_URL": (tmp_path / "mirror").as_uri()}


def test_the_cache_is_the_setting_else_xdg_else_home(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cache_root({"JAX_REPRO_CACHE": "c", "XDG_CACHE_HOME": "/x"}) == tmp_path / "c"
    assert cache_root({"XDG_CACHE_HOME": "/x"}) == Path("/x/jax-repro")
    assert cache_root({"HOME": "/home/u"}) == Path("/home/u/.cache/jax-repro")


def test_the_project_is_copied_once_and_again_when_the_package_changed(tmp_path, monkeypatch):
    project = materialized(tmp_path)
    assert (project / "noxfile.py").read_bytes() == (REPO / "noxfile.py").read_bytes()
    assert (project / "harness" / "commands" / "packaged_sessions.py").is_file()
    assert (project / "cases" / "scan_sync.py").is_file()
    assert not list(project.rglob("__pycache__")) and not (project / "harness" / "project").exists()
    made = (project / "noxfile.py").stat().st_mtime_ns
    assert materialized(tmp_path) == project and (project / "noxfile.py").stat().st_mtime_ns == made
    source = tmp_path / "src"
    source.mkdir()
    (source / "noxfile.py").write_text("# upgraded\n")
    monkeypatch.setattr(
        packaged_sessions, "project_files", lambda: {"noxfile.py": source / "noxfile.py"}
    )
    assert (materialized(tmp_path) / "noxfile.py").read_text() == "# upgraded\n"
    assert not (project / "cases").exists()  # the old copy is gone whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["project", "project.lock", "src"]


def test_nox_runs_the_copy_with_its_venvs_in_the_cache_and_the_posargs_as_typed(
    tmp_path, monkeypatch, reachable
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "repro.py").write_text("print(1)\n")
    ran = []
    argv = ["triage", "--script", "repro.py", "--from", "0.4.30", "--to", "0.4.33"]
    environ = {**reachable, "JAX_REPRO_CACHE": "cache"}
    drive("triage", argv, None, environ, lambda *call: ran.append(call))
    [(program, command, env)] = ran
    cache = tmp_path / "cache"
    assert program == sys.executable and command[1:4] == ["-P", "-m", "nox"]
    assert command[4:10] == [
        "-f",
        str(cache / "project" / "noxfile.py"),
        "--envdir",
        str(cache / "nox"),
        "-s",
        "triage",
    ]
    assert command[10:] == ["--", *argv[1:]]
    assert env[DRIVEN] == "1"


def test_a_command_turned_into_its_nox_session_says_so_and_where_it_reads_and_writes(
    tmp_path, monkeypatch, reachable, capsys
):
    """``python -m harness issue`` in a venv without JAX and no --releases is the issue session:
    said, never silently."""
    monkeypatch.chdir(tmp_path)
    argv = ["issue", "--case", "scan_sync", "--good", "0.4.31", "--bad", "0.4.33"]
    drive("issue", argv, None, {**reachable, "JAX_REPRO_CACHE": "cache"}, lambda *call: None)
    said = capsys.readouterr().err
    assert said.startswith("jax-repro: issue runs as `nox -s issue` on the harness copied into ")
    assert f"stored answers in this folder, {tmp_path}" in said


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["triage", "--script", "missing.py", "--from", "0.4.30", "--to", "0.4.33"], "missing.py"),
        (["matrix", "--jax", "9.9"], "unknown release 9.9"),
        (["run", "--case", "scan_sync", "--sides", "p.json"], "--sides is for `nox -s matrix`"),
    ],
)
def test_bad_input_is_refused_here_before_nox_starts(
    tmp_path, monkeypatch, reachable, argv, message
):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=message.replace(".", r"\.")):
        drive(argv[0], argv, None, reachable, lambda *call: pytest.fail("nox started"))
    assert not (tmp_path / ".cache").exists()


@pytest.mark.parametrize(
    ("where", "why"),
    [
        ("a-file", "it is not a folder"),
        ("/dev/null", "it is not a folder"),
        ("a-file/cache", "Not a directory"),
        ("/proc/jax-repro-cache", ""),
        ("read-only", "Read-only file system"),
    ],
)
def test_a_cache_that_takes_no_writes_is_one_line_naming_it_before_anything_runs(
    tmp_path, monkeypatch, reachable, where, why
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("")
    if where == "read-only":  # as a read-only mount answers, whoever the user is (root included)
        (tmp_path / where).mkdir()

        def refused(*args, **kwargs):
            raise OSError(30, "Read-only file system")

        monkeypatch.setattr(packaged_sessions.tempfile, "mkstemp", refused)
    argv = ["triage", "--case", "scan_sync", "--from", "0.4.30", "--to", "0.4.33"]
    environ = {**reachable, "JAX_REPRO_CACHE": where}
    with pytest.raises(UsageError) as refused_cache:
        drive("triage", argv, None, environ, lambda *call: pytest.fail("nox started"))
    line = str(refused_cache.value)
    shown = where if where.startswith("/") else tmp_path / where
    assert "\n" not in line and line.startswith(f"the cache {shown} cannot be used")
    assert why in line and "JAX_REPRO_CACHE" in line
    assert not list(tmp_path.rglob("project*")), "nothing copied"


def test_an_unreachable_index_is_one_line_naming_the_commands_that_need_it(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as refused:
        drive(
            "sweep",
            ["sweep", "--case", "scan_sync", "--from", "0.4.30", "--to", "0.4.33"],
            "0.4.35",
            {"UV_OFFLINE": "1"},
            lambda *call: pytest.fail("nox started"),
        )
    line = str(refused.value)
    assert "\n" not in line and line.startswith(
        "sweep installs jax releases from the package index"
    )
    assert "UV_OFFLINE is set" in line and "triage" in line and "run --jax" in line
    assert "with the jax 0.4.35 installed here, `jax-repro run`, `search`" in line


def test_a_machine_with_jax_and_no_index_is_told_so_by_the_program(tmp_path):
    """``python -m harness`` (this environment has JAX): a release command is one line and exit 2,
    no nox."""
    env = {**os.environ, "UV_OFFLINE": "1"}
    env.pop(DRIVEN, None)
    argv = ["triage", "--case", "scan_sync", "--from", "0.4.30", "--to", "0.4.33"]
    done = subprocess.run(
        [sys.executable, "-m", "harness", *argv],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("harness: error: triage installs jax releases from the package index")
    assert "installed here, `jax-repro run`, `search` and `list` measure or read it" in line


# The wheel, installed as a user's tool environment would hold it (uvx, pipx, ``uv tool``),
# read-only.
REPRO = (
    "import json, time\n"
    "import jax, jax.numpy as jnp\n"
    "f = jax.jit(lambda x: (x @ x).sum())\n"
    "x = jnp.ones((32, 32))\n"
    "f(x).block_until_ready()\n"
    "start = time.perf_counter_ns(); f(x).block_until_ready()\n"
    'print(json.dumps({"step_ns": time.perf_counter_ns() - start}))\n'
)


def uv(*args: str, cwd: Path = REPO) -> None:
    [*command] = venvs.uv_command() or pytest.skip("needs uv")
    subprocess.run([*command, *args], cwd=cwd, check=True, capture_output=True, timeout=600)


def package_files(site: Path) -> dict[str, int]:
    """The installed package's files and their sizes, bytecode aside (Python writes it where it
    may)."""
    return {
        str(path.relative_to(site)): path.stat().st_size
        for folder in ("harness", "cases")
        for path in (site / folder).rglob("*")
        if "__pycache__" not in path.parts
    }


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A tool environment holding the wheel built from this checkout, its package read-only."""
    root = tmp_path_factory.mktemp("installed")
    with checkout_turn():  # the build writes here, as a nox session's first install does
        uv("build", "--wheel", "--quiet", "-o", str(root / "dist"), str(REPO))
    [wheel] = (root / "dist").glob("*.whl")
    uv("venv", "--quiet", "--python", interpreter(DEFAULT_RELEASE.python), str(root / "tool"))
    uv("pip", "install", "--quiet", "--python", str(root / "tool" / "bin" / "python"), str(wheel))
    [site] = (root / "tool").glob("lib/python3*/site-packages")
    subprocess.run(["chmod", "-R", "a-w", str(site / "harness"), str(site / "cases")], check=True)
    yield root / "tool", site
    subprocess.run(["chmod", "-R", "u+w", str(site / "harness"), str(site / "cases")], check=True)


def nox_driven(tool: Path, argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """``jax-repro ARGV`` as the installed program in ``cwd``: it drives its packaged nox
    session."""
    environ = {k: v for k, v in os.environ.items() if k != DRIVEN}
    environ.update(PYTHONDONTWRITEBYTECODE="1", **env)
    return subprocess.run(
        [str(tool / "bin" / "jax-repro"), *argv],
        cwd=cwd,
        env=environ,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.mark.venv
def test_the_installed_command_without_an_index_refuses_release_commands_in_one_line(
    installed, tmp_path
):
    tool, _ = installed
    (tmp_path / "repro.py").write_text(REPRO)
    argv = ["triage", "--script", "repro.py", "--from", "0.4.30", "--to", "0.4.33"]
    done = nox_driven(tool, argv, tmp_path, UV_DEFAULT_INDEX="http://127.0.0.1:9/simple")
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("harness: error: triage installs jax releases from the package index")
    assert "install jax here and `jax-repro run` and `search` measure it" in line
    listed = nox_driven(tool, ["list"], tmp_path)  # the shipped catalogue, no JAX needed
    assert listed.returncode == 0 and "scan_sync" in listed.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repro.py"]


@pytest.mark.releases
@pytest.mark.venv
def test_the_installed_command_runs_a_release_from_an_empty_folder_and_reuses_its_venvs(
    installed, tmp_path
):
    """The smallest real run: a small script on the default release, two processes; its result and
    report in the user's folder by the relative paths typed there, every venv in the cache, then the
    same run again."""
    tool, site = installed
    before = package_files(site)
    user, cache = tmp_path / "user", tmp_path / "cache"
    (user / "scripts").mkdir(parents=True)
    (user / "scripts" / "repro.py").write_text(REPRO)
    run = ["run", "--script", "scripts/repro.py", "--jax", DEFAULT_RELEASE.jax, "--processes", "2"]
    run += ["--results", "res"]
    first = nox_driven(tool, run, user, JAX_REPRO_CACHE=str(cache))
    said = [line for line in (first.stdout + first.stderr).splitlines() if "error" in line]
    assert first.returncode == 0, "\n".join(said[-5:]) or first.stderr[-3000:]
    assert f"venvs in {cache / 'nox'}" in first.stderr
    assert len(list((user / "res").rglob("*.json"))) == 1
    # as the user types it here
    assert "Their report: `jax-repro report --results res`" in first.stdout
    [script_env] = (cache / "nox").glob("script-env-*")
    made = script_env.stat().st_mtime_ns
    report = nox_driven(
        tool, ["report", "--results", "res", "--out", "pages"], user, JAX_REPRO_CACHE=str(cache)
    )
    assert report.returncode == 0, report.stderr[-3000:]
    assert (user / "pages" / "index.md").is_file()
    second = nox_driven(tool, run, user, JAX_REPRO_CACHE=str(cache))
    assert second.returncode == 0, second.stderr[-3000:]
    assert "Reusing existing virtual environment" in second.stderr
    assert "Creating virtual environment" not in second.stderr
    assert script_env.stat().st_mtime_ns == made
    assert sorted(p.name for p in user.iterdir()) == ["pages", "res", "scripts"]
    assert package_files(site) == before and not list(tool.rglob(".nox"))
