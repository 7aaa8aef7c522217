"""The report command's one pass: results loaded, the model built, plots drawn, pages written, old
pages forgotten."""

import re
import shutil
import sys
from datetime import UTC, datetime

import pytest

from harness.commands.report import write_report
from harness.errors import UsageError
from harness.render.plots import DrawnPlots
from harness.render.report import INDEX
from harness.store.results import load_results
from tests.conftest import FIXTURES, assert_valid_tables, derive, real_result, write_results


def test_unknown_baseline_is_refused(tmp_path):
    base = real_result("async_dispatch-0.12.0.1")
    releases = write_results(
        tmp_path / "results", [derive(base, release="0.4.26"), derive(base, release="0.4.30"), base]
    )
    with pytest.raises(UsageError, match=r"no result of release 9\.9 .*0\.4\.26, 0\.4\.30"):
        write_report(releases, tmp_path / "out", baseline="9.9")


def test_plots_are_drawn_and_linked(tmp_path):
    pytest.importorskip("matplotlib")
    written, _, plots = write_report(FIXTURES / "synthetic", tmp_path / "out")
    assert plots.missing_reason is None
    page = (tmp_path / "out" / "sharding_scaling.md").read_text()
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page)
    assert {link.rsplit("--", 1)[1] for link in links} == {"wall.png", "scaling.png"}
    for link in links:
        assert (tmp_path / "out" / link).read_bytes().startswith(b"\x89PNG")
    assert sorted(p.name for p in written) == ["index.md", "sharding_scaling.md"]


def test_without_matplotlib_the_report_says_plots_were_not_drawn(tmp_path, monkeypatch):
    # makes `import matplotlib` raise ImportError
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    written, _, plots = write_report(FIXTURES / "synthetic", tmp_path / "out")
    assert plots == DrawnPlots(missing_reason=plots.missing_reason) and "not installed" in str(
        plots.missing_reason
    )
    assert not (tmp_path / "out" / "plots").exists()
    for path in written:
        assert "Plots not drawn: matplotlib is not installed" in path.read_text()
        assert "![" not in path.read_text()


def test_unusable_files_are_named_in_the_report(tmp_path):
    shutil.copytree(FIXTURES / "results", tmp_path / "results")
    (tmp_path / "results" / "broken.json").write_text("{")
    written, problems, _ = write_report(tmp_path / "results", tmp_path / "out")
    assert [p.path.name for p in problems] == ["broken.json"]
    text = (tmp_path / "out" / INDEX).read_text()
    assert "`broken.json`: unreadable JSON" in text and "## Claims by release" in text
    assert {p.name for p in written} == {"index.md", "async_dispatch.md", "scan_sync.md"}


def test_the_report_renders_with_unusable_files_present_and_names_them(tmp_path, capsys):
    shutil.copytree(FIXTURES / "results", tmp_path / "results")
    shutil.copytree(FIXTURES / "unusable", tmp_path / "results" / "unusable")
    written, problems, _ = write_report(tmp_path / "results", tmp_path / "out")
    unusable = sorted(p.name for p in (FIXTURES / "unusable").iterdir())
    assert sorted(p.path.name for p in problems) == unusable
    index = (tmp_path / "out" / INDEX).read_text()
    assert f"> {len(unusable)} result file(s) could not be used:" in index
    assert "> - `host-is-a-list.json`: host: expected object, got list" in index
    assert "[async_dispatch](async_dispatch.md)" in index and "[scan_sync](scan_sync.md)" in index
    assert {p.name for p in written} == {INDEX, "async_dispatch.md", "scan_sync.md"}
    for path in written:
        assert_valid_tables(path.read_text())


def test_re_rendering_removes_pages_of_cases_whose_results_are_gone_and_nothing_else(tmp_path):
    results, out = tmp_path / "results", tmp_path / "reports"
    shutil.copytree(FIXTURES / "results", results)
    write_report(results, out)
    assert (out / "scan_sync.md").exists() and (out / "async_dispatch.md").exists()
    (out / "bisect-scan_sync.md").write_text("a bisect report the report did not write")
    for stored in load_results(results)[0]:
        if stored.result.case == "scan_sync":
            stored.path.unlink()
    write_report(results, out)
    assert not (out / "scan_sync.md").exists(), "the page of a case without results is gone"
    assert (out / "async_dispatch.md").exists() and (out / "bisect-scan_sync.md").exists()


def test_the_index_quotes_the_machines_latest_noise_floor(tmp_path):
    from harness.analysis.noise_floor import summarize_calibration
    from harness.analysis.significance import Thresholds
    from harness.catalogue import discovery
    from harness.cli.calibrate import plan_calibration
    from harness.store.calibrations import append_calibration
    from tests.conftest import derive, real_result

    results, out = tmp_path / "results", tmp_path / "reports"
    shutil.copytree(FIXTURES / "results", results)
    write_report(results, out)
    assert "No noise floor is recorded for this machine" in (out / INDEX).read_text()
    base = real_result("scan_sync-0.12.0.1")
    runs = [
        load_results(write_results(tmp_path / n, [derive(base, profile=n)]))[0][0]
        for n in ("a", "b")
    ]
    raised = load_results(write_results(tmp_path / "r", [derive(base, scale=1.3)]))[0][0]
    plan = plan_calibration(
        discovery.discover()["scan_sync"],
        {},
        None,
        pairs=1,
        profile="cpu",
        cases_dir=FIXTURES,
        run_options=(),
    )
    calibration = summarize_calibration(
        plan,
        Thresholds(resamples=20),
        [tuple(runs)],
        [(runs[0], raised)],
        datetime(2026, 6, 1, tzinfo=UTC),
    )
    append_calibration(results, calibration)
    write_report(results, out)
    index = (out / INDEX).read_text()
    assert f"Noise floor of machine {calibration.machine[:8]} (calibrated 2026-06-01" in index
    assert "0 of" in index and "pair of separate runs of one release" in index
