"""A script's venv per release: resolved with uv under the release's constraints (as of its date, or
newest), installed once, reused without the network.  A fake uv for the logic; real uv and PyPI
under ``-m venv``."""

import glob
import json
import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from packaging.version import Version

from harness.catalogue.script_deps import Declared, collect
from harness.errors import HarnessError, UsageError
from harness.install import script_envs
from harness.install.script_envs import (
    PYTHON_VERSION_PROBE,
    RECORD,
    InstallFailed,
    NotInstallable,
    ScriptEnv,
    ScriptEnvRequest,
    check_policy,
    constraint_lines,
    ensure,
    env_name,
    parse_hold,
    parse_pins,
    resolve,
    uv_reason,
)
from harness.install.upload_times import UploadTimes
from harness.install.venvs import USED, uv_command
from harness.pins import PROFILE_BY_NAME, Release
from harness.units import version_key
from tests.conftest import FIXTURES

RECORDED = FIXTURES / "index_times"
UV_OUTPUT = FIXTURES / "uv"
RELEASE = Release("0.4.31", "0.4.31")
# The later of jax's and jaxlib's first upload (jaxlib's, 2024-07-30T00:25:58Z), a week on, in whole
# seconds.
CUTOFF = datetime(2024, 8, 6, 0, 25, 58, tzinfo=UTC)
AS_OF_SET = (
    "equinox==0.11.4\njax==0.4.31\njaxlib==0.4.31\njaxtyping==0.2.33\nml-dtypes==0.4.0\n"
    "numpy==2.0.1\n"
)
DAY = 24 * 3600.0
NOW = datetime(2026, 12, 1, tzinfo=UTC).timestamp()


def recorded_index(url: str) -> bytes | None:
    path = RECORDED / f"{url.rstrip('/').rsplit('/', 1)[1]}.json"
    return path.read_bytes() if path.exists() else None


def no_network(url: str) -> bytes | None:
    raise AssertionError(f"asked the index for {url}")


def times(folder: Path, fetcher=recorded_index) -> UploadTimes:
    return UploadTimes(folder / "index-times", index="https://pypi.org/simple", fetcher=fetcher)


def is_step(command: list[str], name: str) -> bool:
    return command[1 : 1 + len(name.split())] == name.split()


def done(command, returncode=0, stdout="", stderr=""):
    return subprocess.CompletedProcess(list(command), returncode, stdout, stderr)


class FakeUv:
    """Stands in for uv and the interpreter: answers each command as uv would, logs it with its
    input files."""

    def __init__(self, resolved=AS_OF_SET, *, compile_error=None, fail=None, installed=None):
        self.resolved = resolved
        self.compile_error = compile_error  # (returncode, stderr) of a failing `uv pip compile`
        self.fail = fail  # {"sync": (returncode, stderr)}
        self.installed = installed
        self.calls: list[list[str]] = []
        self.compiled: list[dict[str, str]] = []

    def steps(self, name: str) -> list[list[str]]:
        """The uv commands run of one kind ("venv", "pip sync"), in order."""
        return [command for command in self.calls if is_step(command, name)]

    def __call__(self, command, cwd):
        command = list(command)
        self.calls.append(command)
        if command[1:] == ["-c", PYTHON_VERSION_PROBE]:
            return done(command, stdout="3.12.1\n")
        if command[1:3] == ["pip", "compile"]:
            self.compiled.append(
                {n: (cwd / n).read_text() for n in ("requirements.in", "constraints.txt")}
            )
            if self.compile_error:
                return done(command, self.compile_error[0], stderr=self.compile_error[1])
            return done(command, stdout=self.resolved)
        for step, (returncode, stderr) in (self.fail or {}).items():
            if is_step(command, step):
                return done(command, returncode, stderr=stderr)
        if command[1] == "venv":
            venv = Path(command[-1])
            (venv / "bin").mkdir(parents=True)
            (venv / "bin" / "python").touch()
            (venv / "pyvenv.cfg").touch()
            (venv / "lib" / "python3.12" / "site-packages").mkdir(parents=True)
        if command[1:3] == ["pip", "freeze"]:
            return done(command, stdout=self.installed or self.resolved)
        return done(command)


