import os
import shutil

import pytest

from harness import main as cli
from harness.catalogue import discovery
from harness.errors import UsageError
from harness.pins import ACCELERATOR, HOST
from tests.conftest import FIXTURES


def test_discovers_the_shipped_cases_without_importing_them():
    cases = discovery.discover()
    assert {"async_dispatch", "scan_sync"} <= set(cases)
    assert "compat" not in cases
    for case in cases.values():
        assert case.claim and case.source
        assert case.anchors, f"{case.name} has no anchor sizes"
        for anchor in case.anchors:
            assert all(lo <= anchor[name] <= hi for name, (lo, hi) in case.space.ranges.items())


def test_selecting_an_unknown_case_names_the_known_ones(fixture_cases):
    found = discovery.discover(fixture_cases)
    with pytest.raises(UsageError, match=r"unknown case nope; known cases: .*steady"):
        discovery.select(found, ["nope"])
    assert [c.name for c in discovery.select(found, ["steady", "steady"])] == ["steady"]


@pytest.mark.parametrize("text", ["N", "N=", "=3", "N=x", "N=1.5", "N=0", "N=-2", "1N=3"])
def test_malformed_sizes_are_refused(text):
    with pytest.raises(UsageError, match="malformed size"):
        discovery.parse_size(text)


def test_a_size_no_selected_case_has_is_refused(fixture_cases):
    steady = discovery.discover(fixture_cases)["steady"]
    with pytest.raises(UsageError, match="no selected case has size M"):
        discovery.check_overrides([steady], {"M": 3})


def test_missing_folder_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cases folder not found"):
        discovery.discover(tmp_path / "absent")


def test_case_without_claim_is_refused(tmp_path):
    (tmp_path / "bare.py").write_text("SIZE_SPACE = {}\nANCHORS = []\nSOURCE = 'x'\n")
    found = discovery.discover(tmp_path)
    assert list(found) == [] and "lacks CLAIM" in found.broken["bare"]
    with pytest.raises(UsageError, match="lacks CLAIM"):
        discovery.select(found, ["bare"])


def test_anchor_missing_a_size_is_refused(tmp_path):
    (tmp_path / "odd.py").write_text(
        "CLAIM = 'c'\nSOURCE = 'd'\nSIZE_SPACE = {'N': (1, 9), 'M': (1, 9)}\nANCHORS = [{'N': 2}]\n"
    )
    found = discovery.discover(tmp_path)
    with pytest.raises(UsageError, match="every ANCHORS entry"):
        discovery.select(found, ["odd"])


BROKEN_CASES = {
    "syntax_error": "CLAIM = 'x'\ndef programs(:\n",
    "non_literal": (
        'CLAIM = "c"\nSOURCE = "d"\nSIZE_SPACE = {"S": (1, 2**30)}\nANCHORS = [{"S": 2**20}]\n'
    ),
    "wrong_type": 'CLAIM = 3\nSOURCE = "d"\nSIZE_SPACE = {"S": (1, 8)}\nANCHORS = [{"S": 2}]\n',
    "anchor_text": (
        'CLAIM = "c"\nSOURCE = "d"\nSIZE_SPACE = {"S": (1, 8)}\nANCHORS = [{"S": "two"}]\n'
    ),
    "no_devices": (
        'CLAIM = "c"\nSOURCE = "d"\nSIZE_SPACE = {"S": (1, 8)}\nANCHORS = [{"S": 2}]\nDEVICES_USED '
        "= 0\n"
    ),
    "no_claim_devices": (
        'CLAIM = "c"\nSOURCE = "d"\nSIZE_SPACE = {"S": (1, 8)}\nANCHORS = [{"S": '
        '2}]\nCLAIM_DEVICES = "1"\n'
    ),
}


