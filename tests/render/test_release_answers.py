"""Bisect and sweep answers as text, markdown and the JSON the issue drafts read."""

import dataclasses
import json
from pathlib import Path

from harness.analysis.shapes import compare_values
from harness.analysis.significance import Thresholds
from harness.metric_names import Criterion, Judged, parse_metric_name
from harness.render.release_answers import (
    Answer,
    bisect_answer,
    bisect_json,
    bisect_markdown,
    sweep_answer,
    sweep_markdown,
)
from harness.steps.answers import Setting
from harness.steps.bisection import ReleaseStep, bisect, sweep
from harness.steps.judge import Judge
from harness.upstream.change import BisectAnswer, change_from, read_bisect_answers
from tests.conftest import FakeReleases, assert_valid_tables, tables

WALL = parse_metric_name("eager.wall_ns")
RELEASES = ["0.4.30", "0.4.31", "0.4.33", "0.4.34"]
JAXLIB = dict(zip(RELEASES, RELEASES, strict=True))


def rows(markdown):
    return [
        [cell.strip() for cell in line.split("|")[1:-1]]
        for table in tables(markdown)
        for line in table
    ]


def setting(metric=WALL, by=Judged.CLAIM, **changes):
    criterion = Criterion.of(metric, by)
    return Setting(
        "async_dispatch", {"N": 1000}, "cpu", criterion, JAXLIB, Thresholds(), 42.0, **changes
    )


def bisected(metric=WALL, scales=None):
    fake = FakeReleases(scales or {"0.4.30": 1, "0.4.31": None, "0.4.33": 3, "0.4.34": 3})
    return bisect(
        RELEASES, Judge(fake, RELEASES[0], RELEASES[-1], Criterion.of(metric), Thresholds())
    )


def test_the_json_answer_is_what_the_issue_draft_reads(tmp_path):
    data = bisect_json(bisected(), setting())
    assert (data["last_good"], data["first_bad"]) == ("0.4.30", "0.4.33")
    assert (
        data["untested_between"] == ["0.4.31"]
        and "0.4.31 between them could not be judged" in data["answer"]
    )
    assert (data["probe_count"], data["expected_probes"]) == (4, 4)
    assert [p["verdict"] for p in data["probes"]] == ["good", "bad", "skipped", "bad"]
    assert (
        data["probes"][3]["vs_good"]["verdict"] == "slower"
        and data["probes"][3]["vs_good"]["ratio"] > 2.9
    )
    (tmp_path / "bisect-async_dispatch.json").write_text(json.dumps(data))
    [stored] = read_bisect_answers(tmp_path, "async_dispatch")
    assert stored.data == data
    shown = setting()
    change = change_from([stored], [], case=shown.case, sizes=shown.sizes, profile=shown.profile)
    assert change is not None and (change.last_good, change.first_bad) == ("0.4.30", "0.4.33")
    assert [p.release for p in change.probes] == RELEASES and change.metric == WALL


def test_without_an_answer_the_json_names_no_release():
    data = bisect_json(bisected(scales=dict.fromkeys(RELEASES, 1)), setting())
    assert "first_bad" not in data and "last_good" not in data
    assert data["answer"].startswith("no answer: the bad endpoint 0.4.34 is not bad")
    shown = setting()
    assert (
        change_from(
            [BisectAnswer("b.json", data)],
            [],
            case=shown.case,
            sizes=shown.sizes,
            profile=shown.profile,
        )
        is None
    )


def test_the_markdown_gives_the_answer_the_count_and_the_evidence_the_screen_its_step():
    found, shown = bisected(), setting()
    markdown = bisect_markdown(found, shown)
    assert_valid_tables(markdown)
    assert "**First bad: jax 0.4.33 · last good: jax 0.4.30**" in markdown
    assert (
        "4 releases in the range (0.4.30, 0.4.31, 0.4.33, 0.4.34); 4 probes (⌈log2 4⌉ + 2 = 4 "
        "expected" in markdown
    )
    assert "wall time 42 s, installs included" in markdown
    assert ["4", "0.4.33", "0.4.33", "bad"] in [row[:4] for row in rows(markdown)]
    assert "could not be installed: fake" in markdown
    text = bisect_answer(found, shown, report="reports/b.md").text
    assert text.splitlines()[0] == (
        "Bisect: async_dispatch at N=1000 · profile cpu · jax 0.4.30 → 0.4.34 · by eager.wall_ns"
    )
    assert (
        "First bad: jax 0.4.33 · last good: jax 0.4.30; 0.4.31 between could not be judged" in text
    )
    assert text.splitlines()[-1] == "Report: reports/b.md"