def request(declared=("equinox",), policy="as-of", release=RELEASE, **options) -> ScriptEnvRequest:
    return ScriptEnvRequest(
        release, collect(None, "", list(declared)), "/usr/bin/python3.12", policy=policy, **options
    )


def test_as_of_compiles_under_the_release_s_constraints_with_a_cutoff_a_week_after_its_later_upload(
    tmp_path,
):
    uv = FakeUv()
    env = ensure(request(), tmp_path, times(tmp_path), runner=uv, uv=["uv"], clock=lambda: NOW)
    assert uv.steps("pip compile") == [
        [
            "uv",
            "pip",
            "compile",
            "requirements.in",
            "--constraints",
            "constraints.txt",
            "--python",
            "/usr/bin/python3.12",
            "--no-header",
            "--no-annotate",
            "--color",
            "never",
            "--exclude-newer",
            "2024-08-06T00:25:58Z",
            "--exclude-newer-package",
            "jax=false",
            "--exclude-newer-package",
            "jaxlib=false",
        ],
    ]
    assert uv.compiled == [
        {
            "requirements.in": "jax==0.4.31\njaxlib==0.4.31\nequinox\n",
            "constraints.txt": "jax==0.4.31\njaxlib==0.4.31\n",
        }
    ]
    assert isinstance(env, ScriptEnv)
    assert env.libraries == script_envs.libraries(request(), parse_pins(AS_OF_SET), CUTOFF)
    assert env.libraries.version_of("equinox") == "0.11.4" and env.python_version == "3.12.1"
    assert (
        env.venv.parent == tmp_path
        and env.venv.name.startswith("script-env-")
        and len(env.venv.name) == 27
    )
    assert (env.venv / "resolved.txt").read_text() == AS_OF_SET
    assert [command[1:3] for command in uv.calls[2:]] == [
        ["venv", "--quiet"],
        ["pip", "sync"],
        ["-m", "compileall"],
        ["pip", "freeze"],
    ]
    assert json.loads((env.venv / RECORD).read_text())["installed"] == list(env.libraries.installed)


def test_newest_has_no_cutoff(tmp_path):
    uv = FakeUv()
    env = ensure(
        request(policy="newest"), tmp_path, times(tmp_path, no_network), runner=uv, uv=["uv"]
    )
    assert "--exclude-newer" not in uv.steps("pip compile")[0]
    assert (
        isinstance(env, ScriptEnv)
        and env.libraries.cutoff is None
        and env.libraries.policy == "newest"
    )


def test_under_a_cuda_profile_the_extra_picks_jaxlib_and_the_plugins_are_part_of_the_release(
    tmp_path,
):
    uv = FakeUv()
    cuda = request(profile=PROFILE_BY_NAME["cuda12"])
    ensure(cuda, tmp_path, times(tmp_path), runner=uv, uv=["uv"])
    assert uv.compiled[0] == {
        "requirements.in": "jax[cuda12]==0.4.31\nequinox\n",
        "constraints.txt": "jax==0.4.31\n",
    }
    assert uv.steps("pip compile")[0][-10:] == [
        "--exclude-newer",
        "2024-08-06T00:25:58Z",
        "--exclude-newer-package",
        "jax=false",
        "--exclude-newer-package",
        "jaxlib=false",
        "--exclude-newer-package",
        "jax-cuda12-plugin=false",
        "--exclude-newer-package",
        "jax-cuda12-pjrt=false",
    ]


def test_the_release_s_pins_and_held_pins_are_constraints_never_requirements_of_their_own(tmp_path):
    old = Release("0.4.25", "0.4.25", pins=("numpy<2",))
    assert constraint_lines(old, None, ("optax==0.2.3",)) == [
        "jax==0.4.25",
        "jaxlib==0.4.25",
        "numpy<2",
        "optax==0.2.3",
    ]
    uv = FakeUv()
    ensure(
        request(hold=parse_hold(["Optax==0.2.3"])), tmp_path, times(tmp_path), runner=uv, uv=["uv"]
    )
    assert uv.compiled[0]["constraints.txt"] == "jax==0.4.31\njaxlib==0.4.31\noptax==0.2.3\n"
    assert "optax" not in uv.compiled[0]["requirements.in"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("optax>=0.2", "give one exact pin, PKG==VERSION"),
        ("optax==0.2.*", "give one exact pin"),
        ("optax[dev]==0.2.3", "give one exact pin"),
        ("optax==0.2.3; python_version>'3'", "give one exact pin"),
        (
            "jaxlib==0.4.31",
            "asks for jaxlib, but the release under test is the harness's to choose",
        ),
        ("./optax.whl", "is a URL or path"),
    ],
)
def test_a_hold_is_one_exact_pin_of_a_library(value, message):
    with pytest.raises(UsageError, match=message):
        parse_hold([value])


