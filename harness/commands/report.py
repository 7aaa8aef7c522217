"""``report``: the results loaded and the report decided once (``analysis.report_model``), with each
machine's latest noise floor; its plots drawn and pages written.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from harness.analysis.groups import check_baseline
from harness.analysis.report_model import build_model
from harness.analysis.significance import DEFAULT_THRESHOLDS, Thresholds
from harness.cli.report import ReportOptions
from harness.errors import UsageError
from harness.names import name_problem
from harness.render.json_out import dumps, report_json
from harness.render.plots import DrawnPlots, draw_plots
from harness.render.report import INDEX, render_pages
from harness.store.calibrations import latest_calibrations
from harness.store.files import child, output_folder, parse_document, read_bounded, replace_file
from harness.store.results import LoadProblem, load_results

PAGES_MANIFEST = ".report-pages.json"  # the pages the last render wrote
MANIFEST_BYTES = 2**20


def write_report(
    results_dir: Path,
    out_dir: Path,
    *,
    baseline: str | None = None,
    thresholds: Thresholds = DEFAULT_THRESHOLDS,
    json_path: Path | None = None,
) -> tuple[list[Path], list[LoadProblem], DrawnPlots]:
    """The report on ``results_dir`` written under ``out_dir`` (and ``json_path``): the pages (index
    first), the result files not used, the plots (or why none).  UsageError for an unknown
    ``baseline``; OSError where ``out_dir`` cannot be written."""
    results, problems = load_results(results_dir)
    check_baseline(baseline, results)
    output_folder(out_dir)
    # an unusable calibration file is not a result: left out
    calibrations, _ = latest_calibrations(results_dir)
    model = build_model(
        results, problems, baseline=baseline, thresholds=thresholds, calibrations=calibrations
    )
    plots = draw_plots(model.timings, out_dir)
    pages = render_pages(model, datetime.now(UTC), plots)
    # Every page replaced atomically (``replace_file``), the index last (a stable sort moves it), so
    # that an index never links a page a full disk kept from being written.
    for name in sorted(pages, key=lambda name: name == INDEX):
        replace_file(child(out_dir, name), pages[name])
    written = [child(out_dir, name) for name in sorted(pages, key=lambda name: name != INDEX)]
    forget_old_pages(out_dir, set(pages))
    if json_path is not None:
        replace_file(json_path, dumps(report_json(model, thresholds)))
    return written, problems, plots


def forget_old_pages(out_dir: Path, pages: set[str]) -> None:
    """Remove the pages an earlier render wrote that this one did not: only those in the folder's
    manifest, since the folder also holds other reports and whatever else a user put there."""
    manifest = out_dir / PAGES_MANIFEST
    try:
        # Not through a link: a manifest is only ever this function's own file.
        before = set(
            parse_document(read_bounded(manifest, limit=MANIFEST_BYTES, follow_links=False))
        )
    except (OSError, ValueError, TypeError):
        before = set()
    for name in sorted(before - pages):
        if isinstance(name, str) and name.endswith(".md") and not name_problem(name):
            # a link planted there goes, not what it points to
            child(out_dir, name).unlink(missing_ok=True)
    replace_file(manifest, json.dumps(sorted(pages)))


def execute(opts: ReportOptions) -> int:
    try:
        written, problems, plots = write_report(
            opts.results,
            opts.out,
            baseline=opts.baseline,
            thresholds=opts.thresholds,
            json_path=opts.json,
        )
    except OSError as exc:
        # The --out the user named cannot take the report: bad input (exit 2), as the help says.
        raise UsageError(
            f"cannot write the report under {opts.out}: {exc.strerror or exc}"
        ) from None
    for problem in problems:
        print(f"skipped unusable result {problem}", file=sys.stderr)
    if plots.missing_reason:
        print(f"plots not drawn: {plots.missing_reason}", file=sys.stderr)
    print(
        f"report written: {len(written)} page(s) under {opts.out}, start at {written[0]}",
        file=sys.stderr,
    )
    return 0