def test_a_broken_case_file_is_set_aside_with_its_reason_and_the_others_still_work(
    tmp_path, fixture_cases, capsys
):
    import shutil

    from harness.main import main

    shutil.copy(fixture_cases / "steady.py", tmp_path / "steady.py")
    for name, text in BROKEN_CASES.items():
        (tmp_path / f"{name}.py").write_text(text)
    found = discovery.discover(tmp_path)
    assert list(found) == ["steady"]
    assert set(found.broken) == set(BROKEN_CASES)
    assert "does not parse" in found.broken["syntax_error"]
    assert (
        "SIZE_SPACE is not a literal" in found.broken["non_literal"]
        and "2**20" in found.broken["non_literal"]
    )
    assert "CLAIM must be a string" in found.broken["wrong_type"]
    assert "ANCHORS must be" in found.broken["anchor_text"]
    assert "DEVICES_USED must be a positive integer" in found.broken["no_devices"]
    assert "CLAIM_DEVICES must be a positive integer" in found.broken["no_claim_devices"]
    assert [c.name for c in discovery.select(found, ["steady"])] == ["steady"]
    with pytest.raises(UsageError, match="SIZE_SPACE is not a literal"):
        discovery.select(found, ["non_literal"])
    assert (
        main(
            [
                "run",
                "--cases-dir",
                str(tmp_path),
                "--case",
                "non_literal",
                "--results",
                str(tmp_path / "r"),
            ]
        )
        == 2
    )
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["list", "--cases-dir", str(tmp_path)]) == 1
    listing = capsys.readouterr().out
    assert (
        "steady" in listing
        and "syntax_error\n    cannot be read: case file syntax_error.py does not parse" in listing
    )


def test_a_case_still_naming_discussion_is_told_what_replaced_it(tmp_path):
    (tmp_path / "older.py").write_text(
        "CLAIM = 'c'\nDISCUSSION = 'd.txt'\nSIZE_SPACE = {'N': (1, 9)}\nANCHORS = [{'N': 2}]\n"
    )
    reason = discovery.discover(tmp_path).broken["older"]
    assert "lacks SOURCE" in reason and "DISCUSSION is now SOURCE" in reason


@pytest.mark.parametrize(
    ("source", "readable"),
    [
        ("https://github.com/jax-ml/jax/discussions/21411", True),
        ('"A thread title" (its URL was not found)', True),
        ("http://example.org/plain-http", False),
        ("https://example.org/with space", False),
        ("", False),
        ("two\nlines", False),
    ],
)
def test_the_source_is_one_line_an_https_url_or_a_title(tmp_path, source, readable):
    (tmp_path / "c.py").write_text(
        f"CLAIM = 'c'\nSOURCE = {source!r}\nSIZE_SPACE = {{'N': (1, 9)}}\nANCHORS = [{{'N': 2}}]\n"
    )
    found = discovery.discover(tmp_path)
    assert ("c" in found) is readable, found.broken
    if not readable:
        assert "SOURCE must be one line" in found.broken["c"]


def test_a_non_literal_anchor_names_the_constant_and_the_rule(tmp_path):
    (tmp_path / "c.py").write_text(
        'CLAIM = "c"\nSOURCE = "s"\nSIZE_SPACE = {"S": (1, 9)}\nANCHORS = [{"S": 2**20}]\n'
    )
    reason = discovery.discover(tmp_path).broken["c"]
    assert "ANCHORS is not a literal ([{'S': 2 ** 20}])" in reason and "literals only" in reason
    assert "lacks" not in reason


HOSTILE = FIXTURES / "hostile_cases"
HEADER = 'CLAIM = "c"\nSOURCE = "synthetic"\n'
# Hostile case files too big, too odd or too binary to keep as fixture files, by name: their
# content.
GENERATED = {
    "anchor_of_4000_digits": HEADER
    + 'SIZE_SPACE = {"K": (1, 100)}\nANCHORS = [{"K": '
    + "9" * 4000
    + "}]\n",
    "anchor_of_5000_digits": HEADER
    + 'SIZE_SPACE = {"K": (1, 100)}\nANCHORS = [{"K": '
    + "9" * 5000
    + "}]\n",
    "claim_of_a_long_sum": "CLAIM = "
    + "+".join(["'a'"] * 60_000)
    + "\n",  # RecursionError in the parser
    "claim_of_many_minuses": "CLAIM = " + "-" * 100_000 + "1\n",  # MemoryError in the parser
    "anchors_nested_too_deep": HEADER + "ANCHORS = " + "[" * 1000 + "]" * 1000 + "\n",
    "cost_of_600_characters": HEADER
    + 'SIZE_SPACE = {"K": (1, 9)}\nANCHORS = [{"K": 1}]\nCOST = {"flops": "'
    + "+".join(["K"] * 300)
    + '"}\n',
    "oversized": HEADER + "#" * (discovery.MAX_CASE_BYTES + 1) + "\n",
    "holds_a_nul": HEADER + "\x00\n",
    "not_utf8": HEADER + "X = '\udcff'\n",
}


