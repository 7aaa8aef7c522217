import json
import os
import shutil
from pathlib import Path

import pytest

from harness.store.results import (
    SCHEMA_VERSION,
    RunStatus,
    StoredResult,
    content_hash,
    load_results,
    new_identity,
    newest_runs,
    result_path,
    write_result,
)
from harness.store.schema import SCHEMA, ProcessRun, Result, Settings, parse
from harness.units import UNRECORDED_MACHINE
from tests.conftest import FIXTURES, document, real_result

SAMPLE = {"marks_ns": [1], "wall_ns": 2}
PROGRAM = {
    "steps": ["call"],
    "warmup": 1,
    "loops": 1,
    "stopped_by": "repeats",
    "first_call": SAMPLE,
}


def record(**overrides):
    """A result of the newest schema version, measured in one process unless ``processes`` says
    otherwise."""
    fields = dict(
        case="steady", release="0.4.26", profile="cpu", sizes={"K": 1}, status="ok", processes=[]
    )
    fields.update(overrides)
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        **new_identity()._asdict(),
        **fields,
    }


def process(index=0, status="ok", **fields):
    return {
        "index": index,
        "status": status,
        "detail": "",
        "load": None,
        "affinity": None,
        **fields,
    }


def test_round_trip(tmp_path):
    original = record(processes=[process(programs={"p": {**PROGRAM, "samples": [SAMPLE]}})])
    path = write_result(tmp_path, original)
    loaded, problems = load_results(tmp_path)
    assert problems == []
    assert path == result_path(tmp_path, loaded[0].result)
    assert [document(r) for r in loaded] == [original]
    assert loaded[0].result.case == "steady" and loaded[0].result.sizes == {"K": 1}
    assert loaded[0].content_hash == content_hash(original)
    [only] = loaded[0].result.processes
    assert only.programs["p"].samples[0].dispatch_ns == 1 and only.status is RunStatus.OK
    assert not list(tmp_path.rglob(".tmp-*")), "no temporary file is left behind"


def test_a_typed_result_is_stored_as_it_writes_itself(tmp_path):
    identity = new_identity()
    result = Result(
        identity.id,
        identity.created_at,
        "steady",
        "0.4.26",
        "cpu",
        {"K": 1},
        RunStatus.FAILED,
        (ProcessRun(0, RunStatus.FAILED, "exit code 1"),),
        settings=Settings(processes=3),
    )
    path = write_result(tmp_path, result)
    assert json.loads(path.read_text()) == result.to_json()
    [loaded] = load_results(tmp_path)[0]
    assert loaded.result == result and parse(result.to_json()) == result


def test_a_new_identity_sorts_by_time():
    first, second = new_identity(), new_identity()
    assert (
        first.id != second.id
        and first.id[:15] <= second.id[:15]
        and first.created_at <= second.created_at
    )


def test_a_stored_result_is_never_overwritten(tmp_path):
    first = record()
    write_result(tmp_path, first)
    with pytest.raises(FileExistsError):
        write_result(tmp_path, {**first, "status": "failed"})
    loaded, _ = load_results(tmp_path)
    assert [r.result.status for r in loaded] == ["ok"]


def test_two_runs_get_two_files(tmp_path):
    write_result(tmp_path, record())
    write_result(tmp_path, record())
    assert len(load_results(tmp_path)[0]) == 2


def test_invalid_record_is_refused_before_writing(tmp_path):
    with pytest.raises(ValueError, match="unknown status"):
        write_result(tmp_path, record(status="great"))
    with pytest.raises(ValueError, match=r"processes\[0\]\.programs\.p\.samples: missing"):
        write_result(tmp_path, record(processes=[process(programs={"p": PROGRAM})]))
    assert not list(tmp_path.rglob("*.json"))


def test_an_older_record_is_written_as_the_newest_version(tmp_path):
    old = record(programs={"p": {**PROGRAM, "samples": [SAMPLE]}}, schema_version=1)
    del old["processes"]
    written = json.loads(write_result(tmp_path, old).read_text())
    assert written["schema_version"] == SCHEMA_VERSION and "programs" not in written
    assert written["processes"][0]["programs"]["p"]["samples"] == [SAMPLE]


