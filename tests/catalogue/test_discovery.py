import pytest

from harness.catalogue import discovery
from harness.errors import UsageError


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
    "non_literal": ('CLAIM = "c"\nSOURCE = "d"\nSIZE_SPACE = {"S": (1, 2**30)}\nANCHORS = [{"S": 2**20}]\n'),
    "wrong_type": 'CLAIM = 3\nSOURCE = "d"\nSIZE_SPACE = {"S": (1, 8)}\nANCHORS = [{"S": 2}]\n',
    "anchor_text": 'CLAIM = "c"\nSOURCE = "d"\nSIZE_SPACE = {"S": (1, 8)}\nANCHORS = [{"S": "two"}]\n',
    "no_devices": 'CLAIM = "c"\nSOURCE = "d"\nSIZE_SPACE = {"S": (1, 8)}\nANCHORS = [{"S": 2}]\nDEVICES_USED = 0\n',
}


def test_a_broken_case_file_is_set_aside_with_its_reason_and_the_others_still_work(tmp_path, fixture_cases, capsys):
    import shutil

    from harness.cli import main

    shutil.copy(fixture_cases / "steady.py", tmp_path / "steady.py")
    for name, text in BROKEN_CASES.items():
        (tmp_path / f"{name}.py").write_text(text)
    found = discovery.discover(tmp_path)
    assert list(found) == ["steady"]
    assert set(found.broken) == set(BROKEN_CASES)
    assert "does not parse" in found.broken["syntax_error"]
    assert "SIZE_SPACE is not a literal" in found.broken["non_literal"] and "2**20" in found.broken["non_literal"]
    assert "CLAIM must be a string" in found.broken["wrong_type"]
    assert "ANCHORS must be" in found.broken["anchor_text"]
    assert "DEVICES_USED must be a positive integer" in found.broken["no_devices"]
    assert [c.name for c in discovery.select(found, ["steady"])] == ["steady"]
    with pytest.raises(UsageError, match="SIZE_SPACE is not a literal"):
        discovery.select(found, ["non_literal"])
    assert main(["run", "--cases-dir", str(tmp_path), "--case", "non_literal", "--results", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["list", "--cases-dir", str(tmp_path)]) == 1
    listing = capsys.readouterr().out
    assert (
        "steady" in listing and "syntax_error\n    cannot be read: case file syntax_error.py does not parse" in listing
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
    (tmp_path / "c.py").write_text('CLAIM = "c"\nSOURCE = "s"\nSIZE_SPACE = {"S": (1, 9)}\nANCHORS = [{"S": 2**20}]\n')
    reason = discovery.discover(tmp_path).broken["c"]
    assert "ANCHORS is not a literal ([{'S': 2 ** 20}])" in reason and "literals only" in reason
    assert "lacks" not in reason
