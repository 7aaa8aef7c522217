"""The release and profile tables: the only place versions and flags are listed; the interpreter
a Python version names: pyenv's copy of it, else the bare version."""

import shutil
import subprocess
import sys

import pytest

from harness import pins
from harness.pins import (
    ACCELERATOR,
    DEFAULT_PROFILE,
    DEFAULT_RELEASE,
    EDGES,
    HOST,
    MATRIX,
    PROFILE_BY_NAME,
    PROFILES,
    RELEASE_BY_VERSION,
    RELEASES,
    Release,
    device_class,
    hardware,
    index_release,
    install_args,
    interpreter,
    nox_profile_words,
)
from harness.units import version_key


def test_releases_are_unique_ordered_and_cover_the_discussion_release():
    versions = [r.jax for r in RELEASES]
    assert versions == sorted(versions, key=version_key)
    assert len(set(versions)) == len(versions)
    assert versions[0] == "0.4.26"
    assert "0.4.32" not in versions, "0.4.32 is yanked"
    assert DEFAULT_RELEASE is RELEASES[-1]
    assert EDGES[0] is RELEASES[0] and EDGES[1] is RELEASES[-1]


def test_requirements_pin_exactly():
    assert Release("0.4.37", "0.4.36", pins=("numpy<2",)).requirements() == [
        "jax==0.4.37",
        "jaxlib==0.4.36",
        "numpy<2",
    ]


def test_a_gpu_profile_installs_the_cuda_build_of_the_release():
    release = RELEASE_BY_VERSION["0.4.35"]
    assert release.requirements(PROFILE_BY_NAME["cpu"]) == ["jax==0.4.35", "jaxlib==0.4.35"]
    # jax[cuda12]==0.4.35 pins jaxlib 0.4.34 itself: a jaxlib pin of ours would make it
    # unresolvable.
    assert release.requirements(PROFILE_BY_NAME["cuda12"]) == ["jax[cuda12]==0.4.35"]
    assert install_args(release, PROFILE_BY_NAME["cuda12"]) == ["-e", ".", "jax[cuda12]==0.4.35"]


def test_gpu_profiles_pin_the_gpu_and_apply_from_their_first_wheels_on_pypi():
    for name, first in (("cuda12", "0.4.23"), ("cuda13", "0.7.2")):
        profile = PROFILE_BY_NAME[name]
        assert profile.kind == "gpu" and profile.env["JAX_PLATFORMS"] == "cuda,cpu"
        assert profile.env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
        assert [r.jax for r in RELEASES if profile.applies_to(r)] == [
            r.jax for r in RELEASES if version_key(r.jax) >= version_key(first)
        ]
        assert not profile.applies_to(Release("0.4.20", "0.4.20")), (
            "before the plugin: Google's index only"
        )
        assert profile.applies_to_version(first) and not profile.applies_to_version("0.4.20")
    assert {p.kind for p in PROFILES} == {"cpu", "gpu", "tpu"}


def test_the_tpu_profile_installs_jax_tpu_from_its_first_release_with_libtpu_on_pypi():
    tpu = PROFILE_BY_NAME["tpu"]
    assert tpu.kind == "tpu" and tpu.device == ACCELERATOR
    assert tpu.env["JAX_PLATFORMS"] == "tpu,cpu", "the chip first, the host's CPU beside it"
    assert RELEASE_BY_VERSION["0.5.3"].requirements(tpu) == ["jax[tpu]==0.5.3"]
    assert [r.jax for r in RELEASES if tpu.applies_to(r)] == [
        r.jax for r in RELEASES if version_key(r.jax) >= version_key("0.5.1")
    ]
    assert not tpu.applies_to_version("0.5.0"), "its extra names a libtpu-nightly PyPI lacks"


def test_sizes_follow_the_device_class_of_the_profile_never_its_hardware():
    assert {p.name: p.device for p in PROFILES if p.device == ACCELERATOR} == {
        "cuda12": ACCELERATOR,
        "cuda13": ACCELERATOR,
        "tpu": ACCELERATOR,
    }
    assert device_class("cpu8") == device_class("default") == HOST
    assert device_class("tpu") == device_class("cuda12") == ACCELERATOR
    assert (hardware("tpu"), hardware("cuda13"), hardware("mine")) == ("tpu", "gpu", "cpu")