def hostile_folder(tmp_path):
    """The hostile fixture cases, the generated ones, a FIFO and a link to /dev/zero, with three
    good cases."""
    folder = tmp_path / "cases"
    shutil.copytree(HOSTILE, folder)
    for name, text in GENERATED.items():
        (folder / f"{name}.py").write_bytes(text.encode("utf-8", "surrogateescape"))
    (folder / "starts_with_a_bom.py").write_bytes(
        b"\xef\xbb\xbf" + (HOSTILE / "steady.py").read_bytes()
    )
    os.mkfifo(folder / "is_a_fifo.py")
    (folder / "links_to_dev_zero.py").symlink_to("/dev/zero")
    (folder / "is_a_folder.py").mkdir()
    return folder


READABLE = {"steady", "annotated_claim", "starts_with_a_bom"}


def test_each_hostile_case_file_is_set_aside_with_one_line_and_the_others_stay(tmp_path):
    folder = hostile_folder(tmp_path)
    found = discovery.discover(folder)
    assert set(found) == READABLE
    hostile = {p.stem for p in folder.glob("*.py")} - READABLE
    assert set(found.broken) == hostile and len(hostile) >= 27
    for name, reason in found.broken.items():
        assert (
            reason.startswith(f"case file {name}.py") and "\n" not in reason and len(reason) < 400
        ), reason
    assert "divides by zero" in found.broken["cost_divides_by_zero"]
    assert (
        "overflows" in found.broken["cost_power_tower"]
        and "overflows" in found.broken["cost_overflows"]
    )
    assert "K=1" in found.broken["cost_fails_at_the_range_end"], "found at the range's low end"
    assert "leaves its SIZE_SPACE range [1, 100]" in found.broken["anchor_negative"]
    assert "<13288-bit number>" in found.broken["anchor_of_4000_digits"]
    assert "not a regular file" in found.broken["is_a_fifo"]
    assert "too deeply nested" in found.broken["claim_of_a_long_sum"]


def test_annotated_constants_and_a_byte_order_mark_are_read_as_python_reads_them(tmp_path):
    found = discovery.discover(hostile_folder(tmp_path))
    assert found["annotated_claim"].claim == "c" and found["annotated_claim"].space.ranges == {
        "K": (1, 100)
    }
    assert found["starts_with_a_bom"].claim == found["steady"].claim


def test_list_and_run_go_on_past_every_hostile_case_file(tmp_path, capsys):
    folder = hostile_folder(tmp_path)
    assert cli.main(["list", "--cases-dir", str(folder)]) == 1, (
        "a broken case file is named, and the exit says so"
    )
    out = capsys.readouterr().out
    assert all(name in out for name in READABLE) and "divides by zero" in out
    argv = [
        "run",
        "--cases-dir",
        str(folder),
        "--case",
        "steady",
        "--processes",
        "1",
        "--results",
        str(tmp_path / "r"),
    ]
    assert cli.main([*argv, "--repeats", "2"]) == 0
    assert len(list((tmp_path / "r").rglob("*.json"))) == 1


def test_a_size_outside_the_cases_range_is_refused_in_one_line(fixture_cases):
    cases = discovery.select(discovery.discover(fixture_cases), ["steady"])
    with pytest.raises(
        UsageError, match=r"^size K=100001 leaves steady's range \[1, 100000\] for K$"
    ):
        discovery.check_overrides(cases, {"K": 100_001})
    discovery.check_overrides(cases, {"K": 100_000})


