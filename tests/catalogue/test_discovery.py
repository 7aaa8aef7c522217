import pytest

from harness.catalogue import discovery
from harness.errors import UsageError


def test_discovers_the_shipped_cases_without_importing_them():
    cases = discovery.discover()
    assert {"async_dispatch", "scan_sync"} <= set(cases)
    assert "compat" not in cases
    for case in cases.values():
        assert case.claim and case.discussion
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
    (tmp_path / "bare.py").write_text("SIZE_SPACE = {}\nANCHORS = []\nDISCUSSION = 'x'\n")
    with pytest.raises(UsageError, match="lacks CLAIM"):
        discovery.discover(tmp_path)


def test_anchor_missing_a_size_is_refused(tmp_path):
    (tmp_path / "odd.py").write_text(
        "CLAIM = 'c'\nDISCUSSION = 'd'\nSIZE_SPACE = {'N': (1, 9), 'M': (1, 9)}\nANCHORS = [{'N': 2}]\n"
    )
    with pytest.raises(UsageError, match="every ANCHORS entry"):
        discovery.discover(tmp_path)