def test_two_holds_of_one_library_at_two_versions_are_refused_the_same_pin_twice_is_one(tmp_path):
    with pytest.raises(
        UsageError, match=r"^--hold optax==0\.2\.3 and --hold optax==0\.2\.2: one version"
    ):
        parse_hold(["optax==0.2.2", "Optax==0.2.3"])
    assert parse_hold(["optax==0.2.3", "Optax==0.2.3", "equinox==0.11.4"]) == (
        "optax==0.2.3",
        "equinox==0.11.4",
    )


def test_policies_are_as_of_or_newest():
    assert check_policy("as-of") == "as-of" and check_policy("newest") == "newest"
    with pytest.raises(
        UsageError, match="'latest' is not a resolution policy; choose as-of or newest"
    ):
        request(policy="latest")


def test_a_second_ensure_reuses_the_resolution_and_the_venv_without_uv_or_the_index(tmp_path):
    first = ensure(
        request(), tmp_path, times(tmp_path), runner=FakeUv(), uv=["uv"], clock=lambda: NOW
    )
    os.utime(first.venv / USED, (0, 0))
    uv = FakeUv()
    later = NOW + 30 * DAY  # the index listing is stale by then; the release's upload time is not
    again = ensure(
        request(), tmp_path, times(tmp_path, no_network), runner=uv, uv=["uv"], clock=lambda: later
    )
    assert again == first
    assert (again.venv / USED).stat().st_mtime > 0, "a venv taken as it is is stamped used"
    assert uv.calls == [["/usr/bin/python3.12", "-c", PYTHON_VERSION_PROBE]], (
        "only the interpreter's version"
    )


def test_a_removed_venv_is_made_again_from_the_kept_resolution(tmp_path):
    first = ensure(
        request(), tmp_path, times(tmp_path), runner=FakeUv(), uv=["uv"], clock=lambda: NOW
    )
    assert isinstance(first, ScriptEnv)
    shutil.rmtree(first.venv)
    uv = FakeUv()
    assert (
        ensure(request(), tmp_path, times(tmp_path), runner=uv, uv=["uv"], clock=lambda: NOW)
        == first
    )
    assert not uv.steps("pip compile") and len(uv.steps("venv")) == 1


def test_a_venv_a_process_found_damaged_is_synced_again_with_reinstall(tmp_path):
    """R8-19: a truncated module a process died on marks the venv; the next ensure installs it again
    (--reinstall), and clears the mark."""
    from harness.measure import venv_files

    first = ensure(
        request(), tmp_path, times(tmp_path), runner=FakeUv(), uv=["uv"], clock=lambda: NOW
    )
    assert isinstance(first, ScriptEnv)
    venv_files.mark(first.venv, ["equinox/_module.py"])
    uv = FakeUv()
    again = ensure(request(), tmp_path, times(tmp_path), runner=uv, uv=["uv"], clock=lambda: NOW)
    assert again == first
    [sync] = uv.steps("pip sync")
    assert "--reinstall" in sync and venv_files.marked(first.venv) == []


def test_a_resolution_that_may_still_change_is_asked_again_after_a_day(tmp_path):
    # jax 0.4.31 two days old: libraries may follow
    before_cutoff = datetime(2024, 8, 1, tzinfo=UTC).timestamp()
    for policy, clock in [("newest", NOW), ("as-of", before_cutoff)]:
        uv = FakeUv()
        for moment in (clock, clock + DAY / 2, clock + 2 * DAY):
            ensure(
                request(policy=policy),
                tmp_path,
                times(tmp_path),
                runner=uv,
                uv=["uv"],
                clock=lambda m=moment: m,
            )
        assert len(uv.steps("pip compile")) == 2, policy