def test_loader_names_bad_files_and_keeps_the_rest(tmp_path):
    write_result(tmp_path, record())
    (tmp_path / "truncated.json").write_text('{"schema": "jax-repro')
    future = record()
    future["schema_version"] = SCHEMA_VERSION + 1
    (tmp_path / "future.json").write_text(json.dumps(future))
    (tmp_path / "stranger.json").write_text(json.dumps({"hello": 1}))
    partial = record()
    del partial["sizes"]
    (tmp_path / "partial.json").write_text(json.dumps(partial))
    (tmp_path / ".tmp-abandoned.json").write_text("{")
    (tmp_path / "folder.json").mkdir()  # a folder named like a result is walked into, not read

    loaded, problems = load_results(tmp_path)
    assert len(loaded) == 1
    reasons = {p.path.name: p.reason for p in problems}
    assert set(reasons) == {"truncated.json", "future.json", "stranger.json", "partial.json"}
    assert "unreadable JSON" in reasons["truncated.json"]
    assert f"schema version {SCHEMA_VERSION + 1}" in reasons["future.json"]
    assert "not a harness result" in reasons["stranger.json"]
    assert "sizes" in reasons["partial.json"]
    assert "truncated.json" in str(problems[0]) or any("truncated.json" in str(p) for p in problems)


UNUSABLE = {
    "host-is-a-list.json": "host: expected object, got list",
    "sizes-is-text.json": "sizes: expected object, got str",
    "programs-is-a-list.json": "processes[0].programs: expected object, got list",
    "claim-is-text.json": "processes[0].claim: expected object, got str",
    "machine-id-is-a-list.json": "host.machine.id: expected str, got list",
    "sample-without-wall.json": "processes[0].programs.jit.samples[0].wall_ns: missing",
}


def test_a_file_with_a_field_of_the_wrong_type_is_named_with_the_field(tmp_path):
    shutil.copytree(FIXTURES / "results", tmp_path / "results")
    shutil.copytree(FIXTURES / "unusable", tmp_path / "results" / "unusable")
    loaded, problems = load_results(tmp_path / "results")
    assert sorted(r.result.case for r in loaded) == ["async_dispatch", "scan_sync"], (
        "the rest loads"
    )
    reasons = {p.path.name: p.reason for p in problems}
    assert set(reasons) == set(UNUSABLE)
    for name, reason in UNUSABLE.items():
        assert reasons[name].startswith(reason), reasons[name]
    assert reasons["claim-is-text.json"].endswith("(as migrated from schema version 1)"), (
        "a version-1 file says so"
    )


def test_a_fifo_named_like_a_result_is_named_not_waited_for(tmp_path):
    write_result(tmp_path, record())
    os.mkfifo(tmp_path / "x.json")
    loaded, problems = load_results(tmp_path)  # reading a FIFO without a writer would block forever
    assert len(loaded) == 1
    assert [(p.path.name, p.reason) for p in problems] == [("x.json", "not a regular file")]


def test_the_same_result_twice_counts_once_and_a_clash_of_ids_is_named(tmp_path):
    original = record()
    write_result(tmp_path / "artifact-1", original)
    write_result(tmp_path / "artifact-2", original)
    (tmp_path / "reindented.json").write_text(json.dumps(original))  # same content, other bytes
    loaded, problems = load_results(tmp_path)
    assert len(loaded) == 1 and problems == []
    (tmp_path / "zz-clash.json").write_text(json.dumps({**original, "status": "failed"}))
    loaded, problems = load_results(tmp_path)
    assert [r.result.status for r in loaded] == ["ok"]
    [problem] = problems
    assert (
        problem.path.name == "zz-clash.json"
        and f"id {original['id']} is already used by" in problem.reason
    )


def test_content_hash_ignores_layout_not_content():
    original = record()
    assert content_hash(json.loads(json.dumps(original, indent=3))) == content_hash(original)
    assert content_hash({**original, "status": "failed"}) != content_hash(original)


