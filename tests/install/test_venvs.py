"""Release venvs: the plan nox hands over, and building a venv only when it does not hold its
install; the folder of what jax.export needs besides jax, installed once, named so that a process
started anywhere finds it; an installer's command ends whole: what it started (compileall's
workers) goes with it on an interrupt or a time-out, never left running into the venv."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from harness.errors import UsageError
from harness.install import venvs
from harness.install.venvs import (
    EXPORT_DONE,
    INSTALLED,
    ReleaseEnv,
    ensure,
    export_tools,
    install_record,
    read_plan,
    run_whole,
    venv_name,
    write_plan,
)
from harness.measure.locks import venv_lock
from harness.pins import PROFILE_BY_NAME, Release


def release_env(tmp_path: Path, python: str = "python3.12") -> ReleaseEnv:
    return ReleaseEnv(
        "0.4.33", "0.4.33", python, ("-e", ".", "jax==0.4.33", "jaxlib==0.4.33"), tmp_path / "venv"
    )


def test_the_plan_round_trips(tmp_path):
    envs = [
        release_env(tmp_path),
        ReleaseEnv("0.4.37", "0.4.36", "py", ("jax==0.4.37",), tmp_path / "other"),
    ]
    write_plan(tmp_path / "plan.json", envs)
    assert read_plan(tmp_path / "plan.json") == envs


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("/dev/zero", "not a regular file"),
        (b"[" + b" " * (4 * 2**20) + b"]", "too large"),
        ("[{", "cannot read the release plan"),
        ('{"jax": "0.4.33"}', "is not a list of releases"),
        (
            '[{"jax": "0.4.33", "python": "py", "install": [], "venv": "v"}]',
            "entry 1 has no 'jaxlib'",
        ),
        (
            '[{"jax": "0.4.33", "jaxlib": 4, "python": "py", "install": [], "venv": "v"}]',
            "'jaxlib'",
        ),
        ('[{"jax": "1", "jaxlib": "1", "python": "p", "install": "x", "venv": "v"}]', "'install'"),
        ("[7]", "entry 1 is not an object"),
    ],
)
def test_a_plan_that_is_not_one_is_refused_in_one_line_read_bounded(tmp_path, content, said):
    if content == "/dev/zero":
        path = Path(content)
    else:
        path = tmp_path / "plan.json"
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(UsageError) as refused:
        read_plan(path)
    line = str(refused.value)
    assert "\n" not in line and str(path) in line and said in line, line


def test_a_venv_holding_its_install_is_used_as_it_is(tmp_path, monkeypatch):
    env = release_env(tmp_path)
    env.interpreter.parent.mkdir(parents=True)
    env.interpreter.touch()
    (env.venv / "lib" / "python3.12" / "site-packages").mkdir(parents=True)
    (env.venv / INSTALLED).write_text(json.dumps(install_record(env)))
    (env.venv / venvs.USED).write_text("home = /usr/bin\n")
    os.utime(env.venv / venvs.USED, (0, 0))
    monkeypatch.setattr(venvs, "uv_command", lambda: None)  # any install attempt would now fail
    assert ensure(env) is None
    used = (env.venv / venvs.USED).stat().st_mtime
    assert used > 0, "a venv taken as it is is stamped used, for prune"
    (env.venv / INSTALLED).write_text(
        json.dumps({**install_record(env), "pyproject": "an older pyproject.toml"})
    )
    assert ensure(env).startswith("uv not found"), (
        "a changed pyproject.toml must be installed again"
    )
    (env.venv / INSTALLED).write_text(json.dumps(install_record(env)))
    changed = ReleaseEnv(env.jax, env.jaxlib, env.python, (*env.install, "numpy<2"), env.venv)
    assert ensure(changed).startswith("uv not found"), "another install must be installed"


def test_a_venv_whose_jaxlib_lost_a_file_is_installed_again(tmp_path, monkeypatch):
    env = release_env(tmp_path)
    env.interpreter.parent.mkdir(parents=True)
    env.interpreter.touch()
    site = env.venv / "lib" / "python3.12" / "site-packages"
    (site / "jaxlib").mkdir(parents=True)
    (site / "jaxlib" / "xla_extension.so").write_bytes(b"\x7fELF")
    (site / "jaxlib-0.4.33.dist-info").mkdir()
    (site / "jaxlib-0.4.33.dist-info" / "RECORD").write_text("jaxlib/xla_extension.so,sha256=x,4\n")
    (env.venv / INSTALLED).write_text(json.dumps(install_record(env)))
    calls = []
    monkeypatch.setattr(venvs, "uv_command", lambda: calls.append("uv") or None)
    assert ensure(env) is None and calls == [], "intact: reused without uv"
    (site / "jaxlib" / "xla_extension.so").unlink()
    assert venvs.missing_files(env.venv) == ["jaxlib/xla_extension.so"]
    assert ensure(env).startswith("uv not found") and calls == ["uv"], "damaged: installed again"


def test_a_venv_a_process_found_damaged_is_installed_again_and_the_mark_cleared(
    tmp_path, monkeypatch
):
    """R8-19: a file whose content is not what was installed (no file gone): installed again."""
    from harness.measure import venv_files

    env = release_env(tmp_path)
    env.interpreter.parent.mkdir(parents=True)
    env.interpreter.touch()
    (env.venv / "lib" / "python3.12" / "site-packages").mkdir(parents=True)
    (env.venv / INSTALLED).write_text(json.dumps(install_record(env)))
    calls = []
    monkeypatch.setattr(venvs, "uv_command", lambda: calls.append("uv") or None)
    assert ensure(env) is None and calls == []
    venv_files.mark(env.venv, ["jax/_src/api.py"])
    assert ensure(env).startswith("uv not found") and calls == ["uv"], "damaged: installed again"
    assert venv_files.marked(env.venv), "kept until an install succeeds"


def test_an_interpreter_that_does_not_exist_is_a_reason_not_a_crash(tmp_path):
    problem = ensure(release_env(tmp_path, python=str(tmp_path / "no-such-python")))
    assert problem is not None
    assert problem.startswith("`uv venv` failed:") or problem.startswith("uv not found")
    assert not (tmp_path / "venv" / INSTALLED).exists()


def test_a_release_venv_is_named_and_installed_for_the_profiles_build(tmp_path):
    release = Release("0.4.37", "0.4.36")
    for cpu in ("cpu", "cpu8", "cpu-classic"):
        assert venv_name(release, PROFILE_BY_NAME[cpu]) == "release-jax-0.4.37", (
            "CPU profiles share one install"
        )
    cuda = venvs.release_env(release, PROFILE_BY_NAME["cuda12"], "python3.12", tmp_path)
    assert cuda.venv == tmp_path / "release-jax-0.4.37-cuda12"
    assert cuda.install == ("-e", ".", "jax[cuda12]==0.4.37")
    assert cuda.jaxlib == "pinned by jax[cuda12]", (
        "the extra chooses jaxlib, not the index's pairing"
    )
    cpu = venvs.release_env(release, PROFILE_BY_NAME["cpu"], "python3.12", tmp_path)
    assert (cpu.venv.name, cpu.jaxlib, cpu.install) == (
        "release-jax-0.4.37",
        "0.4.36",
        ("-e", ".", "jax==0.4.37", "jaxlib==0.4.36"),
    )


def test_a_plain_venv_holds_the_release_alone_beside_the_release_venv(tmp_path):
    cpu = venvs.release_env(
        Release("0.4.25", "0.4.25", pins=("numpy<2",)), PROFILE_BY_NAME["cpu"], "3.12", tmp_path
    )
    plain = venvs.plain_env(cpu)
    assert plain.install == ("jax==0.4.25", "jaxlib==0.4.25", "numpy<2"), (
        "no harness: what a user would pip install"
    )
    assert plain.venv == tmp_path / "plain-jax-0.4.25" and (plain.jax, plain.python) == (
        "0.4.25",
        "3.12",
    )
    cuda = venvs.plain_env(
        venvs.release_env(Release("0.7.2", "0.7.2"), PROFILE_BY_NAME["cuda12"], "3.12", tmp_path)
    )
    assert cuda.install == ("jax[cuda12]==0.7.2",) and cuda.venv.name == "plain-jax-0.7.2-cuda12"


def test_a_plan_entry_is_found_by_release_or_refused_naming_nearby_ones(tmp_path):
    plan = [
        ReleaseEnv(v, v, "3.12", ("-e", ".", f"jax=={v}"), tmp_path / v)
        for v in ("0.4.31", "0.4.33", "0.4.34")
    ]
    assert venvs.plan_entry(plan, "0.4.33") is plan[1]
    with pytest.raises(
        UsageError,
        match=r"jax 0\.4\.32 is not an installable release.*0\.4\.31, 0\.4\.33, 0\.4\.34",
    ):
        venvs.plan_entry(plan, "0.4.32")


def test_a_release_is_installed_with_its_bytecode_compiled(tmp_path, monkeypatch):
    """A script's process.import_ns times importing jax, never compiling its source: the same on
    every release, whether or not its processes may write bytecode."""
    ran = []
    monkeypatch.setattr(venvs, "uv_command", lambda: ["uv"])
    env = ReleaseEnv("0.4.31", "0.4.31", "3.12", ("jax==0.4.31",), tmp_path / "release-jax-0.4.31")

    def uv(command, cwd, timeout_s, env_vars=None):
        ran.append(command)
        env.venv.mkdir(exist_ok=True)  # as `uv venv` makes it
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(venvs, "run_whole", uv)
    assert venvs.ensure(env) is None
    [create, install, compiled] = ran
    assert create[:2] == ["uv", "venv"] and install[:3] == ["uv", "pip", "install"]
    assert compiled[1:3] == ["-m", "compileall"] and compiled[-1] == str(env.venv / "lib")
    assert json.loads((env.venv / INSTALLED).read_text())["bytecode"] == "compileall", (
        "older venvs compile once"
    )


def test_the_compile_leaves_the_packages_test_suites_out_and_compiles_the_rest(tmp_path):
    """The command itself, run for real on a venv that is itself under a folder named tests: the
    packages' modules are compiled, their test suites (half the compile time of a release venv, no
    program imports them) are not."""
    venv = tmp_path / "tests" / "release-jax-0.4.31"
    site = venv / "lib" / "python3" / "site-packages"
    for module in ("jax/numpy.py", "jax/tests/test_api.py", "scipy/linalg/tests/test_x.py"):
        (site / module).parent.mkdir(parents=True, exist_ok=True)
        (site / module).write_text("x = 1\n")
    (venv / "bin").mkdir()
    (venv / "bin" / "python").symlink_to(sys.executable)
    subprocess.run(venvs.compile_all(venv), check=True, capture_output=True)
    compiled = {path.parent.parent.relative_to(site) for path in site.rglob("*.pyc")}
    assert compiled == {Path("jax")}, compiled


def test_two_runs_that_need_one_new_release_venv_at_once_make_it_once(tmp_path, monkeypatch):
    """Two workers of the suite, or two sessions, asking for one release's venv: the second waits
    under the venv's lock and finds it ready (uv refuses to make a venv over one that exists)."""
    monkeypatch.setenv("HARNESS_LOCK_DIR", str(tmp_path))
    monkeypatch.setattr(venvs, "uv_command", lambda: ["uv"])
    env = ReleaseEnv("0.4.31", "0.4.31", "3.12", ("jax==0.4.31",), tmp_path / "release-jax-0.4.31")
    ran = []

    def uv(command, cwd, timeout_s, env_vars=None):
        ran.append(command[:3])
        if command[1] == "venv":
            if (env.venv / "pyvenv.cfg").exists():
                return subprocess.CompletedProcess(
                    command, 2, "", "A virtual environment already exists"
                )
            time.sleep(0.5)  # time for the other run to ask meanwhile
            env.interpreter.parent.mkdir(parents=True)
            env.interpreter.touch()
            (env.venv / "pyvenv.cfg").touch()
            (env.venv / "lib" / "python3.12" / "site-packages").mkdir(parents=True)
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(venvs, "run_whole", uv)
    problems = []
    runs = [threading.Thread(target=lambda: problems.append(ensure(env))) for _ in range(2)]
    for run in runs:
        run.start()
    for run in runs:
        run.join()
    assert problems == [None, None]
    assert [command for command in ran if command[1] == "venv"] == [["uv", "venv", "--quiet"]]
    assert sum(command[1:3] == ["pip", "install"] for command in ran) == 1, "the second reused it"


