"""Hostile inputs against what report, compare, merge and issue write (issue 28, items 3-7, 12, 14,
15).

Each input is crafted, as a hostile CI artifact or a colleague's folder would bring it: links
planted in the output folder, markup in every stored string a page shows, a case called ``index``,
numbers and nesting no harness writes, files that are no documents, calibration files that block or
never end, a result of 200,000 samples and a disk that fills up.  Every one must be named and
skipped or shown as text: no traceback, no write outside the output folder, no hang.
"""

from __future__ import annotations

import errno
import json
import os
import random
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.analysis import processes as processes_module
from harness.analysis.processes import DIRECT_MEDIAN_ABOVE, for_resampling, resampled_median
from harness.commands.report import PAGES_MANIFEST, write_report
from harness.errors import UsageError
from harness.main import main
from harness.render.report import INDEX, page_names
from harness.store import files
from harness.store.calibrations import latest_calibrations
from harness.store.results import CALIBRATION_FOLDER, load_results, merge
from tests.conftest import FIXTURES, assert_valid_tables, derive, real_result, write_results

BASE = real_result("scan_sync-0.12.0.1")


def two_releases(tmp_path: Path, **changes) -> Path:
    """scan_sync on two releases (so pages compare), each with ``changes``."""
    return write_results(
        tmp_path / "results", [derive(BASE, **changes), derive(BASE, release="0.4.26", **changes)]
    )


def first_sample_with(text: str) -> str:
    """The real result with its first raw sample's wall time written as ``text`` (JSON no encoder
    writes)."""
    document = json.dumps(derive(BASE))
    wall = BASE["processes"][0]["programs"]["two_scans"]["samples"][0]["wall_ns"]
    return document.replace(f'"wall_ns": {wall}', f'"wall_ns": {text}', 1)


# --- item 3: writes through links planted in the output
# folder -------------------------------------------


def test_links_planted_in_the_reports_folder_are_replaced_not_written_through(tmp_path):
    results, out, victims = two_releases(tmp_path), tmp_path / "out", tmp_path / "victims"
    out.mkdir()
    victims.mkdir()
    for name in ("victim", "victim2", "victim3"):
        (victims / name).write_text("keep")
    (out / "scan_sync.md.tmp").symlink_to(victims / "victim")  # the fixed temporary name of before
    (out / PAGES_MANIFEST).symlink_to(victims / "victim2")
    (out / "scan_sync.md").symlink_to(victims / "victim3")
    write_report(results, out)
    assert [(victims / n).read_text() for n in ("victim", "victim2", "victim3")] == ["keep"] * 3
    assert (
        "# scan_sync" in (out / "scan_sync.md").read_text()
        and not (out / "scan_sync.md").is_symlink()
    )
    assert json.loads((out / PAGES_MANIFEST).read_text()) == ["index.md", "scan_sync.md"]


def test_a_plots_link_planted_in_the_reports_folder_is_refused(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    results, out, elsewhere = two_releases(tmp_path), tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "plots").symlink_to(elsewhere)
    assert main(["report", "--results", str(results), "--out", str(out)]) == 2
    assert "plots: it is a link, not a folder" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == []


def test_a_planted_plot_link_is_replaced(tmp_path):
    pytest.importorskip("matplotlib")
    results, out = two_releases(tmp_path), tmp_path / "out"
    write_report(results, out)
    [plot, *_] = sorted((out / "plots").iterdir())
    victim = tmp_path / "victim.png"
    victim.write_text("keep")
    plot.unlink()
    plot.symlink_to(victim)
    write_report(results, out)
    assert victim.read_text() == "keep" and plot.read_bytes().startswith(b"\x89PNG")


def test_the_issue_draft_refuses_a_planted_folder_link_and_replaces_planted_file_links(
    tmp_path, monkeypatch
):
    from harness.commands import issue
    from tests.commands.test_issue import request

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "issues").symlink_to(elsewhere)
    with pytest.raises(UsageError, match="is a link"):
        issue.write_issue(request(tmp_path))
    assert list(elsewhere.iterdir()) == []

    (tmp_path / "reports" / "issues").unlink()
    (tmp_path / "reports" / "issues").mkdir()
    victims = []
    for name in ("scan_sync.md", "scan_sync.py", "scan_sync-full.py"):
        victim = elsewhere / name
        victim.write_text("keep")
        (tmp_path / "reports" / "issues" / name).symlink_to(victim)
        victims.append(victim)
    # what the script printed, for real
    output = (FIXTURES / "issue" / "scan_sync-output.txt").read_text()
    monkeypatch.setattr(
        issue, "run_script", lambda path, timeout_s, python=None, args=(): (0, output, "")
    )
    monkeypatch.setattr(issue, "environment_info", lambda python=None: "jax: test")
    written = issue.write_issue(request(tmp_path))
    assert [v.read_text() for v in victims] == ["keep"] * 3
    assert not written.draft.is_symlink() and "scan_sync" in written.draft.read_text()


