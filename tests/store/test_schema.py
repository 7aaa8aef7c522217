import json

import pytest

from harness.store.migrations import upgrade
from harness.store.schema import (
    NOTHING_RECORDED,
    SCHEMA,
    SCHEMA_VERSION,
    ProcessRun,
    Result,
    RunStatus,
    SchemaError,
    Settings,
    TimedSample,
    parse,
)
from harness.units import UNRECORDED_MACHINE
from tests.conftest import FIXTURES


def document(**fields):
    """A minimal result document of the newest version: one process that finished ok."""
    base = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "id": "r1",
        "created_at": "2026-11-29T12:00:00+00:00",
        "case": "steady",
        "release": "0.4.26",
        "profile": "cpu",
        "sizes": {"K": 1},
        "status": "ok",
        "processes": [{"index": 0, "status": "ok"}],
    }
    return base | fields


def program(**fields):
    sample = {"marks_ns": [3, 5], "wall_ns": 8}
    return {
        "steps": ["a", "b"],
        "loops": 4,
        "first_call": sample,
        "samples": [sample, sample],
    } | fields


def error_of(data):
    with pytest.raises(SchemaError) as caught:
        parse(data)
    return str(caught.value)


def test_a_document_becomes_typed_records():
    data = document(
        processes=[
            {
                "index": 0,
                "status": "ok",
                "load": {"other_cpu_cores": 0.7, "loadavg_1m": 1.5, "loaded": True, "attempts": 2},
                "affinity": [0, 1],
                "programs": {"p": program()},
                "compiled": {"f": {"lower_ns": [1, 2], "compile_ns": [3], "hlo": {"fusions": 2}}},
                "claim": {"holds": False, "evidence": "why", "backend": "cpu"},
                "jax": {"backend": "cpu", "device_count": 8, "device_kinds": ["cpu"]},
                "phases_s": {"import": 0.5},
                "peak_rss_bytes": 1024,
            },
            {"index": 1, "status": "crashed", "detail": "killed by SIGSEGV"},
        ],
        settings={"repeats": 10, "processes": 2, "affinity": [0], "max_load": None},
        interleaved_with=["jax 0.4.30 · cpu"],
        host={"machine": {"id": "0123456789abcdef", "basis": "hardware only"}, "usable_cores": 2},
    )
    result = parse(data)
    assert isinstance(result, Result) and result.status is RunStatus.OK
    first, second = result.processes
    assert (
        isinstance(first, ProcessRun)
        and second.status is RunStatus.CRASHED
        and second.detail == "killed by SIGSEGV"
    )
    assert first.load is not None and first.load.loaded and first.load.attempts == 2
    assert first.affinity == (0, 1) and first.peak_rss_bytes == 1024
    stored = first.programs["p"]
    assert (
        stored.loops == 4
        and stored.steps == ("a", "b")
        and stored.first_call == TimedSample((3, 5), 8)
    )
    assert [s.dispatch_ns for s in stored.samples] == [5, 5]
    assert first.compiled["f"].lower_ns == (1, 2) and first.compiled["f"].hlo == {"fusions": 2}
    assert first.claim is not None and first.claim.holds is False and first.claim.backend == "cpu"
    assert result.finished() == (first,), "only the process that finished ok"
    assert (result.backend, result.device_count, result.device_kinds) == ("cpu", 8, ("cpu",))
    assert result.machine == "0123456789abcdef" and result.host.usable_cores == 2
    assert result.interleaved_with == ("jax 0.4.30 · cpu",)
    assert result.settings.shown() == {"repeats": 10, "processes": 2, "affinity": (0,)}
    assert result.order == ("2026-11-29T12:00:00+00:00", "r1")