def test_other_needs_another_interpreter_or_another_release_are_other_resolutions(tmp_path):
    uv = FakeUv()
    index = times(tmp_path)
    for each in [
        request(),
        request(["equinox>=0.11"]),
        request(release=Release("0.4.38", "0.4.38")),
    ]:
        ensure(each, tmp_path, index, runner=uv, uv=["uv"], clock=lambda: NOW)
    other_python = ScriptEnvRequest(RELEASE, collect(None, "", ["equinox"]), "/opt/python3.12")
    ensure(other_python, tmp_path, index, runner=uv, uv=["uv"], clock=lambda: NOW)
    assert len(uv.steps("pip compile")) == 4
    assert len(list((tmp_path / "script-resolutions").iterdir())) == 4


def test_one_set_under_two_policies_is_one_venv(tmp_path):
    uv = FakeUv()
    as_of = ensure(request(), tmp_path, times(tmp_path), runner=uv, uv=["uv"], clock=lambda: NOW)
    newest = ensure(
        request(policy="newest"), tmp_path, times(tmp_path), runner=uv, uv=["uv"], clock=lambda: NOW
    )
    assert isinstance(as_of, ScriptEnv) and isinstance(newest, ScriptEnv)
    assert as_of.venv == newest.venv and len(uv.steps("pip sync")) == 1
    assert (as_of.libraries.policy, newest.libraries.policy) == ("as-of", "newest")
    assert env_name(as_of.libraries.installed, "/usr/bin/python3.12", "3.12.1") == as_of.venv.name
    assert env_name(as_of.libraries.installed, "/usr/bin/python3.12", "3.12.2") != as_of.venv.name


def test_no_solution_is_not_installable_with_uv_s_reason_and_kept_as_an_answer(tmp_path):
    stderr = (UV_OUTPUT / "newest-equinox-0.13.8.txt").read_text()
    uv = FakeUv(compile_error=(1, stderr))
    for _ in range(2):
        outcome = ensure(
            request(["equinox==0.13.8"], "newest"), tmp_path, times(tmp_path), runner=uv, uv=["uv"]
        )
        assert isinstance(outcome, NotInstallable)
        assert outcome.reason.startswith(
            "Because equinox>=0.13.8 depends on one of: jax>=0.4.38,<0.7.0 or jax>0.7.1"
        )
    assert len(uv.steps("pip compile")) == 1, "the same question gets the same answer"
    assert not uv.steps("venv")
    assert outcome.cutoff is None


def test_an_index_that_cannot_be_reached_could_not_be_tried_and_is_asked_again(tmp_path):
    uv = FakeUv(compile_error=(2, (UV_OUTPUT / "unreachable.txt").read_text()))
    for _ in range(2):
        outcome = ensure(request(), tmp_path, times(tmp_path), runner=uv, uv=["uv"])
        assert isinstance(outcome, InstallFailed), "no answer about the set"
        assert outcome.reason == (
            "`uv pip compile` failed: Request failed after 3 retries in 7.3s: Failed to fetch: "
            "http://127.0.0.1:9/simple/jaxlib/: Connection refused (os error 111)"
        )
    assert len(uv.steps("pip compile")) == 2
    assert not list(tmp_path.glob("script-resolutions/*/resolution.json")), "nothing kept"


def test_a_failed_install_could_not_be_tried_and_is_tried_again_next_time(tmp_path):
    uv = FakeUv(fail={"pip sync": (1, (UV_OUTPUT / "sync-missing.txt").read_text())})
    outcome = ensure(request(), tmp_path, times(tmp_path), runner=uv, uv=["uv"])
    assert isinstance(outcome, InstallFailed) and outcome.stage == "install"
    assert outcome.reason == (
        "`uv pip sync` failed: Because there is no version of equinox==99.0 and you require "
        "equinox==99.0, we can conclude that your requirements are unsatisfiable."
    )
    assert not list(tmp_path.glob(f"script-env-*/{RECORD}"))
    uv.fail = None
    assert isinstance(ensure(request(), tmp_path, times(tmp_path), runner=uv, uv=["uv"]), ScriptEnv)
    assert len(uv.steps("venv")) == 1 and len(uv.steps("pip sync")) == 2, (
        "the venv made before is synced"
    )


