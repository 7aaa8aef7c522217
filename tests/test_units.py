import pytest

from harness.units import version_key


def test_releases_order_as_pip_orders_them():
    releases = ["0.5.0", "0.10.2", "0.4.9", "0.5.0rc1", "0.12.0.1", "0.4.26", "0.5.0.dev2", "0.5.0.post1"]
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
