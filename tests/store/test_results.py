import json
from pathlib import Path

import pytest

from harness.store.results import (
    SCHEMA_VERSION,
    StoredResult,
    content_hash,
    load_results,
    new_record,
    result_path,
    write_result,
)
from harness.units import UNRECORDED_MACHINE


def record(**overrides):
    fields = dict(case="steady", release="0.4.26", profile="cpu", sizes={"K": 1}, status="ok")
    fields.update(overrides)
    return new_record(**fields)


def test_round_trip(tmp_path):
    original = record(programs={"p": {"samples": [{"marks_ns": [1], "wall_ns": 2}]}})
    path = write_result(tmp_path, original)
    assert path == result_path(tmp_path, original)
    loaded, problems = load_results(tmp_path)
    assert problems == []
    assert [r.data for r in loaded] == [original]
    assert loaded[0].case == "steady" and loaded[0].sizes == {"K": 1}
    assert not list(tmp_path.rglob(".tmp-*")), "no temporary file is left behind"


def test_a_stored_result_is_never_overwritten(tmp_path):
    first = record()
    write_result(tmp_path, first)
    with pytest.raises(FileExistsError):
        write_result(tmp_path, {**first, "status": "failed"})
    loaded, _ = load_results(tmp_path)
    assert [r.status for r in loaded] == ["ok"]


def test_two_runs_get_two_files(tmp_path):
    write_result(tmp_path, record())
    write_result(tmp_path, record())
    assert len(load_results(tmp_path)[0]) == 2


def test_invalid_record_is_refused_before_writing(tmp_path):
    with pytest.raises(ValueError, match="unknown status"):
        write_result(tmp_path, record(status="great"))
    assert not list(tmp_path.rglob("*.json"))


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

    loaded, problems = load_results(tmp_path)
    assert len(loaded) == 1
    reasons = {p.path.name: p.reason for p in problems}
    assert set(reasons) == {"truncated.json", "future.json", "stranger.json", "partial.json"}
    assert "unreadable JSON" in reasons["truncated.json"]
    assert f"schema version {SCHEMA_VERSION + 1}" in reasons["future.json"]
    assert "not a harness result" in reasons["stranger.json"]
    assert "sizes" in reasons["partial.json"]
    assert "truncated.json" in str(problems[0]) or any("truncated.json" in str(p) for p in problems)


def test_the_same_result_twice_counts_once_and_a_clash_of_ids_is_named(tmp_path):
    original = record()
    write_result(tmp_path / "artifact-1", original)
    write_result(tmp_path / "artifact-2", original)
    (tmp_path / "reindented.json").write_text(json.dumps(original))  # same content, other bytes
    loaded, problems = load_results(tmp_path)
    assert len(loaded) == 1 and problems == []
    (tmp_path / "zz-clash.json").write_text(json.dumps({**original, "status": "failed"}))
    loaded, problems = load_results(tmp_path)
    assert [r.status for r in loaded] == ["ok"]
    [problem] = problems
    assert problem.path.name == "zz-clash.json" and f"id {original['id']} is already used by" in problem.reason


def test_content_hash_ignores_layout_not_content():
    original = record()
    assert content_hash(json.loads(json.dumps(original, indent=3))) == content_hash(original)
    assert content_hash({**original, "status": "failed"}) != content_hash(original)


def test_results_from_before_machine_ids_still_load(tmp_path):
    """host.machine was added without a schema bump: older results load as from an unrecorded machine."""
    old = record(host={"cpu_model": "AMD EPYC", "variables": {"JAX_PLATFORMS": "cpu"}})
    write_result(tmp_path, old)
    [loaded], problems = load_results(tmp_path)
    assert problems == [] and loaded.machine == UNRECORDED_MACHINE
    newer = StoredResult(tmp_path, {**old, "host": {"machine": {"id": "0123456789abcdef", "basis": "x"}}})
    assert newer.machine == "0123456789abcdef"


@pytest.mark.parametrize(
    ("jax", "variables", "backend"),
    [
        ({"backend": "gpu"}, {"JAX_PLATFORMS": "cpu"}, "gpu"),  # what JAX said wins
        ({"error": "RuntimeError: no CUDA"}, {"JAX_PLATFORMS": "cuda"}, "gpu"),  # died before saying: the pin
        (None, {"JAX_PLATFORMS": "cpu"}, "cpu"),
        (None, {}, "unknown"),
    ],
)
def test_backend_of_a_run(jax, variables, backend):
    data = record(host={"variables": variables}) | ({"jax": jax} if jax else {})
    assert StoredResult(Path("x.json"), data).backend == backend
