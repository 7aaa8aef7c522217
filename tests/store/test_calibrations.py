"""The calibration file: appended per machine, read back, refused when unusable, left alone by the
loader."""

import json
from datetime import UTC, datetime

import pytest

from harness.analysis.noise_floor import summarize_calibration
from harness.errors import HarnessError
from harness.store.calibrations import (
    CALIBRATION_SCHEMA,
    append_calibration,
    calibration_path,
    latest_calibrations,
    read_calibration,
)
from harness.store.results import CALIBRATION_FOLDER, load_results
from tests.commands.test_calibrate import FAST, plan
from tests.conftest import as_stored, derive, real_result, write_results


def a_calibration(created_at: datetime):
    base = real_result("scan_sync-0.12.0.1")
    pair = (as_stored(derive(base, profile="a")), as_stored(derive(base, profile="b")))
    slowdown = (pair[0], as_stored(derive(base, scale=1.3)))
    return summarize_calibration(plan(pairs=1), FAST, [pair], [slowdown], created_at)


def test_calibrations_are_appended_per_machine_and_read_back(tmp_path):
    first = a_calibration(datetime(2026, 6, 1, tzinfo=UTC))
    second = a_calibration(datetime(2026, 6, 2, tzinfo=UTC))
    path = append_calibration(tmp_path, first)
    assert append_calibration(tmp_path, second) == path == calibration_path(tmp_path, first.machine)
    assert path.parent.name == CALIBRATION_FOLDER
    document = json.loads(path.read_text())
    assert document["schema"] == CALIBRATION_SCHEMA and document["machine"] == first.machine
    assert document["runs"][0]["aa"]["false_positive_rate"] == 0.0
    assert read_calibration(path) == [first, second]
    latest, problems = latest_calibrations(tmp_path)
    assert latest == {first.machine: second} and problems == []
    assert list(path.parent.iterdir()) == [path], "no temporary file left behind"


def test_a_bad_calibration_file_is_named_and_never_replaced(tmp_path):
    run = a_calibration(datetime(2026, 6, 1, tzinfo=UTC))
    path = append_calibration(tmp_path, run)
    document = json.loads(path.read_text())
    document["runs"][0]["aa"]["flagged"] = "none"
    path.write_text(json.dumps(document))
    (path.parent / "other.json").write_text("{not json")
    latest, problems = latest_calibrations(tmp_path)
    assert latest == {}
    assert sorted(problems) == sorted(
        [
            f"{path}: runs[0].aa.flagged: expected int, got str",
            f"{path.parent / 'other.json'}: unreadable JSON (Expecting property name enclosed in "
            "double quotes: line 1 column 2 (char 1))",
        ]
    )
    with pytest.raises(HarnessError, match="not a usable calibration file"):
        append_calibration(tmp_path, run)
    assert json.loads(path.read_text()) == document


def test_the_results_loader_leaves_calibrations_alone(tmp_path):
    results = write_results(
        tmp_path / "scan_sync" / "jax-0.12.0.1" / "cpu", [real_result("scan_sync-0.12.0.1")]
    )
    append_calibration(tmp_path, a_calibration(datetime(2026, 6, 1, tzinfo=UTC)))
    loaded, problems = load_results(tmp_path)
    assert len(loaded) == 1 and problems == []
    assert results.is_dir()


def test_a_calibration_records_the_spread_between_invocations_and_reads_it_back(tmp_path):
    run = a_calibration(datetime(2026, 6, 1, tzinfo=UTC))
    assert (run.invocation_spread, run.aa_loaded) == (0.0, False)
    [back] = read_calibration(append_calibration(tmp_path, run))
    assert (back.invocation_spread, back.aa_loaded) == (0.0, False)
    older = json.loads(calibration_path(tmp_path, run.machine).read_text())
    del older["runs"][0]["aa"]["invocation_spread"]
    del older["runs"][0]["aa"]["loaded"]
    calibration_path(tmp_path, run.machine).write_text(json.dumps(older))
    [old] = read_calibration(calibration_path(tmp_path, run.machine))
    assert (old.invocation_spread, old.aa_loaded) == (None, False)
    older["runs"][0]["aa"]["loaded"] = "yes"
    calibration_path(tmp_path, run.machine).write_text(json.dumps(older))
    with pytest.raises(ValueError, match=r"aa\.loaded: expected bool, got str"):
        read_calibration(calibration_path(tmp_path, run.machine))


def test_machine_ids_that_sanitise_alike_get_files_of_their_own(tmp_path):
    names = {
        calibration_path(tmp_path, machine).name
        for machine in ("a+b", "a_b", "a/b", "..", "", "é", "x" * 300)
    }
    assert len(names) == 7 and "a_b.json" in names
    assert all(not name.startswith(".") and len(name) < 255 for name in names)
    assert calibration_path(tmp_path, "0123456789abcdef").name == "0123456789abcdef.json"