def test_optional_fields_default_and_unknown_ones_are_ignored():
    result = parse(
        document(from_a_newer_harness={"x": [1]}, processes=[{"status": "skipped", "new": 1}])
    )
    [only] = result.processes
    assert only.index == 0 and only.programs == {} and only.claim is None and only.jax is None
    assert result.settings == NOTHING_RECORDED and result.settings.shown() == {}
    assert result.machine == UNRECORDED_MACHINE
    assert (
        result.backend == "unknown"
        and result.device_count is None
        and result.interleaved_with == ()
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"host": [1]}, "host: expected object, got list"),
        ({"host": {"machine": {"id": ["a"]}}}, "host.machine.id: expected str, got list"),
        ({"sizes": "abc"}, "sizes: expected object, got str"),
        ({"sizes": {"K": 1.5}}, "sizes.K: expected int, got float"),
        ({"sizes": {"K": True}}, "sizes.K: expected int, got bool"),
        (
            {"status": "great"},
            "status: unknown status 'great' (expected one of ok, failed, timeout, crashed, "
            "skipped, not installable)",
        ),
        ({"processes": {"0": {}}}, "processes: expected list, got object"),
        (
            {"processes": [{"status": "ok", "programs": [1, 2, 3]}]},
            "processes[0].programs: expected object, got list",
        ),
        (
            {"processes": [{"status": "ok", "claim": "yes"}]},
            "processes[0].claim: expected object, got str",
        ),
        (
            {"processes": [{"status": "ok", "claim": {"evidence": "x"}}]},
            "processes[0].claim.holds: missing",
        ),
        ({"processes": [{"index": 0}]}, "processes[0].status: missing"),
        (
            {
                "processes": [
                    {
                        "status": "ok",
                        "programs": {"p": program(samples=[{"marks_ns": [], "wall_ns": 1}])},
                    }
                ]
            },
            "processes[0].programs.p.samples[0].marks_ns: expected at least one mark",
        ),
        (
            {
                "processes": [
                    {
                        "status": "ok",
                        "programs": {"p": program(samples=[{"marks_ns": ["1"], "wall_ns": 1}])},
                    }
                ]
            },
            "processes[0].programs.p.samples[0].marks_ns[0]: expected number, got str",
        ),
        ({"window_unix_ns": [1, 2, 3]}, "window_unix_ns: expected [start, end], got 3 values"),
        ({"settings": {"affinity": "0,1"}}, "settings.affinity: expected list, got str"),
        ({"interleaved_with": "jax 0.4.26"}, "interleaved_with: expected list, got str"),
        (
            {"script": {"file": "a.py", "sha256": "abc"}},
            "script.sha256: expected 64 lowercase hex digits",
        ),
        ({"script": {"sha256": "0" * 64}}, "script.file: missing"),
        (
            {"processes": [{"status": "ok", "programs": {"p": program(kinds=["wall", "speed"])}}]},
            "processes[0].programs.p.kinds: expected a non-empty list of wall and dispatch",
        ),
    ],
)
def test_a_wrong_field_is_named_by_its_path(change, message):
    assert error_of(document(**change)) == message


def test_what_is_not_a_result_of_this_version_is_refused():
    assert error_of([]) == "not a JSON object"
    assert error_of({"hello": 1}) == "not a harness result (schema None)"
    missing = document()
    del missing["case"]
    assert error_of(missing) == "case: missing"
    assert (
        error_of(document(schema_version=1))
        == f"schema_version: 1 where {SCHEMA_VERSION} was expected (migrate it first)"
    )
    error = SchemaError("host.cpu_model", "expected str, got int")
    assert (error.field, error.problem) == ("host.cpu_model", "expected str, got int")


def test_statuses_are_one_vocabulary_and_serialise_as_text():
    assert [str(s) for s in RunStatus] == [
        "ok",
        "failed",
        "timeout",
        "crashed",
        "skipped",
        "not installable",
    ]
    assert json.dumps({"status": RunStatus.TIMEOUT}) == '{"status": "timeout"}'
    assert RunStatus("crashed") is RunStatus.CRASHED and RunStatus.OK == "ok"


