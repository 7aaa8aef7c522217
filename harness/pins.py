"""The release table and the profile table: the only place where JAX versions and device flags are
listed; the noxfile builds its sessions from them, and releases found on the index are pinned by the
same rules (``index_release``).  Standard library only: the noxfile imports it.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field

from harness.units import version_key


@dataclass(frozen=True)
class Release:
    """A jax release with the jaxlib it installs with, its Python and extra pins."""

    jax: str
    jaxlib: str
    # Python 3.12 has wheels of every release from jax 0.4.20 to 0.12.0.1 (0.4.20–0.4.30 need Python
    # ≥ 3.9, 0.4.31–0.6.2 ≥ 3.10, 0.7.0–0.10.2 ≥ 3.11, 0.11.0 on ≥ 3.12): one interpreter for the
    # table.
    python: str = "3.12"
    pins: tuple[str, ...] = ()  # e.g. "numpy<2" for jaxlib older than 0.4.26
    note: str = ""

    def requirements(self, profile: Profile | None = None) -> list[str]:
        """What to install for this release, under ``profile`` where it wants JAX's own build."""
        if profile and profile.jax_extras:
            # The extra pins jaxlib and the CUDA plugin to the builds JAX released together, which
            # is not always the table's jaxlib (jax[cuda12]==0.4.35 wants jaxlib 0.4.34): left to
            # it.
            return [f"jax[{','.join(profile.jax_extras)}]=={self.jax}", *self.pins]
        return [f"jax=={self.jax}", f"jaxlib=={self.jaxlib}", *self.pins]


# Oldest first.  0.4.32 (jax and jaxlib) is yanked and left out: it installs only with an exact
# pin.  jax 0.4.37 and 0.5.2 would pair with jaxlib 0.4.36 and 0.5.1 (there is no jaxlib of
# their own number).
RELEASES = [
    Release("0.4.26", "0.4.26", note="the release in the sharding discussion"),
    Release("0.4.30", "0.4.30"),
    Release(
        "0.4.31",
        "0.4.31",
        note="last before the XLA:CPU thunk runtime and CPU async dispatch by default",
    ),
    Release("0.4.33", "0.4.33", note="thunk runtime; scan's while loop carries known_trip_count"),
    Release("0.4.35", "0.4.35"),
    Release("0.4.38", "0.4.38", note="last with cost_analysis() returning a list"),
    Release("0.5.3", "0.5.3"),
    Release("0.6.2", "0.6.2", note="last with PositionalSharding"),
    Release("0.7.2", "0.7.2"),
    Release("0.8.3", "0.8.3", note="pmap implemented as jit(shard_map) from 0.8.0"),
    Release("0.9.2", "0.9.2"),
    Release("0.10.2", "0.10.2"),
    Release("0.11.2", "0.11.2"),
    Release("0.12.0.1", "0.12.0.1"),
]
DEFAULT_RELEASE = RELEASES[-1]
# jaxlib older than this fails with NumPy 2 (jax 0.4.20 fails on import); releases found on the
# index pin numpy<2 below it.
FIRST_JAXLIB_FOR_NUMPY2 = "0.4.26"


# The device classes of profiles: the host's CPU, which runs a case at sizes scaled to two cores, or
# an accelerator (GPU, TPU), which runs the discussions' own sizes.
HOST, ACCELERATOR = "host", "accelerator"


@dataclass(frozen=True)
class Profile:
    """Device flags set before JAX starts, what the device needs, the releases it suits."""

    name: str
    env: dict[str, str] = field(default_factory=dict)
    description: str = ""
    first_release: str | None = None
    last_release: str | None = None
    # The hardware it needs here (else its sessions are skipped) and on CI: "cpu", "gpu" (an NVIDIA
    # GPU, a GPU runner) or "tpu" (a Cloud TPU chip; no CI runner has one).
    kind: str = "cpu"
    jax_extras: tuple[str, ...] = ()  # installs jax[EXTRA]==V, e.g. the CUDA build of each release

    @property
    def device(self) -> str:
        """``HOST`` or ``ACCELERATOR``: what picks a case's sizes, the flops budget and which claims
        are read against the discussions' own figures."""
        return HOST if self.kind == "cpu" else ACCELERATOR

    def applies_to(self, release: Release) -> bool:
        return self.applies_to_version(release.jax)

    def applies_to_version(self, jax: str) -> bool:
        key = version_key(jax)
        if self.first_release and key < version_key(self.first_release):
            return False
        return not (self.last_release and key > version_key(self.last_release))