def test_two_runs_that_need_the_export_tools_at_once_install_them_once(tmp_path, monkeypatch):
    """The why's capture, and the suite's workers: the second waits under the folder's venv lock,
    then finds it ready."""
    monkeypatch.setattr(venvs, "uv_command", lambda: ["uv"])
    ran = []
    monkeypatch.setattr(venvs, "run_whole", lambda command, cwd, timeout_s: ran.append(command))
    folder = tmp_path / ".nox" / "export-tools"
    found = []
    with venv_lock(folder, lambda line: None):
        second = threading.Thread(
            target=lambda: found.append(export_tools(folder.parent, sys.executable))
        )
        second.start()
        time.sleep(0.3)
        assert ran == [], "it waits while another run installs them"
        folder.mkdir(parents=True)
        (folder / EXPORT_DONE).write_text("flatbuffers\nabsl-py\n")
    second.join(10)
    assert found == [folder] and ran == []


def test_a_relative_cache_gives_an_absolute_folder_a_process_elsewhere_can_use(
    tmp_path, monkeypatch
):
    (tmp_path / ".nox" / "export-tools").mkdir(parents=True)
    (tmp_path / ".nox" / "export-tools" / EXPORT_DONE).write_text("flatbuffers\nabsl-py\n")
    monkeypatch.chdir(tmp_path)
    found = export_tools(tmp_path.joinpath(".nox").relative_to(tmp_path), tmp_path / "python")
    assert found == tmp_path / ".nox" / "export-tools"
    assert not isinstance(found, str) and found.is_absolute()