def test_a_claim_bisect_shows_the_claim_and_its_evidence():
    fake = FakeReleases(dict.fromkeys(RELEASES, 1), holds={"0.4.30": False, "0.4.31": False})
    found = bisect(
        RELEASES, Judge(fake, RELEASES[0], RELEASES[-1], Criterion(Judged.EVERY), Thresholds())
    )
    markdown = bisect_markdown(found, setting(metric=None))
    assert_valid_tables(markdown)
    assert "by the case's claim" in markdown
    # The evidence is settled over the processes (the fixture's five, repeated) and quotes the first
    # one's.
    assert "| holds in 10 of 10 processes; e.g. eager: dispatch 0.279 ms of 53.279 ms" in markdown
    assert (
        "| does not hold in 10 of 10 processes; e.g. eager: dispatch 0.279 ms of 53.279 ms"
        in markdown
    )
    assert bisect_json(found, setting(metric=None))["first_bad"] == "0.4.33"


def test_a_sweep_lists_its_steps_and_warns_that_bisection_sees_one():
    fake = FakeReleases({"0.4.30": 1, "0.4.31": 3, "0.4.33": None, "0.4.34": 1})
    found = sweep(RELEASES, fake, metrics=[WALL], with_claim=False, thresholds=Thresholds())
    markdown = sweep_markdown(found, setting())
    assert_valid_tables(markdown)
    assert "- eager.wall_ns: 0.4.30 → 0.4.31: slower ×3" in markdown
    assert "- eager.wall_ns: 0.4.31 → 0.4.34: faster ×0.333" in markdown
    assert "a bisection between the endpoints would report only one" in markdown
    assert ["0.4.33", "0.4.33", "not installed", "–", "could not be installed: fake"] in rows(
        markdown
    )
    text = sweep_answer(found, setting(), "reports/sweep-async_dispatch.md").text
    assert "2 step(s), each release against the previous one that ran ok:" in text
    every = sweep_markdown(found, setting(metric=None, by=Judged.EVERY))
    assert "by every metric and the claim" in every


def test_a_release_that_ran_ok_without_a_claim_shows_none_not_its_status():
    from harness.render.release_answers import release_rows
    from harness.steps.probes import Probe
    from harness.store.results import StoredResult
    from tests.conftest import derive, real_result

    data = derive(real_result("async_dispatch-0.12.0.1"), release="0.4.30")
    for process in data["processes"]:
        process.pop("claim", None)
    claimless = StoredResult.from_document(Path("x.json"), data)
    with_claim = FakeReleases({"0.4.31": 1})("0.4.31")

    def measure(release, again=False):
        return Probe(release, claimless, "n") if release == "0.4.30" else with_claim

    found = sweep(
        ["0.4.30", "0.4.31"], measure, metrics=[WALL], with_claim=False, thresholds=Thresholds()
    )
    claims = [row[3] for row in release_rows(found, setting())[0]]
    assert claims[0] == "–" and claims[1] in ("holds", "does not hold", "unsettled")


def test_releases_none_of_which_has_a_claim_show_no_claim_column():
    """Issue 66 #2: a watched suite's page showed an empty claim column."""
    from harness.render.release_answers import release_rows
    from harness.steps.probes import Probe
    from harness.store.results import StoredResult
    from tests.conftest import derive, real_result

    def measure(release, again=False):
        data = derive(real_result("async_dispatch-0.12.0.1"), release=release)
        for process in data["processes"]:
            process.pop("claim", None)
        return Probe(release, StoredResult.from_document(Path(f"{release}.json"), data), "n")

    found = sweep(
        ["0.4.30", "0.4.31"], measure, metrics=[WALL], with_claim=False, thresholds=Thresholds()
    )
    markdown = sweep_markdown(found, setting())
    assert_valid_tables(markdown)
    assert ["jax", "jaxlib", "status", "source"] in rows(markdown)
    table, headers = release_rows(found, setting())
    assert "claim" not in headers and all(len(row) == 4 for row in table)


