import copy

import pytest

from harness.store.migrations import MIGRATIONS, V1_PROCESS_FIELDS, upgrade, v1_to_v2, v2_to_v3
from harness.store.schema import SCHEMA_VERSION, SchemaError, parse
from tests.conftest import v1_result


def test_a_version_1_result_becomes_one_measured_in_one_process():
    old = v1_result("scan_sync-0.12.0.1")
    kept = copy.deepcopy(old)
    new = v1_to_v2(old)
    assert old == kept, "the loaded document is not changed"
    assert new["schema_version"] == 2 and new["interleaved_with"] == []
    assert not set(V1_PROCESS_FIELDS) & set(new), "per-process fields left the top level"
    [process] = new["processes"]
    assert process["index"] == 0 and (process["status"], process["detail"]) == (
        old["status"],
        old["detail"],
    )
    assert process["load"] is None and process["affinity"] is None
    assert process["duration_s"] == old["duration_s"]
    for key in ("compiled", "claim", "jax"):
        assert process[key] == old[key]
    [(name, program)] = process["programs"].items()
    assert program == {**old["programs"][name], "loops": 1}
    assert new["settings"] == {
        **old["settings"],
        "processes": 1,
        "min_sample_ns": 0,
        "affinity": None,
        "max_load": None,
    }
    for key in set(old) - set(V1_PROCESS_FIELDS) - {"schema_version", "settings"}:
        assert new[key] == old[key], key


def test_migrations_run_in_order_up_to_the_newest_version():
    assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION))
    result = parse(upgrade(v1_result("async_dispatch-0.12.0.1")))
    [process] = result.processes
    assert result.settings.processes == 1 and process.programs["jit"].loops == 1
    newest = upgrade(v1_result("async_dispatch-0.12.0.1"))
    assert upgrade(newest) == newest, "the newest version is left as it is"


def test_a_malformed_version_1_document_migrates_and_parse_names_the_field():
    broken = {**v1_result("async_dispatch-0.12.0.1"), "programs": [1, 2, 3], "settings": "fast"}
    with pytest.raises(SchemaError, match=r"^processes\[0\]\.programs: expected object, got list$"):
        parse(upgrade(broken))


@pytest.mark.parametrize("version", [0, 4, "1", True, None])
def test_versions_this_harness_does_not_read_are_refused(version):
    with pytest.raises(
        SchemaError, match=f"schema version {version!r} is not one this harness reads"
    ):
        upgrade({**v1_result("async_dispatch-0.12.0.1"), "schema_version": version})


@pytest.mark.parametrize(
    ("status", "detail", "died"),
    [
        (
            "crashed",
            "killed by SIGSEGV\nFatal Python error",
            {
                "how": "signal",
                "signal": "SIGSEGV",
                "from_outside": False,
                "last_lines": "Fatal Python error",
            },
        ),
        (
            "crashed",
            "python repro.py was killed by SIGKILL",
            {"how": "signal", "signal": "SIGKILL", "from_outside": True},
        ),
        (
            "failed",
            "python repro.py exited with code 4\nValueError: no",
            {"how": "exit", "exit_status": 4, "last_lines": "ValueError: no"},
        ),
        (
            "failed",
            "Traceback ...\nKeyError: 'x'",
            {"how": "raised", "last_lines": "Traceback ...\nKeyError: 'x'"},
        ),
        ("timeout", "no result within 60 s; killed\n", {"how": "timeout", "timeout_s": 60.0}),
        ("ok", "", None),
    ],
)
def test_a_version_2_process_keeps_where_it_died_as_its_detail_says(status, detail, died):
    old = {**v1_to_v2(v1_result("async_dispatch-0.12.0.1")), "status": status}
    old["processes"][0].update(status=status, detail=detail)
    kept = copy.deepcopy(old)
    new = v2_to_v3(old)
    assert old == kept and new["schema_version"] == 3
    assert new["processes"][0].get("died") == died
    parsed = parse(new).processes[0]
    assert (parsed.died is None) == (died is None)