# A command that starts a worker of its own (as compileall -j 0 does), says the worker's pid, then
# waits.
STARTS_A_WORKER = textwrap.dedent(
    """
    import subprocess, sys, time
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    print(worker.pid, flush=True)
    open(sys.argv[1], "w").write(str(worker.pid))
    time.sleep(60)
    """
)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as stat:  # a zombie is gone, only not yet reaped by its parent
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(path, seconds=20.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def gone_soon(pid: int, seconds=5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_sigterm_to_the_harness_ends_the_command_and_its_workers(tmp_path):
    # The harness as main.py runs it: SIGTERM raised as an interrupt, while an install command runs.
    harness = textwrap.dedent(
        f"""
        import signal, sys
        from pathlib import Path
        from harness.install.venvs import run_whole
        def terminate(signum, frame):
            raise KeyboardInterrupt
        signal.signal(signal.SIGTERM, terminate)
        try:
            run_whole([sys.executable, "-c", {STARTS_A_WORKER!r}, sys.argv[1]], Path("."), 120)
        except KeyboardInterrupt:
            sys.exit(143)
        """
    )
    pid_file = tmp_path / "worker.pid"
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    started = subprocess.Popen([sys.executable, "-c", harness, str(pid_file)], env=env)
    worker = wait_for(pid_file)
    started.send_signal(signal.SIGTERM)
    assert started.wait(timeout=20) == 143
    assert gone_soon(worker), "compileall's worker outlived the harness"


def test_a_command_past_its_time_is_ended_with_its_workers(tmp_path):
    pid_file = tmp_path / "worker.pid"
    done = run_whole([sys.executable, "-c", STARTS_A_WORKER, str(pid_file)], tmp_path, 2)
    assert done.returncode == 124 and "did not finish within 2 s" in done.stderr
    assert gone_soon(wait_for(pid_file))


def test_a_command_that_cannot_start_is_a_failed_run():
    done = run_whole(["/no/such/program"], Path("."), 5)
    assert done.returncode == 127 and "No such file" in done.stderr
