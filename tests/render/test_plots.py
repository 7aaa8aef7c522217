import sys

import pytest

from harness.analysis.groups import comparison_groups, latest_runs
from harness.render.plots import (
    SCALING,
    WALL,
    draw_plots,
    matplotlib_missing,
    split_device_suffix,
    wall_by_device_count,
    wall_by_release,
)
from harness.store.results import load_results
from tests.conftest import FIXTURES


@pytest.fixture
def synthetic_group():
    [group] = comparison_groups(latest_runs(load_results(FIXTURES / "synthetic")[0]))
    return group


@pytest.mark.parametrize(
    ("name", "parsed"),
    [("jit_d4", ("jit", 4)), ("pmap_d16", ("pmap", 16)), ("shard_map_d2", ("shard_map", 2)), ("jit", None)],
)
def test_device_count_suffix(name, parsed):
    assert split_device_suffix(name) == parsed
    assert split_device_suffix("jit_dx") is None and split_device_suffix("jit_d") is None


def test_scaling_lines_are_per_release_and_method_ordered_by_devices(synthetic_group):
    lines = wall_by_device_count(synthetic_group)
    assert set(lines) == {(r, m) for r in ("0.4.26", "0.12.0.1") for m in ("jit", "pmap")}
    assert [d for d, _ in lines[("0.12.0.1", "jit")]] == [1, 2, 4, 8]
    newer_jit = [s.median for _, s in lines[("0.12.0.1", "jit")]]
    assert newer_jit == sorted(newer_jit), "the synthetic newer release slows down with devices"
    assert all(s.q1 <= s.median <= s.q3 for _, s in lines[("0.4.26", "pmap")])


def test_cases_without_device_suffixes_have_no_scaling_plot():
    groups = comparison_groups(latest_runs(load_results(FIXTURES / "results")[0]))
    assert all(wall_by_device_count(g) == {} for g in groups)
    assert all(set(wall_by_release(g)) for g in groups)


def test_release_lines_follow_the_group(synthetic_group):
    lines = wall_by_release(synthetic_group)
    assert [release for release, _ in lines["jit_d8"]] == ["0.4.26", "0.12.0.1"]


def test_drawing_writes_png_files(synthetic_group, tmp_path):
    pytest.importorskip("matplotlib")
    drawn = draw_plots([synthetic_group], tmp_path)
    assert drawn.missing_reason is None
    for kind in (WALL, SCALING):
        link = drawn.link(synthetic_group.key, kind)
        assert link is not None and (tmp_path / link).read_bytes().startswith(b"\x89PNG")


def test_missing_matplotlib_is_a_reason_not_an_error(synthetic_group, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert "matplotlib is not installed" in str(matplotlib_missing())
    drawn = draw_plots([synthetic_group], tmp_path)
    assert drawn.files == {} and drawn.link(synthetic_group.key, WALL) is None
