"""A commit bisect's answer as data and pages."""

from harness.analysis.significance import Thresholds
from harness.metric_names import Criterion, parse_metric_name
from harness.render.commit_answer import commit_bisect_json, commit_bisect_markdown
from harness.steps.answers import Setting
from harness.steps.commit_bisect import CommitBisect, CommitSearch
from harness.steps.judge import FIX
from tests.steps.test_commit_bisect import CANDIDATES, JAXLIBS, World, commits

SETTING = Setting(
    "scan_sync",
    {"N": 600, "M": 2},
    "cpu",
    Criterion.of(parse_metric_name("two_scans.dispatch_ns")),
    JAXLIBS,
    Thresholds(),
    9.0,
)


def test_a_fix_named_to_its_commit_keeps_the_fix_keys_a_draft_reads():
    history = commits(16)
    world = World(history, commit=6)
    found = CommitBisect("0.4.31", "0.4.33", history, JAXLIBS, FIX)
    CommitSearch(found, CANDIDATES, world.judge, world.prepare).run()
    data = commit_bisect_json(found, SETTING)
    assert (data["broken"], data["fixed"], data["last_broken"], data["first_fixed"]) == (
        "0.4.31",
        "0.4.33",
        "0.4.31",
        "0.4.33",
    )
    assert data["commit"]["sha"] == history[6].sha and data["commit"]["pull_request"] == 1006
    assert len(data["commit_probes"]) == data["probe_count"] and data["expected_probes"] == 9
    page = commit_bisect_markdown(found, SETTING)
    assert page.startswith(
        "# Bisect over jax commits: scan_sync, jax 0.4.31 → 0.4.33\n\n**first fixed commit"
    )
    assert f"- the commit: [{history[6].sha}]({history[6].url})" in page


def test_a_commit_that_did_not_install_is_listed_with_why():
    history = commits(16)
    world = World(history, commit=6, broken={(5, "0.4.31"), (5, "0.4.32")})
    found = CommitBisect("0.4.31", "0.4.33", history, JAXLIBS)
    CommitSearch(found, CANDIDATES, world.judge, world.prepare).run()
    page = commit_bisect_markdown(found, SETTING)
    assert "## Commits that did not install or import" in page
    assert f"- {history[5].short} with jaxlib 0.4.31: does not import: no attribute" in page


def test_no_answer_names_no_ends():
    history = commits(8)
    found = CommitBisect("0.4.31", "0.4.33", history, JAXLIBS)
    found.probes = []
    found.stopped = "the good release 0.4.31 is not good"
    data = commit_bisect_json(found, SETTING)
    assert (
        "last_good" not in data
        and data["answer"] == "no answer: the good release 0.4.31 is not good"
    )