def test_without_uv_or_a_working_interpreter_nothing_could_be_tried(tmp_path, monkeypatch):
    monkeypatch.setattr(script_envs, "uv_command", lambda: None)
    outcome = ensure(request(), tmp_path, times(tmp_path), runner=FakeUv())
    assert isinstance(outcome, InstallFailed) and outcome.reason.startswith("uv not found")
    broken = ScriptEnvRequest(RELEASE, Declared(), str(tmp_path / "no-python"))
    outcome = ensure(broken, tmp_path, times(tmp_path), uv=["uv"])
    assert isinstance(outcome, InstallFailed)
    assert outcome.reason == f"the interpreter {tmp_path}/no-python does not run"


def test_an_index_without_the_release_s_upload_time_is_one_clear_error(tmp_path):
    def without_times(url):
        document = json.loads(recorded_index(url))
        for entry in document["files"]:
            del entry["upload-time"]
        return json.dumps(document).encode()

    with pytest.raises(HarnessError, match=r"gives no upload time for jax 0\.4\.31"):
        ensure(request(), tmp_path, times(tmp_path, without_times), runner=FakeUv(), uv=["uv"])


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        (
            "asof-equinox-0.13.8.txt",
            "`equinox` was filtered by `exclude-newer` to only include packages uploaded before "
            "2024-08-06T00:25:58Z. The requested version, v0.13.8, was published at "
            "2026-05-05T10:03:41.673Z.",
        ),
        (
            "newest-equinox-0.13.8.txt",
            "Because equinox>=0.13.8 depends on one of: jax>=0.4.38,<0.7.0 or jax>0.7.1 and you "
            "require jax==0.4.31, we can conclude that your requirements and equinox>=0.13.8 are "
            "incompatible. And because you require equinox==0.13.8, we can conclude that your "
            "requirements are unsatisfiable.",
        ),
        (
            "not-found.txt",
            "Because no-such-package-for-the-harness-xyz was not found in the package registry and "
            "you require no-such-package-for-the-harness-xyz, we can conclude that your "
            "requirements are unsatisfiable.",
        ),
    ],
)
def test_uv_s_reason_is_its_explanation_in_one_line(name, reason):
    assert uv_reason((UV_OUTPUT / name).read_text()) == reason


def test_uv_s_reason_in_its_older_layout_a_long_one_and_no_error_line():
    older = (
        "  × No solution found when resolving dependencies:\n  ╰─▶ Because you require "
        "numpy==2.0.1 and numpy<2,\n"
    )
    older += "      we can conclude that your requirements are unsatisfiable.\n"
    assert uv_reason(older) == (
        "Because you require numpy==2.0.1 and numpy<2, we can conclude that your requirements are "
        "unsatisfiable."
    )
    long = uv_reason("error: No solution found\n  cause: " + "Because x " * 100)
    assert len(long) == 300 and long.endswith("…")
    assert uv_reason("Killed\n") == "Killed" and uv_reason("") == "no output"


def test_pins_are_sorted_normalized_and_nothing_else():
    assert parse_pins("# comment\nTyping_Extensions==4.12.2\n\nequinox==0.11.4  # via -r\n") == (
        "equinox==0.11.4",
        "typing-extensions==4.12.2",
    )
    with pytest.raises(ValueError, match=r"not an exact pin: '-e \.'"):
        parse_pins("-e .\n")


def test_a_resolved_set_answers_versions_by_canonical_name_and_hashes_its_pins_alone():
    resolved = script_envs.libraries(request(), parse_pins(AS_OF_SET), CUTOFF)
    newest = script_envs.libraries(request(policy="newest"), resolved.installed, None)
    assert resolved.version_of("Ml_Dtypes") == "0.4.0" and resolved.version_of("optax") is None
    assert resolved.sha256 == newest.sha256, "the set's, whatever the policy"
    assert resolved.cutoff == CUTOFF.isoformat() and resolved.declared == ("equinox",)
    env = ScriptEnv(
        Path("/v/script-env-0123456789abcdef"), "/usr/bin/python3.12", "3.12.1", resolved
    )
    assert env.interpreter == Path("/v/script-env-0123456789abcdef/bin/python")


