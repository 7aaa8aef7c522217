"""``flags``'s command line: each side's flags checked, set as the case process reads them, each
side a cell of its own."""

import json

import pytest

from harness.cli.flags import FlagsOptions, flag_set
from harness.cli.parser import validate
from harness.errors import UsageError
from harness.main import main
from harness.measure.script_hook import JAX_CONFIG


def checked(tmp_path, *words) -> FlagsOptions:
    _, options = validate(
        ["flags", "--case", "async_dispatch", "--results", str(tmp_path / "r"), *words]
    )
    assert isinstance(options, FlagsOptions)
    return options


def test_the_same_flags_twice_are_two_sides_of_one_release_stored_apart_compared_until_decided(
    tmp_path,
):
    options = checked(tmp_path, "--a", "jax_enable_x64=true", "--b", "jax_enable_x64=true")
    a, b = options.run.sides
    assert a.release == b.release and a.env == b.env
    assert a.profile == f"default-a-{options.a.digest()}" != b.profile
    assert options.a.digest() == options.b.digest()
    assert options.run.settings.decide == "changes", "two sides: looks while a comparison is open"
    assert options.run.resume == "force", "both sides measured together, none taken from before"
    assert not (tmp_path / "r").exists(), "checking measures nothing"


def test_a_jax_option_is_set_by_config_update_and_a_list_of_flags_is_added_to(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
    options = checked(
        tmp_path,
        "--b",
        "XLA_FLAGS=--xla_cpu_enable_fast_math=true",
        "--b",
        "XLA_FLAGS=--xla_backend_optimization_level=1",
        "--b",
        "jax_default_matmul_precision=highest",
        "--b",
        "jax_enable_x64=True",
        "--b",
        "JAX_TRACEBACK_FILTERING=off",
    )
    a, b = options.run.sides
    assert a.env == {}, "no flags: the environment as it is"
    assert b.env["XLA_FLAGS"] == (
        "--xla_force_host_platform_device_count=8 --xla_cpu_enable_fast_math=true "
        "--xla_backend_optimization_level=1"
    )
    assert json.loads(b.env[JAX_CONFIG]) == {
        "jax_default_matmul_precision": "highest",
        "jax_enable_x64": True,
    }
    assert b.env["JAX_TRACEBACK_FILTERING"] == "off"
    assert b.label.startswith("B: XLA_FLAGS=--xla_cpu_enable_fast_math=true")


def test_other_flags_are_other_cells_and_the_same_flags_the_same_cell(tmp_path):
    first = flag_set("B", ["jax_default_matmul_precision=highest"])
    assert first.digest() == flag_set("B", ["jax_default_matmul_precision=highest"]).digest()
    assert first.digest() != flag_set("B", ["jax_default_matmul_precision=high"]).digest()


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        ("XLA_FLAGS", "a flag is NAME=VALUE"),
        ("=1", "a flag is NAME=VALUE"),
        ("XLA_FLAGS=", "a flag is NAME=VALUE"),
        ("--xla_cpu_enable_fast_math=true", "an XLA flag goes in XLA_FLAGS"),
        ("PATH=/tmp", "PATH is not a flag the harness sets"),
        ("LD_PRELOAD=/tmp/x.so", "LD_PRELOAD is not a flag the harness sets"),
        ("Jax_enable_x64=1", "is not a flag the harness sets"),
        ("HARNESS_JAX_CONFIG={}", "is not a flag the harness sets"),
        ("XLA_FLAGS=a\nb", "one line"),
    ],
)
def test_a_malformed_flag_is_one_line_naming_it(tmp_path, flag, said):
    with pytest.raises(UsageError, match=said):
        checked(tmp_path, f"--b={flag}")  # as a value starting with - is given


def test_a_variable_or_option_given_twice_on_one_side_is_refused(tmp_path):
    for flag in ("JAX_PLATFORMS=cpu", "jax_enable_x64=1"):
        with pytest.raises(UsageError, match="given twice on side A"):
            checked(tmp_path, "--a", flag, "--a", flag)


def test_a_bad_flag_exits_2_with_one_line_and_nothing_measured(tmp_path, capsys):
    code = main(["flags", "--case", "async_dispatch", "--results", str(tmp_path), "--b", "PATH=x"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("harness: error: --b 'PATH=x'")
    assert list(tmp_path.iterdir()) == []


def test_a_side_s_flags_are_shown_and_stored_without_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", "/home/someone")
    options = checked(tmp_path, "--b=XLA_FLAGS=--xla_dump_to=/home/someone/dump")
    _, b = options.run.sides
    assert b.env["XLA_FLAGS"] == "--xla_dump_to=/home/someone/dump", "the flag itself as given"
    assert options.b.text() == "XLA_FLAGS=--xla_dump_to=~/dump"
    assert "/home/someone" not in b.label
