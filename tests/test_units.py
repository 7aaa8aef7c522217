import pytest

from harness.units import version_key


def test_releases_order_as_pip_orders_them():
    releases = [
        "0.5.0",
        "0.10.2",
        "0.4.9",
        "0.5.0rc1",
        "0.12.0.1",
        "0.4.26",
        "0.5.0.dev2",
        "0.5.0.post1",
    ]
    assert sorted(releases, key=version_key) == [
        "0.4.9",
        "0.4.26",
        "0.5.0.dev2",
        "0.5.0rc1",
        "0.5.0",
        "0.5.0.post1",
        "0.10.2",
        "0.12.0.1",
    ]


@pytest.mark.parametrize("label", ["unknown", "", "main-branch"])
def test_a_label_that_is_no_version_sorts_first_and_does_not_raise(label):
    assert sorted(["0.4.26", label], key=version_key) == [label, "0.4.26"]
    assert version_key(label) < version_key("0.0.1")


def test_durations_and_the_time_left_read_as_a_person_would_say_them():
    from harness.units import format_seconds, time_left

    assert [format_seconds(s) for s in (0.4, 45, 200, 3900)] == [
        "0 s",
        "45 s",
        "3 min 20 s",
        "1 h 05 min",
    ]
    assert time_left(0, 10, 5.0) == "", "no pace before the first is done"
    assert time_left(4, 6, 120.0) == "2 min 00 s elapsed, about 3 min 00 s left"
    assert time_left(4, 6, 120.0, per_unit=10.0) == "2 min 00 s elapsed, about 1 min 00 s left", (
        "a pace known"
    )