# Real uv and the real package index (PyPI, or UV_DEFAULT_INDEX/UV_INDEX_URL/PIP_INDEX_URL): small
# packages beside jax/jaxlib 0.4.31, which uv caches.  One venv is installed; the other outcomes
# need a resolution only.


def python312() -> str:
    """Python 3.12 as the noxfile finds it: pyenv's own copy (its shims hide it), else on PATH."""
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = glob.glob(os.path.join(root, "versions", "3.12.*", "bin", "python3.12"))
    if found:
        return max(found, key=lambda path: version_key(path.split(os.sep)[-3]))
    return shutil.which("python3.12") or pytest.skip("no Python 3.12 here")


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    if uv_command() is None:
        pytest.skip("uv is not installed")
    folder = tmp_path_factory.mktemp("script-envs")
    return folder, UploadTimes(folder / "index-times"), python312()


@pytest.fixture(scope="module")
def as_of_env(real):
    """The first ensure of equinox on jax 0.4.31 as of its date: resolved and installed from
    scratch."""
    folder, index, python = real
    return ensure(ScriptEnvRequest(RELEASE, collect(None, "", ["equinox"]), python), folder, index)


@pytest.mark.venv
def test_real_equinox_on_jax_0_4_31_as_of_its_date_is_the_equinox_of_that_summer(as_of_env):
    assert isinstance(as_of_env, ScriptEnv), as_of_env
    resolved = as_of_env.libraries
    assert resolved.cutoff == CUTOFF.isoformat()
    assert resolved.version_of("jax") == "0.4.31" and resolved.version_of("jaxlib") == "0.4.31"
    # 0.11.4 (2024-04) is the newest equinox uploaded before the cutoff; 0.11.5 came out after it.
    assert Version("0.11.0") <= Version(resolved.version_of("equinox")) < Version("0.11.5")
    shown = subprocess.run(
        [
            str(as_of_env.interpreter),
            "-c",
            "import equinox, jax; print(equinox.__version__, jax.__version__)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout.split()
    assert shown == [resolved.version_of("equinox"), "0.4.31"]


@pytest.mark.venv
def test_real_second_ensure_is_a_reuse_without_uv_or_the_index(real, as_of_env):
    folder, index, python = real

    def interpreter_only(command, cwd):
        assert command[1:] == ["-c", PYTHON_VERSION_PROBE], f"ran {command}"
        return script_envs.run(command, cwd)

    offline = UploadTimes(index.cache, fetcher=no_network)
    same = ScriptEnvRequest(RELEASE, collect(None, "", ["equinox"]), python)
    again = ensure(same, folder, offline, runner=interpreter_only)
    assert again == as_of_env


@pytest.mark.venv
def test_real_newest_resolves_a_newer_or_equal_equinox_on_the_same_release(real, as_of_env):
    folder, index, python = real
    newest = ScriptEnvRequest(RELEASE, collect(None, "", ["equinox"]), python, policy="newest")
    version = script_envs.python_version_of(python, script_envs.run, folder)
    pins = resolve(newest, folder, None, version, index.index, uv=uv_command())
    assert not isinstance(pins, NotInstallable), pins
    newer = script_envs.libraries(newest, pins, None).version_of("equinox")
    assert Version(newer) >= Version(as_of_env.libraries.version_of("equinox"))
    assert Version(newer) < Version("0.13"), (
        "equinox 0.13 asks for jax >= 0.4.38: the constraint holds"
    )


@pytest.mark.venv
@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("newest", "Because equinox>=0.13.8 depends on one of: jax>=0.4.38"),
        (
            "as-of",
            "`equinox` was filtered by `exclude-newer` to only include packages uploaded before "
            "2024-08-06",
        ),
    ],
)
def test_real_an_impossible_pin_is_not_installable_with_one_line_of_reason(real, policy, expected):
    folder, index, python = real
    impossible = ScriptEnvRequest(
        RELEASE, collect(None, "", ["equinox==0.13.8"]), python, policy=policy
    )
    outcome = ensure(impossible, folder, index)
    assert isinstance(outcome, NotInstallable)
    assert (
        outcome.reason.startswith(expected)
        and "\n" not in outcome.reason
        and len(outcome.reason) <= 300
    )
