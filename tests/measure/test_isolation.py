import pytest

from harness import main as cli
from harness.errors import UsageError
from harness.measure.isolation import available_cpus, check_affinity, parse_cpu_list
from tests.conftest import FIXTURES


@pytest.mark.parametrize(
    ("text", "cpus"), [("0", [0]), ("0,1", [0, 1]), ("1,0,1", [0, 1]), ("0-2,5", [0, 1, 2, 5])]
)
def test_cpu_lists_as_pyperf_takes_them(text, cpus):
    assert parse_cpu_list(text) == cpus


@pytest.mark.parametrize(
    "text", ["", "a", "0,", "-1", "1-", "2-1", "0.5", "0-1-2", "１", "0-²", "1_0"]
)
def test_malformed_cpu_lists_are_refused(text):
    with pytest.raises(ValueError):
        parse_cpu_list(text)


def test_cpus_this_process_may_not_use_are_refused():
    available = available_cpus()
    assert available, "Linux tells"
    assert check_affinity(available[:1]) == available[:1]
    with pytest.raises(UsageError, match=r"CPU 4096 is not available here \(available: "):
        check_affinity([available[0], 4096])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("8000", "CPU 8000 is not available"),
        ("x", "is not a CPU list"),
        ("0-99999999999", "is above 8191"),
    ],
)
def test_the_command_line_refuses_a_bad_affinity_with_one_line(tmp_path, capsys, value, message):
    argv = [
        "run",
        "--cases-dir",
        str(FIXTURES / "cases"),
        "--results",
        str(tmp_path / "r"),
        "--affinity",
        value,
    ]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness: error:") and message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "text", ["0-99999999999", "8192", "0-8192", "9" * 5000, "0-" + "9" * 5000, "0," * 30_000 + "0"]
)
def test_a_cpu_list_too_big_to_name_cpus_is_refused_before_it_is_expanded(text):
    # Before: "0-99999999999" built a set of 10**11 numbers until the OOM killer ended the process.
    with pytest.raises(ValueError, match=r"above 8191|characters is not one"):
        parse_cpu_list(text)


def test_the_largest_cpu_linux_has_and_leading_zeros_still_parse():
    assert parse_cpu_list("0-8191") == list(range(8192))
    assert parse_cpu_list("0007") == [7]
