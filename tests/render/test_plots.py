import sys

import pytest

from harness.analysis.groups import comparison_groups, latest_runs
from harness.analysis.report_model import timing_group
from harness.analysis.significance import Thresholds
from harness.render.plots import SCALING, WALL, draw_plots, matplotlib_missing
from harness.store.results import load_results
from tests.conftest import FIXTURES


@pytest.fixture
def synthetic_timing():
    [group] = comparison_groups(latest_runs(load_results(FIXTURES / "synthetic")[0]))
    return timing_group(group, None, Thresholds(resamples=20))


def test_drawing_writes_png_files(synthetic_timing, tmp_path):
    pytest.importorskip("matplotlib")
    drawn = draw_plots([synthetic_timing], tmp_path)
    assert drawn.missing_reason is None
    for kind in (WALL, SCALING):
        link = drawn.link(synthetic_timing.key, kind)
        assert link is not None and (tmp_path / link).read_bytes().startswith(b"\x89PNG")


def test_missing_matplotlib_is_a_reason_not_an_error(synthetic_timing, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert "matplotlib is not installed" in str(matplotlib_missing())
    drawn = draw_plots([synthetic_timing], tmp_path)
    assert drawn.files == {} and drawn.link(synthetic_timing.key, WALL) is None
