"""The options whose defaults differ between two releases: read from jax's source and from XLA's own
listing."""

import pytest

import noxfile
from harness.explain.defaults import (
    JAX,
    XLA,
    Change,
    changes,
    declared_options,
    jax_options,
    parse_xla_listing,
    relevant,
    site_packages,
    xla_listing,
)
from harness.install import venvs
from harness.pins import PROFILE_BY_NAME, RELEASE_BY_VERSION, index_release
from tests.conftest import FIXTURES, REPO

# The start of what jaxlib 0.4.31 printed with XLA_FLAGS=--help (its abort line first), four flags
# of 189.
LISTING = (FIXTURES / "defaults" / "xla-help-0.4.31.txt").read_text()


def test_xla_s_listing_gives_each_flag_its_default_and_type():
    found = parse_xla_listing(LISTING)
    assert set(found) == {
        "xla_backend_optimization_level",
        "xla_disable_hlo_passes",
        "xla_gpu_ftz",
        "xla_cpu_use_thunk_runtime",
    }
    thunk = found["xla_cpu_use_thunk_runtime"]
    assert (thunk.default, thunk.type, thunk.kind) == ("false", "bool", XLA)
    assert thunk.help == "Use Thunk-based runtime for the CPU backend."
    assert (
        found["xla_disable_hlo_passes"].default == '""'
        and found["xla_backend_optimization_level"].type == "int32"
    )


def test_jax_s_declarations_give_each_option_its_default_whatever_the_spelling():
    source = """
_ASYNC = config.bool_flag(name="jax_cpu_enable_async_dispatch", default=True, help="If False, run inline.")
enable_x64 = bool_state('jax_enable_x64', False, help='64-bit types')
_OLD = config.define_enum_state(name='jax_default_matmul_precision', enum_values=['a'], default=None, help='')
_ENV = config.bool_state(name='jax_native_serialization', default=bool_env('JAX2TF_NATIVE', True), help='x')
_EXPR = config.bool_state(name='jax_dynamic_shapes', default=bool(os.getenv('JAX_DYNAMIC_SHAPES', '')), help='')
not_an_option = config.bool_flag(name="xla_something", default=True)
"""  # noqa: E501
    found = declared_options(source)
    assert {name: option.default for name, option in found.items()} == {
        "jax_cpu_enable_async_dispatch": "True",
        "jax_enable_x64": "False",
        "jax_default_matmul_precision": "None",
        "jax_native_serialization": "True",
        "jax_dynamic_shapes": "bool(os.getenv('JAX_DYNAMIC_SHAPES', ''))",
    }
    assert (
        found["jax_cpu_enable_async_dispatch"].kind == JAX
        and found["jax_enable_x64"].help == "64-bit types"
    )


def test_changed_added_and_removed_options_and_those_of_other_platforms():
    before = parse_xla_listing(LISTING)
    edited = LISTING.replace("thunk_runtime=false", "thunk_runtime=true ")
    after = parse_xla_listing(edited.replace("--xla_gpu_ftz=false", "--xla_gpu_ftz=true"))
    del after["xla_disable_hlo_passes"]
    after["xla_cpu_new"] = parse_xla_listing("\t--xla_cpu_new=1\tint32\tnew here\n")["xla_cpu_new"]
    found = changes(before, after)
    assert [change.text() for change in found] == [
        "xla_cpu_new: added (default 1)",
        "xla_cpu_use_thunk_runtime: false → true",
        'xla_disable_hlo_passes: removed (default was "")',
        "xla_gpu_ftz: false → true",
    ]
    assert [change.name for change in relevant(found, "cpu")] == [
        "xla_cpu_new",
        "xla_cpu_use_thunk_runtime",
        "xla_disable_hlo_passes",
    ], "a GPU flag cannot matter on a CPU profile"
    assert Change("jax_x", JAX, "False", "True").text() == "jax_x: False → True"


def test_a_listing_that_does_not_print_says_why_in_one_line(tmp_path):
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'Segmentation fault (core dumped)' >&2\nexit 139\n")
    fake.chmod(0o755)
    said = xla_listing(fake, {})
    assert (
        said == "XLA's flags could not be listed (exit code 139): Segmentation fault (core dumped)"
    )
    assert xla_listing(tmp_path / "missing", {}).startswith("XLA's flags could not be listed: ")


@pytest.mark.releases
def test_real_releases_0_4_31_and_0_4_33_changed_the_thunk_runtime_and_async_dispatch(tmp_path):
    """From the releases themselves: jaxlib 0.4.33 made the thunk runtime XLA:CPU's default; jax
    0.4.33 made async dispatch on CPU the default."""
    listed, declared = {}, {}
    for version in ("0.4.31", "0.4.33"):
        release = RELEASE_BY_VERSION.get(version) or index_release(version, version)
        env = venvs.release_env(
            release, PROFILE_BY_NAME["cpu"], noxfile.interpreter(release.python), REPO / ".nox"
        )
        assert venvs.ensure(env) is None
        found = xla_listing(env.interpreter, {"JAX_PLATFORMS": "cpu"})
        assert isinstance(found, dict), found
        listed[version] = found
        declared[version] = jax_options(site_packages(env.venv))
    xla = {change.name: change for change in changes(listed["0.4.31"], listed["0.4.33"])}
    assert xla["xla_cpu_use_thunk_runtime"].text() == "xla_cpu_use_thunk_runtime: false → true"
    jax = {change.name: change for change in changes(declared["0.4.31"], declared["0.4.33"])}
    assert (
        jax["jax_cpu_enable_async_dispatch"].text() == "jax_cpu_enable_async_dispatch: False → True"
    )
    assert len(listed["0.4.31"]) > 150, "every flag, not a few"