def test_bisect_sweep_and_triage_reports_replace_a_planted_link(tmp_path, capsys):
    from harness.commands.ranges import RangeRun

    (tmp_path / "reports").mkdir()
    victim = tmp_path / "reports" / "victim"  # a link out of the folder is refused by inside()
    victim.write_text("keep")
    (tmp_path / "reports" / "sweep-scan_sync.md").symlink_to(victim)
    run = SimpleNamespace(options=SimpleNamespace(places=SimpleNamespace(out=tmp_path / "reports")))
    answer = SimpleNamespace(text="", markdown="# Sweep", data={})
    RangeRun.publish(run, answer, "sweep-scan_sync", data_file=False, printed=False, quiet=True)  # type: ignore[arg-type]
    assert (
        victim.read_text() == "keep"
        and (tmp_path / "reports" / "sweep-scan_sync.md").read_text() == "# Sweep"
    )


def test_export_and_compare_replace_a_link_at_the_file_they_are_told_to_write(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    script, markdown = tmp_path / "script.py", tmp_path / "comparison.md"
    script.symlink_to(victim)
    markdown.symlink_to(victim)
    assert main(["export", "--case", "scan_sync", "--out", str(script)]) == 0
    results = write_results(
        tmp_path / "results", [derive(BASE), derive(BASE, release="0.4.26", id="old")]
    )
    main(
        [
            "compare",
            str(results),
            "--a-release",
            "0.4.26",
            "--b-release",
            "0.12.0.1",
            "--markdown",
            str(markdown),
        ]
    )
    assert victim.read_text() == "keep"
    assert not script.is_symlink() and "import jax" in script.read_text()
    assert not markdown.is_symlink() and markdown.read_text().strip()


def test_a_bisects_reason_and_answer_are_text_on_its_page():
    from harness.analysis.significance import Thresholds
    from harness.metric_names import Criterion, Judged
    from harness.render.release_answers import bisect_markdown
    from harness.steps.answers import Setting
    from harness.steps.bisection import BisectOutcome
    from harness.steps.judge import Judgement, ReleaseVerdict

    found = BisectOutcome(
        ["0.4.30", "0.4.31"], stopped="status failed: <script>x</script> ![i](http://evil/x.png)"
    )
    found.probes.append(Judgement("0.4.30", ReleaseVerdict.SKIPPED, "status failed: # HEADING <b>"))
    page = bisect_markdown(
        found, Setting("scan_sync", {"N": 1}, "cpu", Criterion(Judged.CLAIM), {}, Thresholds(), 1.0)
    )
    assert "<script>" not in page and "![i](" not in page and "<b>" not in page
    assert not re.search(r"^#+ [A-Z]{5,}", page, re.MULTILINE)


# --- item 4: markup in stored
# strings ---------------------------------------------------------------------

HOSTILE = (
    "x\n# INJECTED <script>alert(1)</script> ![i](http://evil/x.png) [a](http://evil) **b** | c"
)


def hostile_result(release: str | None = None) -> dict:
    data = derive(
        BASE,
        release=release,
        claim_statement=HOSTILE,
        detail="```\n# FENCE BROKEN\n```\n<script>",
        discussion="a`b\n# DISCUSSION",
        source="",
    )
    data["host"]["cpu_model"] = "cpu ```\n# CPU"
    data["host"]["variables"] = {"JAX_X": "`v`\n# VARIABLE"}
    for process in data["processes"]:
        process["jax"]["backend"] = "cpu<script>\n# BACKEND"
        process["jax"]["environment_info"] = "```\n# ENVIRONMENT\n~~~"
        process["programs"] = {
            f"p<script>\n# PROGRAM {name}": v for name, v in process["programs"].items()
        }
        process["compiled"] = {
            f"f<img src=x>\n# FUNCTION {n}": v for n, v in process.get("compiled", {}).items()
        }
        if process.get("claim"):
            process["claim"]["evidence"] = "e\n# EVIDENCE <b>"
    return data


def outside_fences(markdown: str) -> list[str]:
    """The lines of ``markdown`` outside fenced code blocks (a fence closes only with one as long or
    longer)."""
    lines, fence = [], ""
    for line in markdown.splitlines():
        run = re.match(r"(`{3,})", line)
        if fence:
            if run and len(run.group(1)) >= len(fence) and not line[len(run.group(1)) :].strip():
                fence = ""
        elif run:
            fence = run.group(1)
        else:
            lines.append(line)
    assert not fence, "a fence was left open"
    return lines


def test_stored_strings_are_shown_as_text_on_every_page(tmp_path):
    results = write_results(tmp_path / "results", [hostile_result(), hostile_result("0.4.26")])
    written, problems, _ = write_report(results, tmp_path / "out")
    assert problems == []
    for path in written:
        page = path.read_text()
        assert_valid_tables(page)
        shown = outside_fences(page)
        headings = [line for line in shown if line.startswith("#")]
        assert not [h for h in headings if re.search(r"^#+ [A-Z]{5,}", h)], headings
        text = "\n".join(shown)
        for raw in ("<script>", "<img", "<b>", "![i](", "[a](http", "**b**"):
            assert raw not in text, (path.name, raw)
        assert "&lt;script&gt;" in text
    case_page = (tmp_path / "out" / "scan_sync.md").read_text()
    # kept, inside their fences
    assert "# FENCE BROKEN" in case_page and "# ENVIRONMENT" in case_page
    assert "Source discussion: ``a`b # DISCUSSION``" in case_page


def test_compare_shows_stored_strings_as_text(tmp_path, capsys):
    results = write_results(tmp_path / "results", [hostile_result(), hostile_result("0.4.26")])
    markdown = tmp_path / "comparison.md"
    assert main(
        [
            "compare",
            str(results),
            "--a-release",
            "0.4.26",
            "--b-release",
            "0.12.0.1",
            "--markdown",
            str(markdown),
        ]
    ) in (0, 1)
    text = "\n".join(outside_fences(markdown.read_text()))
    assert "<script>" not in text and not re.search(r"^#+ [A-Z]{5,}", text, re.MULTILINE)
    assert "\x1b" not in capsys.readouterr().out


# --- item 5 and relatives: page
# names -----------------------------------------------------------------------


def test_a_case_called_index_does_not_replace_the_index(tmp_path):
    results = write_results(
        tmp_path / "results", [derive(BASE, case="index"), derive(BASE, case="INDEX", id="b")]
    )
    written, _, _ = write_report(results, tmp_path / "out")
    # Two names that only differ in case are one file on macOS and Windows: the second takes -2.
    assert [p.name for p in written] == ["index.md", "case-INDEX.md", "case-index-2.md"]
    index = (tmp_path / "out" / INDEX).read_text()
    assert index.startswith("# JAX reproduction report")
    assert "[index](case-index-2.md)" in index and "[INDEX](case-INDEX.md)" in index


def test_page_names_never_collide_with_the_index_other_reports_or_each_other():
    names = page_names(
        ["scan_sync", "Scan_Sync", "index", "case-index", "bisect-x", "search-y-fails", "triage-z"]
    )
    assert names["scan_sync"] == "scan_sync.md" and names["Scan_Sync"] == "Scan_Sync-2.md"
    assert names["index"] == "case-index.md" and names["case-index"] == "case-index-2.md"
    assert (
        names["bisect-x"] == "case-bisect-x.md"
        and names["search-y-fails"] == "case-search-y-fails.md"
    )
    assert len({n.casefold() for n in names.values()} | {INDEX}) == len(names) + 1


def test_groups_that_slug_alike_get_plots_of_their_own(tmp_path):
    """Profiles ``cpu+x`` and ``cpu_x`` (both names) slug alike, as backends ``a/b`` and ``a_b``
    do."""
    pytest.importorskip("matplotlib")
    records = []
    for profile, backend in (("cpu+x", "a/b"), ("cpu_x", "a_b")):
        for release in ("0.12.0.1", "0.4.26"):
            data = derive(BASE, release=release, profile=profile)
            for process in data["processes"]:
                process["jax"]["backend"] = backend
            records.append(data)
    write_report(write_results(tmp_path / "results", records), tmp_path / "out")
    page = (tmp_path / "out" / "scan_sync.md").read_text()
    links = re.findall(r"!\[[^\]]*\]\((plots/[^)]+)\)", page)
    assert len(links) == len(set(links)) == 2
    assert all((tmp_path / "out" / link).is_file() for link in links)


# --- items 6 and 14: results no harness
# writes --------------------------------------------------------------


def with_field(field: str, process: bool = False) -> str:
    """The real result with ``field`` (JSON text) added at its top level, or to its first
    process."""
    document = json.dumps(derive(BASE))
    anchor = '"status": "ok"' if process else '"detail": ""'
    return document.replace(anchor, f"{field}, {anchor}", 1)


BOMBS = {
    "infinity.json": first_sample_with("Infinity"),
    "nan.json": first_sample_with("NaN"),
    "e308.json": first_sample_with("1e308"),
    "ten-to-400.json": first_sample_with("1" + "0" * 400),
    "digits-5000.json": first_sample_with("7" * 5000),
    "deep.json": with_field('"x": ' + "[" * 10_000 + "]" * 10_000),
    "deep-65.json": with_field('"x": ' + "[" * 65 + "]" * 65),
    "half-surrogate.json": json.dumps(derive(BASE, claim_statement="x\ud800")),
    "deep-in-facts.json": with_field('"facts": {"x": ' + "[" * 900 + "]" * 900 + "}", process=True),
}


def bombed(tmp_path: Path) -> Path:
    results = two_releases(tmp_path)
    for name, text in BOMBS.items():
        (results / name).write_text(text)
    (results / "utf16.json").write_bytes(json.dumps(derive(BASE, id="utf16")).encode("utf-16"))
    (results / "bom.json").write_bytes(
        b"\xef\xbb\xbf" + json.dumps(derive(BASE, id="bom")).encode()
    )
    with open(results / "sparse.json", "wb") as handle:
        handle.truncate(4 * 2**30)
    return results


def test_every_bomb_is_named_and_skipped_by_the_loader(tmp_path):
    results = bombed(tmp_path)
    loaded, problems = load_results(results)
    assert len(loaded) == 2
    named = {p.path.name: p.reason for p in problems}
    assert set(named) == {*BOMBS, "utf16.json", "bom.json", "sparse.json"}
    assert "not UTF-8" in named["utf16.json"] and "too large" in named["sparse.json"]
    assert "nested deeper" in named["deep-in-facts.json"] and "out of range" in named["e308.json"]


def test_report_compare_and_merge_name_every_bomb_and_go_on(tmp_path, capsys):
    results = bombed(tmp_path)
    assert main(["report", "--results", str(results), "--out", str(tmp_path / "out")]) == 0
    index = (tmp_path / "out" / INDEX).read_text()
    assert f"{len(BOMBS) + 3} result file(s) could not be used" in index
    assert main(["compare", str(results), "--a-release", "0.4.26", "--b-release", "0.12.0.1"]) in (
        0,
        1,
    )
    assert main(["merge", str(results), "--into", str(tmp_path / "merged")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "2 copied" in err
    assert len(load_results(tmp_path / "merged")[0]) == 2


def test_merge_leaves_out_a_file_that_changed_after_it_was_loaded(tmp_path, monkeypatch):
    results = two_releases(tmp_path)
    loaded = load_results(results)

    def changed(root: Path):
        if root == results:
            for result in loaded[0]:
                result.path.write_bytes(json.dumps(derive(BASE)).encode("utf-16"))
        return loaded

    import harness.store.results as merge_module

    monkeypatch.setattr(
        merge_module, "load_results", lambda root: changed(root) if root == results else ([], [])
    )
    merged = merge([results], tmp_path / "merged")
    assert merged.copied == [] and len(merged.problems) == 2
    assert all("changed while merging" in p for p in merged.problems)


def test_a_400_character_backend_is_reported_not_fatal(tmp_path, capsys):
    records = [derive(BASE, release=r) for r in ("0.12.0.1", "0.4.26")]
    for record in records:
        for process in record["processes"]:
            process["jax"]["backend"] = "b" * 400
    results = write_results(tmp_path / "results", records)
    assert main(["report", "--results", str(results), "--out", str(tmp_path / "out")]) == 0
    assert "b" * 400 in (tmp_path / "out" / "scan_sync.md").read_text()
    assert all(len(p.name) <= 255 for p in (tmp_path / "out").rglob("*"))


# --- item 7: calibration
# files -----------------------------------------------------------------------------


def test_calibration_files_get_the_loaders_guards(tmp_path):
    folder = tmp_path / CALIBRATION_FOLDER
    folder.mkdir()
    os.mkfifo(folder / "fifo.json")
    (folder / "zero.json").symlink_to("/dev/zero")
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (folder / "linked.json").symlink_to(tmp_path / "elsewhere.json")
    (tmp_path / "elsewhere.json").write_text("{}")
    with open(folder / "sparse.json", "wb") as handle:
        handle.truncate(4 * 2**30)
    (folder / "infinity.json").write_text(
        '{"schema": "jax-repro-harness/calibration", "x": Infinity}'
    )
    latest, problems = latest_calibrations(tmp_path)
    assert latest == {}
    reasons = dict(line.split(": ", 1) for line in problems)
    assert {Path(p).name for p in reasons} == {
        "fifo.json",
        "zero.json",
        "deep.json",
        "linked.json",
        "sparse.json",
        "infinity.json",
    }
    assert "not a regular file" in reasons[str(folder / "fifo.json")]
    assert (
        "a link" in reasons[str(folder / "zero.json")]
        and "a link" in reasons[str(folder / "linked.json")]
    )
    assert "nested deeper" in reasons[str(folder / "deep.json")]
    assert "too large" in reasons[str(folder / "sparse.json")]


def test_a_calibration_folder_that_is_a_link_is_not_read(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / CALIBRATION_FOLDER).symlink_to(tmp_path / "elsewhere")
    latest, problems = latest_calibrations(tmp_path)
    assert latest == {} and problems and "a link" in problems[0]


def test_the_report_does_not_wait_on_a_calibration_fifo(tmp_path):
    results = two_releases(tmp_path)
    (results / CALIBRATION_FOLDER).mkdir()
    os.mkfifo(results / CALIBRATION_FOLDER / "m.json")
    written, _, _ = write_report(results, tmp_path / "out")
    assert written[0].name == INDEX


# --- item 12: a result of 200,000
# samples ----------------------------------------------------------------


class CountingRandom(random.Random):
    draws = 0

    def random(self) -> float:
        CountingRandom.draws += 1
        return super().random()


def test_the_bootstrap_of_a_large_process_costs_one_draw_per_resample(monkeypatch):
    rng = random.Random(7)
    large = [rng.lognormvariate(0, 0.2) for _ in range(200_000)]
    CountingRandom.draws = 0
    monkeypatch.setattr(processes_module.random, "Random", CountingRandom)
    processes_module.hierarchical_bootstrap_interval([large] * 3, [large] * 3, resamples=200)
    # Drawing every sample would take 2 × 200 × 3 × 200,000 draws; a Beta variate takes a handful
    # each.
    assert CountingRandom.draws < 2 * 200 * (3 + 3 * 20)


def test_below_the_cap_the_bootstrap_draws_exactly_as_before():
    values = [random.Random(3).random() for _ in range(DIRECT_MEDIAN_ABOVE)]
    import statistics

    a, b = random.Random(11), random.Random(11)
    assert [resampled_median(for_resampling(values), a) for _ in range(20)] == [
        statistics.median(b.choices(values, k=len(values))) for _ in range(20)
    ]


def test_above_the_cap_the_resampled_median_stays_near_the_median():
    import statistics

    rng = random.Random(5)
    values = [rng.gauss(100, 10) for _ in range(50_001)]
    prepared = for_resampling(values)
    draws = [resampled_median(prepared, rng) for _ in range(400)]
    # The median's standard error is about 1.2533 σ / √n ≈ 0.056 here.
    assert abs(statistics.fmean(draws) - statistics.median(values)) < 0.02
    assert 0.03 < statistics.stdev(draws) < 0.09


def test_a_report_on_200000_samples_in_one_process_is_linear(tmp_path, monkeypatch):
    data = derive(BASE)
    program = data["processes"][0]["programs"]["two_scans"]
    program["samples"] = [program["samples"][i % len(program["samples"])] for i in range(200_000)]
    results = write_results(tmp_path / "results", [data, derive(BASE, release="0.4.26")])
    CountingRandom.draws = 0
    monkeypatch.setattr(processes_module.random, "Random", CountingRandom)
    written, problems, _ = write_report(results, tmp_path / "out")
    assert problems == [] and len(written) == 2
    assert CountingRandom.draws < 5_000_000  # before: over 400,000,000 for this process alone


# --- item 15: a full
# disk -----------------------------------------------------------------------------------


def test_a_full_disk_leaves_the_index_unwritten_and_no_temporary_file(tmp_path, monkeypatch):
    results = write_results(
        tmp_path / "results", [derive(BASE), derive(real_result("async_dispatch-0.12.0.1"))]
    )
    out = tmp_path / "out"
    real_fsync = os.fsync
    calls = {"n": 0}

    def full_at_the_second_page(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", full_at_the_second_page)
    monkeypatch.setattr("harness.render.plots.matplotlib_missing", lambda: "not in this test")
    with pytest.raises(OSError, match="No space"):
        write_report(results, out)
    left = sorted(p.name for p in out.iterdir())
    assert INDEX not in left and PAGES_MANIFEST not in left
    assert not [name for name in left if name.endswith(".tmp")], left
    # the page written before the disk filled; no index links a missing one
    assert left == ["async_dispatch.md"]