def test_profiles_declare_where_they_apply():
    assert DEFAULT_PROFILE.name == "cpu"
    assert {"cpu", "cpu8"} <= set(PROFILE_BY_NAME)
    assert "device_count=8" in PROFILE_BY_NAME["cpu8"].env["XLA_FLAGS"]
    classic = PROFILE_BY_NAME["cpu-classic"]
    applies = [r.jax for r in RELEASES if classic.applies_to(r)]
    assert applies and all(
        version_key("0.4.29") <= version_key(v) <= version_key("0.6.2") for v in applies
    )
    assert all(PROFILE_BY_NAME["cpu"].applies_to(r) for r in RELEASES)


def test_the_matrix_pairs_each_release_with_the_profiles_that_apply():
    assert len(MATRIX) == sum(p.applies_to(r) for r in RELEASES for p in PROFILES)
    assert (RELEASE_BY_VERSION["0.4.26"], PROFILE_BY_NAME["cpu-classic"]) not in MATRIX
    assert (RELEASE_BY_VERSION["0.4.30"], PROFILE_BY_NAME["cpu-classic"]) in MATRIX


def test_index_releases_are_pinned_by_the_tables_rules():
    assert index_release("0.4.26", "0.4.26") is RELEASE_BY_VERSION["0.4.26"]
    assert index_release("0.4.37", "0.4.36").requirements() == ["jax==0.4.37", "jaxlib==0.4.36"]
    assert index_release("0.4.25", "0.4.25").pins == ("numpy<2",), (
        "jaxlib below 0.4.26 needs NumPy 1"
    )
    assert install_args(RELEASES[0]) == ["-e", ".", "jax==0.4.26", "jaxlib==0.4.26"]


def test_a_follow_up_nox_command_names_only_a_profile_nox_knows():
    assert nox_profile_words("cpu8") == ["--profile", "cpu8"]
    assert nox_profile_words("default") == [] and nox_profile_words("my-box") == []


def test_a_command_offered_to_the_user_is_typed_as_they_run_the_sessions(monkeypatch):
    monkeypatch.delenv(pins.DRIVEN, raising=False)
    assert pins.session_words("bisect") == ["nox", "-s", "bisect", "--"]
    monkeypatch.setenv(pins.DRIVEN, "1")
    assert pins.session_words("bisect") == ["jax-repro", "bisect"]


def test_pyenv_s_copy_of_a_version_is_taken_the_latest_of_its_patches(tmp_path, monkeypatch):
    for patch in ("3.12.2", "3.12.4", "3.11.9"):
        python = tmp_path / "versions" / patch / "bin" / f"python{patch.rsplit('.', 1)[0]}"
        python.parent.mkdir(parents=True)
        python.touch()
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    assert interpreter("3.12") == str(tmp_path / "versions" / "3.12.4" / "bin" / "python3.12")


def test_a_version_pyenv_lacks_is_left_for_nox_to_find(tmp_path, monkeypatch):
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path))
    assert interpreter("3.13") == "3.13"


@pytest.mark.venv
@pytest.mark.parametrize("jax", ["0.5.1", pins.RELEASES[-1].jax])
def test_the_tpu_profiles_requirement_resolves_on_the_index_with_its_libtpu(jax):
    """The oldest release the profile takes, and the table's newest: ``jax[tpu]==V`` resolves from
    the package index alone, for a Cloud TPU VM's Python and glibc (resolution only, nothing is
    installed); the profile leaves out the release before its oldest."""
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH")
    tpu = PROFILE_BY_NAME["tpu"]
    assert tpu.applies_to_version(jax) and not tpu.applies_to_version("0.5.0")
    where = ["--python-version", "3.12", "--python-platform", "x86_64-manylinux_2_31"]
    command = [uv, "pip", "compile", "--python", sys.executable, *where, "--no-header", "-"]
    wanted = "\n".join(index_release(jax, jax).requirements(tpu))
    done = subprocess.run(
        command, input=wanted, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    pinned = dict(line.split("==") for line in done.stdout.splitlines() if "==" in line)
    assert pinned["jax"] == pinned["jaxlib"] == jax
    assert "libtpu" in pinned, done.stdout
