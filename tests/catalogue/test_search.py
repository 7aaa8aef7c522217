"""Search and shrinking on a cheap synthetic claim that provably breaks at a known size."""

from pathlib import Path

from harness.catalogue.discovery import CaseInfo
from harness.catalogue.search import render, search
from harness.catalogue.sizes import Budget, SizeSpace

BREAKS_AT = 37
CASE = CaseInfo(
    name="synthetic",
    path=Path("synthetic.py"),
    claim="N stays small",
    source="none",
    space=SizeSpace({"N": (1, 5000), "M": (1, 50)}, {"flops": "N * M"}),
    anchors=[{"N": 1, "M": 1}],
)


def breaks_at_known_size(point):
    return point["N"] < BREAKS_AT, f"N={point['N']}"


def test_search_finds_the_exact_smallest_failing_size(tmp_path):
    found = search(
        CASE, breaks_at_known_size, budget=Budget(), max_examples=60, seed=5, database_dir=tmp_path
    )
    assert found.found == {"N": BREAKS_AT, "M": 1}
    assert len(found.for_point(found.found)) == 3, "one measurement and two confirmations"
    text = render(found, release="0.0", profile="test")
    assert f"Smallest size found: M=1 N={BREAKS_AT}" in text


def test_noise_cannot_produce_a_counterexample(tmp_path):
    calls: dict[int, int] = {}

    def noisy(point):
        # Below the true threshold, every first measurement of a size lies.
        calls[point["N"]] = calls.get(point["N"], 0) + 1
        if point["N"] < BREAKS_AT and calls[point["N"]] == 1:
            return False, "noise"
        return breaks_at_known_size(point)

    found = search(CASE, noisy, budget=Budget(), max_examples=60, seed=5, database_dir=tmp_path)
    assert found.found == {"N": BREAKS_AT, "M": 1}


def test_searching_for_where_a_claim_holds():
    found = search(
        CASE,
        lambda p: (p["N"] >= 100, ""),
        budget=Budget(),
        want_holds=True,
        max_examples=60,
        seed=2,
        database_dir=None,
    )
    assert found.found == {"N": 100, "M": 1}


def test_no_counterexample_is_reported_as_such():
    found = search(
        CASE, lambda p: (True, ""), budget=Budget(), max_examples=10, seed=1, database_dir=None
    )
    assert found.found is None and "no size within 10 examples" in found.note
    assert "No such size found" in render(found, release="0.0", profile="test")


def test_budget_bounds_the_search():
    tried = []

    def record(point):
        tried.append(point)
        return True, ""

    search(
        CASE, record, budget=Budget({"flops": 100.0}), max_examples=30, seed=1, database_dir=None
    )
    assert tried and all(p["N"] * p["M"] <= 100 for p in tried)


def test_a_stored_search_resumes_from_the_database(tmp_path):
    first = search(
        CASE, breaks_at_known_size, budget=Budget(), max_examples=60, seed=5, database_dir=tmp_path
    )
    again = search(
        CASE, breaks_at_known_size, budget=Budget(), max_examples=60, seed=9, database_dir=tmp_path
    )
    assert again.found == first.found
    assert len(again.measurements) < len(first.measurements)


def test_pinned_sizes_restrict_the_search():
    pinned = CASE.space.fixed({"M": 7})
    assert pinned.ranges == {"N": (1, 5000), "M": (7, 7)}