SIZED_BY_DEVICE = """CLAIM = 'c'
SOURCE = 'd'
SIZE_SPACE = {'N': (1, 20000)}
ANCHORS = [{'N': 1000}]
ACCELERATOR_ANCHORS = [{'N': 10000}, {'N': 1000}]
SOURCE_RUNS = [
    {'sizes': {'N': 10000}, 'call': 'test1(10_000)', 'device': 'a GPU', 'printed': 't1 = 0.001s'},
]
"""


def test_an_accelerator_profile_runs_its_anchors_a_host_profile_the_anchors(tmp_path):
    (tmp_path / "sized.py").write_text(SIZED_BY_DEVICE)
    (tmp_path / "plain.py").write_text(SIZED_BY_DEVICE.split("ACCELERATOR_ANCHORS")[0])
    found = discovery.discover(tmp_path)
    budget = discovery.Budget({})

    def planned(name, device):
        plan = found[name].plan("quick", {}, seed=1, budget=budget, device=device)
        return [p.sizes for p in plan]

    assert planned("sized", HOST) == [{"N": 1000}]
    assert planned("sized", ACCELERATOR) == [{"N": 10000}, {"N": 1000}]
    assert planned("plain", ACCELERATOR) == [{"N": 1000}], "without them, the anchors"
    # --size still wins, on the device's anchors.
    plan = found["sized"].plan("quick", {"N": 5}, seed=1, budget=budget, device=ACCELERATOR)
    assert [p.sizes for p in plan] == [{"N": 5}]


def test_the_discussions_own_figure_is_quoted_at_its_sizes_only(tmp_path):
    (tmp_path / "sized.py").write_text(SIZED_BY_DEVICE)
    case = discovery.discover(tmp_path)["sized"]
    assert case.source_figure({"N": 10000}) == "test1(10_000) on a GPU: t1 = 0.001s"
    assert case.source_figure({"N": 1000}) == ""


LINE = "ACCELERATOR_ANCHORS = [{'N': 10000}, {'N': 1000}]"
NAME = "ACCELERATOR_ANCHORS"


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        (
            LINE,
            "ACCELERATOR_ANCHORS = [{}]",
            "every ACCELERATOR_ANCHORS entry must give each size",
        ),
        (
            LINE,
            "ACCELERATOR_ANCHORS = [{'N': 30000}]",
            "ACCELERATOR_ANCHORS entry N=30000: N leaves",
        ),
        (LINE, "ACCELERATOR_ANCHORS = 'big'", "ACCELERATOR_ANCHORS must be a list of dicts"),
        ("'t1 = 0.001s'", "3", "SOURCE_RUNS must be a list"),
        ("'call'", "'cal'", "SOURCE_RUNS must be a list"),
        ("{'N': 10000}, 'call'", "{'N': 30000}, 'call'", "SOURCE_RUNS entry N=30000: N leaves"),
    ],
)
def test_malformed_accelerator_anchors_or_source_runs_set_the_case_aside(
    tmp_path, old, new, reason
):
    assert old in SIZED_BY_DEVICE
    (tmp_path / "odd.py").write_text(SIZED_BY_DEVICE.replace(old, new))
    found = discovery.discover(tmp_path)
    assert "odd" not in found and reason in found.broken["odd"]


def test_gpu_anchors_of_an_older_harness_set_the_case_aside_naming_their_new_name(tmp_path):
    (tmp_path / "old.py").write_text(SIZED_BY_DEVICE.replace("ACCELERATOR_ANCHORS", "GPU_ANCHORS"))
    found = discovery.discover(tmp_path)
    assert found.broken["old"] == (
        "case file old.py: GPU_ANCHORS is now ACCELERATOR_ANCHORS (see cases/README.md)"
    ), "its accelerator sizes are never quietly dropped"


def test_list_says_which_sizes_each_device_class_runs_and_which_are_the_discussions(tmp_path):
    from harness.commands.listing import describe_case

    path = tmp_path / "sized.py"
    path.write_text(SIZED_BY_DEVICE + "def programs(N):\n    return {}\n")
    shown = describe_case(discovery.read_case(path))
    assert (
        "anchors (quick): N=1000 on a CPU profile; N=10000; N=1000 on a GPU or TPU profile" in shown
    )
    assert "the discussion's own run at N=10000: test1(10_000) on a GPU: t1 = 0.001s" in shown