def test_the_backend_falls_back_to_the_platform_the_profile_pinned():
    died = document(
        processes=[{"status": "crashed", "jax": {"error": "RuntimeError: no CUDA"}}],
        host={"variables": {"JAX_PLATFORMS": "cuda,cpu"}},
    )
    assert parse(died).backend == "gpu" and parse(died).jax is None


def test_the_source_of_new_results_and_the_discussion_of_older_ones_both_load():
    """Results name where their case comes from as ``source``; those stored before carry
    ``discussion``."""
    new = parse(document(source="https://github.com/jax-ml/jax/discussions/21411"))
    old = parse(document(discussion="sharding-pmap-scaling.txt"))
    assert (new.source, new.discussion) == ("https://github.com/jax-ml/jax/discussions/21411", "")
    assert (old.source, old.discussion) == ("", "sharding-pmap-scaling.txt")
    assert error_of(document(source=["x"])) == "source: expected str, got list"


def test_a_plain_scripts_result_names_the_script_and_what_its_programs_measured():
    script = {"file": "repro.py", "sha256": "ab" * 32}
    processes = [{"index": 0, "status": "ok", "programs": {"process": program(kinds=["wall"])}}]
    result = parse(document(script=script, processes=processes))
    assert result.script is not None and (result.script.file, result.script.sha256) == (
        "repro.py",
        "ab" * 32,
    )
    assert result.processes[0].programs["process"].kinds == ("wall",)
    case = parse(document(processes=[{"index": 0, "status": "ok", "programs": {"p": program()}}]))
    assert case.script is None and case.processes[0].programs["p"].kinds == ("wall", "dispatch")


STORED = sorted(
    path
    for folder in ("results", "v1", "machines", "synthetic")
    for path in (FIXTURES / folder).rglob("*.json")
    if json.loads(path.read_text()).get("schema") == SCHEMA
)


def left_out_at_default(value):
    return value in (None, {}, [], "")


def missing_from(original, written, where=""):
    """Paths of what ``original`` holds that ``written`` lost or changed (left out at a default is
    kept)."""
    if isinstance(original, dict) and isinstance(written, dict):
        return [
            lost
            for key, value in original.items()
            if not (key not in written and left_out_at_default(value))
            for lost in missing_from(value, written.get(key), f"{where}.{key}")
        ]
    if isinstance(original, list) and isinstance(written, list) and len(original) == len(written):
        pairs = enumerate(zip(original, written, strict=True))
        return [lost for i, pair in pairs for lost in missing_from(*pair, f"{where}[{i}]")]
    return [] if original == written else [where]


@pytest.mark.parametrize("path", STORED, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_stored_result_writes_itself_back_whole(path):
    """The writer beside each parser loses nothing a stored file holds: every field the harness ever
    wrote has its place in a record, and reading what was written gives the same record."""
    original = upgrade(json.loads(path.read_text()))
    result = parse(original)
    written = json.loads(json.dumps(result.to_json()))
    assert missing_from(original, written) == []
    assert parse(written) == result


@pytest.mark.parametrize("machine", [{}, {"id": None, "basis": "hardware only"}, {"id": ""}])
def test_a_machine_without_an_id_reads_and_writes_back_as_unrecorded(machine):
    result = parse(document(host={"machine": machine}))
    assert result.host.machine is None and result.machine == UNRECORDED_MACHINE
    assert parse(json.loads(json.dumps(result.to_json()))) == result, "what it wrote it reads back"


def test_settings_a_result_does_not_record_are_not_invented():
    result = parse(document(settings={"repeats": 10, "affinity": None}))
    assert (
        result.settings.shown() == {"repeats": 10} and result.settings.recorded("processes") is None
    )
    assert result.settings.to_json() == {"repeats": 10, "affinity": None}
    assert (
        Settings(processes=3).to_json()["processes"] == 3 and Settings().recorded("processes") == 1
    )
