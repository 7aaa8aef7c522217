"""Merging result folders from two machines (tests/fixtures/machines/) into one."""

import json
import shutil

import pytest

from harness.errors import UsageError
from harness.main import main
from harness.store.results import load_results, merge, result_path, write_result
from tests.conftest import FIXTURES, derive, document, real_result

MACHINES = FIXTURES / "machines"
SOURCES = [MACHINES / "runner-a", MACHINES / "runner-b", MACHINES / "runner-a-again"]


def test_two_machines_merge_into_one_folder_and_a_duplicate_counts_once(tmp_path):
    merged = merge(SOURCES, tmp_path / "results")
    assert (len(merged.copied), merged.duplicates, merged.problems) == (3, 1, [])
    results, problems = load_results(tmp_path / "results")
    assert problems == [] and len(results) == 3
    assert len({r.result.machine for r in results}) == 2
    for result in results:
        assert result.path == result_path(tmp_path / "results", result.result), (
            "stored where the harness stores"
        )
    originals = {
        r.result.id: r.path.read_bytes() for source in SOURCES[:2] for r in load_results(source)[0]
    }
    assert {r.result.id: r.path.read_bytes() for r in results} == originals, "copied byte for byte"


def test_merging_the_same_folders_again_copies_nothing(tmp_path):
    merge(SOURCES, tmp_path / "results")
    again = merge(SOURCES, tmp_path / "results")
    assert (again.copied, again.duplicates, again.problems) == ([], 4, [])


def test_a_result_that_takes_another_results_id_is_left_out_and_named(tmp_path):
    [original] = load_results(MACHINES / "runner-b")[0]
    tampered = tmp_path / "tampered" / "result.json"
    tampered.parent.mkdir()
    tampered.write_text(json.dumps({**document(original), "status": "failed"}))
    merged = merge([MACHINES / "runner-b", tampered.parent], tmp_path / "results")
    assert len(merged.copied) == 1
    [problem] = merged.problems
    assert (
        problem.startswith(f"{tampered}: id {original.result.id} is already in ")
        and "other content" in problem
    )
    assert [r.result.status for r in load_results(tmp_path / "results")[0]] == ["ok"]


def test_an_unusable_file_is_named_and_the_rest_merged(tmp_path):
    artifact = tmp_path / "artifact"
    shutil.copytree(MACHINES / "runner-a", artifact)
    (artifact / "broken.json").write_text("{")
    merged = merge([artifact], tmp_path / "results")
    assert len(merged.copied) == 2
    [problem] = merged.problems
    assert problem.startswith(f"{artifact / 'broken.json'}: unreadable JSON")


def test_bad_folders_are_refused(tmp_path):
    with pytest.raises(UsageError, match="results folder not found"):
        merge([tmp_path / "nowhere"], tmp_path / "results")
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match="is a file"):
        merge([MACHINES / "runner-a"], tmp_path / "file")


def test_the_command_prints_one_line_per_problem_and_exits_1_only_then(tmp_path, capsys):
    into = tmp_path / "results"
    assert main(["merge", *map(str, SOURCES), "--into", str(into)]) == 0
    assert capsys.readouterr().err == f"merged into {into}: 3 copied, 1 already there, 0 left out\n"
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "x.json").write_text("[]")
    assert main(["merge", str(tmp_path / "broken"), "--into", str(into)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"left out {tmp_path / 'broken' / 'x.json'}: not a JSON object",
        f"merged into {into}: 0 copied, 0 already there, 1 left out",
    ]


def test_a_result_another_merge_copied_meanwhile_is_a_duplicate_not_a_conflict(
    tmp_path, monkeypatch
):
    import harness.store.results as merge_module
    from harness.store.results import load_results as load

    source = tmp_path / "a"
    write_result(source, derive(real_result("scan_sync-0.12.0.1")))
    into = tmp_path / "into"
    # The other merge copies the same result after this one loaded ``into`` (then empty) and before
    # it copies.
    monkeypatch.setattr(
        merge_module, "load_results", lambda folder: ([], []) if folder == into else load(folder)
    )
    merge_module.merge([source], into)
    merged = merge_module.merge([source], into)
    assert merged.problems == [] and merged.duplicates == 1