def test_fields_this_harness_does_not_know_are_ignored(tmp_path):
    newer = record(future_field={"anything": [1]}, processes=[process(future_process_field=3)])
    write_result(tmp_path, newer)
    [loaded], problems = load_results(tmp_path)
    assert problems == [] and loaded.result.status is RunStatus.OK


def test_results_from_before_machine_ids_still_load(tmp_path):
    """host.machine was added without a schema bump: older results load as from an unrecorded
    machine."""
    old = record(host={"cpu_model": "AMD EPYC", "variables": {"JAX_PLATFORMS": "cpu"}})
    write_result(tmp_path, old)
    [loaded], problems = load_results(tmp_path)
    assert problems == [] and loaded.result.machine == UNRECORDED_MACHINE
    newer = StoredResult.from_document(
        tmp_path, {**old, "host": {"machine": {"id": "0123456789abcdef", "basis": "x"}}}
    )
    assert newer.result.machine == "0123456789abcdef"


@pytest.mark.parametrize(
    ("jax", "variables", "backend"),
    [
        ({"backend": "gpu"}, {"JAX_PLATFORMS": "cpu"}, "gpu"),  # what JAX said wins
        # died before saying: the pin
        ({"error": "RuntimeError: no CUDA"}, {"JAX_PLATFORMS": "cuda"}, "gpu"),
        (None, {"JAX_PLATFORMS": "cpu"}, "cpu"),
        (None, {}, "unknown"),
    ],
)
def test_backend_of_a_run(jax, variables, backend):
    data = record(
        host={"variables": variables}, processes=[process(**({"jax": jax} if jax else {}))]
    )
    assert StoredResult.from_document(Path("x.json"), data).result.backend == backend


def test_the_newest_run_per_key_is_chosen_and_older_ones_counted():
    runs = [
        StoredResult.from_document(
            Path(f"{i}.json"), record(created_at=when, id=f"run{i}", sizes={"K": size})
        )
        for i, (when, size) in enumerate(
            [("2026-01-02", 1), ("2026-01-01", 1), ("2026-01-02", 2), ("2026-01-03", 1)]
        )
    ]
    newest = newest_runs(runs, lambda r: r.result.sizes["K"])
    assert {k: (v.result.result.id, v.older) for k, v in newest.items()} == {
        1: ("run3", 2),
        2: ("run2", 0),
    }
    tied = newest_runs(
        [
            *runs[:2],
            StoredResult.from_document(Path("x"), record(created_at="2026-01-02", id="run9")),
        ],
        lambda r: 0,
    )
    assert tied[0].result.result.id == "run9", "the id breaks a tie in creation time"


@pytest.mark.parametrize("mask", [0o022, 0o077])
def test_a_stored_result_has_the_mode_open_gives_under_the_umask_as_a_page_beside_it_does(
    tmp_path, mask
):
    old = os.umask(mask)
    try:
        path = write_result(tmp_path, real_result("async_dispatch-0.12.0.1"))
        (tmp_path / "page.md").write_text("x")
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask
    assert path.stat().st_mode == (tmp_path / "page.md").stat().st_mode


def test_a_result_read_again_is_parsed_once_and_other_bytes_at_its_path_are_read_anew(
    tmp_path, monkeypatch
):
    import harness.store.results as results

    path = write_result(tmp_path, record(sizes={"K": 1}))
    first = results.read_result(path)
    assert results.read_result(path) is first, "the same bytes: the result already parsed"
    # Other bytes of the same length, at once (a file's times may not tell them apart): read anew.
    path.write_text(path.read_text().replace('"K": 1', '"K": 2'))
    second = results.read_result(path)
    assert second.result.sizes == {"K": 2}
    monkeypatch.setattr(results, "READ_KEPT_BYTES", path.stat().st_size)
    results.read_result(write_result(tmp_path, record(sizes={"K": 3})))
    assert results._READ.bytes_kept <= path.stat().st_size
    assert results.read_result(path) is not second, "the oldest let go past the bound"