GPU_ENV = {
    "JAX_PLATFORMS": "cuda,cpu",
    "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
    "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
}
PROFILES = [
    Profile("cpu", {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": ""}, "one CPU device"),
    Profile(
        "cpu8",
        # Works on every release; it must be set before JAX starts its backend, hence one process
        # per profile.
        {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=8"},
        "eight virtual CPU devices sharing the machine's cores, for the cases that use several",
    ),
    Profile(
        "cpu-classic",
        {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_cpu_use_thunk_runtime=false"},
        # Before 0.4.29 XLA does not know the flag and aborts the process; on 0.7.0–0.7.1 it makes
        # every execution fail ("CpuExecutable has no thunks"); from 0.7.2 it is ignored with a
        # warning.
        "XLA:CPU's pre-thunk runtime: unknown flag before 0.4.29, broken in 0.7.0–0.7.1, ignored "
        "later",
        first_release="0.4.29",
        last_release="0.6.2",
    ),
    # GPU profiles install JAX's CUDA build from PyPI: jax[cudaNN]==V brings jaxlib, the
    # jax-cudaNN-plugin/-pjrt wheels of that release and NVIDIA's CUDA libraries as wheels
    # (checked with `uv pip compile` for Python 3.12 on manylinux_2_28, for every release in
    # the table).  Older releases shipped CUDA only as jaxlib==V+cuda12.cudnnNN wheels on
    # Google's own index, which the harness does not use: first_release keeps them out.
    # JAX_PLATFORMS=cuda makes a missing or broken CUDA backend an error instead of a
    # silent run on the CPU.  Without XLA_PYTHON_CLIENT_PREALLOCATE=false each case process
    # would reserve 75 % of the GPU's memory at start; with it, a case takes what it uses (the
    # allocation falls in the cold first call, timed apart) and a shared GPU stays usable.
    # The host platform is listed after the GPU, with eight devices: the GPU stays the default
    # backend and one that fails to start is still an error (one not visible at all JAX passes
    # over, which the GPU sessions rule out first: harness.host.gpu), and beside a lone GPU a case
    # that needs several devices (sharding_scaling) runs on those, as its discussion did on CPU.
    Profile(
        "cuda12",
        dict(GPU_ENV),
        "one NVIDIA GPU with JAX's CUDA 12 build, jax[cuda12] from PyPI",
        # 0.4.23 resolves from PyPI alone (the oldest checked); 0.4.20 has no cuda12 extra at all,
        # so pip would quietly install the CPU jaxlib.
        first_release="0.4.23",
        kind="gpu",
        jax_extras=("cuda12",),
    ),
    Profile(
        "cuda13",
        dict(GPU_ENV),
        "one NVIDIA GPU with JAX's CUDA 13 build, jax[cuda13] from PyPI (needs a driver for CUDA "
        "13)",
        first_release="0.7.2",  # the first jax-cuda13-plugin on PyPI
        kind="gpu",
        jax_extras=("cuda13",),
    ),
    # jax[tpu]==V pins the libtpu released with V, from PyPI. Before 0.5.1 the extra names a
    # libtpu-nightly build PyPI does not have (it lived on Google's libtpu_releases page, which the
    # harness does not use): `uv pip compile` for Python 3.12 on manylinux_2_31 resolves 0.5.1
    # (libtpu 0.0.10) and every later release in the table, and fails on 0.5.0 and older. libtpu's
    # newest wheels need glibc 2.31 (a Cloud TPU VM has it). Beside the chip, the host platform with
    # eight devices, as the GPU profiles have, for the cases that need several.
    Profile(
        "tpu",
        {"JAX_PLATFORMS": "tpu,cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=8"},
        "one Google Cloud TPU chip with jax[tpu] (its libtpu) from PyPI",
        first_release="0.5.1",
        kind="tpu",
        jax_extras=("tpu",),
    ),
]
DEFAULT_PROFILE = PROFILES[0]
RELEASE_BY_VERSION = {r.jax: r for r in RELEASES}
PROFILE_BY_NAME = {p.name: p for p in PROFILES}


def device_class(label: str) -> str:
    """The device class of the profile of this label (one outside the table is the host's)."""
    return PROFILE_BY_NAME.get(label, DEFAULT_PROFILE).device


def hardware(label: str) -> str:
    """``cpu``, ``gpu`` or ``tpu`` of the profile of this label (one outside the table: ``cpu``)."""
    return PROFILE_BY_NAME.get(label, DEFAULT_PROFILE).kind


# Every (release, profile) pair a repro session runs, oldest release first.
MATRIX = [(r, p) for r in RELEASES for p in PROFILES if p.applies_to(r)]
# The oldest and newest releases: shims are tested and the quick catalogue runs on both in CI.
EDGES = (RELEASES[0], RELEASES[-1])


# How a script's own libraries are resolved for a release (``--deps``): as of the release's upload
# date (the default), or their newest; the installer (``harness.install.script_envs``) and the
# sessions' view of a command line (``harness.cli.sessions``) both read them here.
AS_OF, NEWEST = "as-of", "newest"
POLICIES = (AS_OF, NEWEST)


# Set by the installed ``jax-repro`` in the nox it drives (``harness.commands.packaged_sessions``):
# the sessions work in the user's folder, and a command offered to the user is typed as
# ``jax-repro NAME``.
DRIVEN = "JAX_REPRO_DRIVEN"


def session_words(name: str) -> list[str]:
    """``nox -s NAME --`` in a clone, ``jax-repro NAME`` where installed."""
    return ["jax-repro", name] if os.environ.get(DRIVEN) else ["nox", "-s", name, "--"]


def nox_profile_words(label: str) -> list[str]:
    """``--profile LABEL`` for a ``nox -s`` command where nox knows the profile."""
    return ["--profile", label] if label in PROFILE_BY_NAME else []


def interpreter(version: str) -> str:
    """pyenv's own interpreter for Python ``version`` where it has one, else the bare version: pyenv
    shims answer "command not found" for versions not activated, and nox would skip the session."""
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", f"python{version}"))
    return max(found, key=version_key) if found else version


def index_release(jax: str, jaxlib: str) -> Release:
    """A release found on the index, pinned by the table's rules (its entry where it has one)."""
    listed = RELEASE_BY_VERSION.get(jax)
    if listed and listed.jaxlib == jaxlib:
        return listed
    pins = ("numpy<2",) if version_key(jaxlib) < version_key(FIRST_JAXLIB_FOR_NUMPY2) else ()
    return Release(jax, jaxlib, pins=pins)


def install_args(release: Release, profile: Profile | None = None) -> list[str]:
    """What a release's environment installs: the harness, editable, and the pinned release."""
    return ["-e", ".", *release.requirements(profile)]
