"""``issue``'s command line: what it measures itself takes a triage's first look unless told
otherwise."""

import pytest

from harness.cli.issue import IssueRequest
from harness.cli.parser import validate
from harness.errors import UsageError


def issue(tmp_path, *more):
    return validate(["issue", "--case", "scan_sync", "--results", str(tmp_path / "r"), *more])[1]


def test_what_issue_measures_itself_takes_five_processes_a_release_up_to_twenty(tmp_path):
    checked = issue(tmp_path)
    assert isinstance(checked, IssueRequest)
    assert checked.settings.effort == "full", "the draft's own script runs sample as full"
    assert (checked.processes, checked.max_processes) == (5, 20)
    assert (
        issue(tmp_path, "--processes", "3").processes,
        issue(tmp_path, "--processes", "3").max_processes,
    ) == (3, 12)


@pytest.mark.parametrize(
    ("more", "said"),
    [
        (("--processes", "2"), "no verdict is possible with fewer than 3"),
        (("--max-processes", "4"), "--max-processes must be at least --processes"),
    ],
)
def test_too_few_processes_are_refused_in_one_line(tmp_path, more, said):
    with pytest.raises(UsageError, match=said):
        issue(tmp_path, *more)


def test_status_asks_for_a_crash_report_and_names_no_metric_with_it(tmp_path):
    checked = issue(tmp_path, "--status", "--good", "0.4.31", "--bad", "0.4.33")
    assert isinstance(checked, IssueRequest) and checked.status and checked.metric is None
    assert not issue(tmp_path).status
    with pytest.raises(UsageError, match="--metric: not allowed with argument --status"):
        issue(tmp_path, "--status", "--metric", "scan.wall_ns")
    spelt = issue(tmp_path, "--metric", "process.end", "--good", "0.4.31", "--bad", "0.4.33")
    assert spelt == checked, "--status is the spelling of --metric process.end"