def test_a_metric_named_like_markup_is_text_in_its_heading():
    dunder = parse_metric_name("json.__init__")
    fake = FakeReleases({"0.4.30": 1, "0.4.31": 3, "0.4.33": 3, "0.4.34": 3})
    found = sweep(RELEASES, fake, metrics=[dunder], with_claim=False, thresholds=Thresholds())
    markdown = sweep_markdown(found, setting(metric=dunder))
    [heading] = [line for line in markdown.splitlines() if line.startswith("### ")]
    assert heading == r"### json.\_\_init\_\_ · \_\_init\_\_ (printed by the script)", heading


def test_a_sweep_s_step_is_literal_text_whatever_its_names_hold():
    fake = FakeReleases({"a": 1, "b._c_": 3})
    found = sweep(["a", "b._c_"], fake, metrics=[WALL], with_claim=False, thresholds=Thresholds())
    assert "- eager.wall_ns: a → b.\\_c\\_: slower ×3" in sweep_markdown(found, setting())


def test_a_sweep_s_value_step_says_its_change_once():
    loss = parse_metric_name("json.loss")
    fake = FakeReleases({"0.4.30": 1, "0.4.31": 1})
    found = sweep(RELEASES[:2], fake, metrics=[WALL], with_claim=False, thresholds=Thresholds())
    changed = compare_values([[1.0], [1.0]], [[2.0], [2.0]], loss)
    found.steps = [ReleaseStep(Criterion.of(loss), "0.4.30", "0.4.31", changed)]
    markdown = sweep_markdown(found, setting(metric=loss))
    assert "- json.loss: 0.4.30 → 0.4.31: changed from 1 to 2 in every process\n" in markdown


def test_the_why_goes_to_the_issue_draft_as_findings_marked_leading_with_the_run_s_thresholds(
    tmp_path,
):
    from harness.explain.defaults import XLA, Change
    from harness.explain.dumps import CompiledAnswer
    from harness.explain.tried import DefaultsAnswer
    from harness.findings import Finding

    listed = [Change("xla_cpu_use_thunk_runtime", XLA, "false", "true")]
    found = (
        DefaultsAnswer("0.4.30", "0.4.33", listed),
        CompiledAnswer("0.4.30", "0.4.33", [], problem="0.4.33: XLA wrote no dump"),
    )
    evidence = {("0.4.30", "0.4.33"): found}
    shown = dataclasses.replace(setting(evidence=evidence), thresholds=Thresholds(factor=1.2))
    data = bisect_json(bisected(), shown)
    assert data["why"] == [
        "defaults that changed from 0.4.30 to 0.4.33: xla_cpu_use_thunk_runtime: false → true",
        "compiled programs not compared: 0.4.33: XLA wrote no dump",
    ], "the sentences as a page shows them, for readers of the JSON"
    assert data["next"][0]["command"].startswith("nox -s bisect -- --case")
    (tmp_path / "bisect-async_dispatch.json").write_text(json.dumps(data))
    [stored] = read_bisect_answers(tmp_path, "async_dispatch")
    change = change_from([stored], [], case=shown.case, sizes=shown.sizes, profile=shown.profile)
    assert change is not None and change.why == (
        Finding(data["why"][0]),
        Finding(data["why"][1], leads=True),
    ), "read as data: nothing matches a sentence's first words"
    assert change.thresholds.factor == 1.2, "the draft judges by the run's thresholds"


def test_an_answer_quoting_a_stored_credential_shows_it_redacted():
    data = {"key": "json.steps", "died": [{"stack": "ghp_0123456789abcdefghijklmnop"}], "n": 3}
    answer = Answer("died: Bearer 0123456789abcdef", "AKIAIOSFODNN7EXAMPLE in its stack", data)
    assert answer.text == "died: Bearer <redacted>" and answer.markdown == "<redacted> in its stack"
    assert answer.data == {"key": "json.steps", "died": [{"stack": "<redacted>"}], "n": 3}
