import signal

import pytest

from harness.measure.case_process import ProcessRun, classify
from harness.measure.load import Load


@pytest.mark.parametrize(
    ("returncode", "payload", "status"),
    [
        (-signal.SIGKILL, None, "crashed"),
        (-signal.SIGABRT, None, "crashed"),
        (1, None, "failed"),
        (70, None, "failed"),
        (0, None, "failed"),
        (0, {"status": "skipped", "detail": "why"}, "skipped"),
        (0, {"status": "ok", "programs": {}}, "ok"),
    ],
)
def test_classify(returncode, payload, status):
    assert classify(returncode, payload, "line 1\nlast line")[0] == status


def test_sigkill_mentions_memory_and_the_output_tail_is_kept():
    status, detail, payload = classify(-signal.SIGKILL, None, "line 1\nlast line")
    assert status == "crashed" and "OOM" in detail and detail.endswith("last line") and payload == {}


def test_a_process_record_has_the_schema_fields_and_its_payload():
    run = ProcessRun(2, "ok", "", {"programs": {}, "peak_rss_bytes": 5}, 1.23456, (10, 20), Load(0.1, 0.5, False), [0])
    assert run.as_record() == {
        "index": 2,
        "status": "ok",
        "detail": "",
        "duration_s": 1.235,
        "window_unix_ns": [10, 20],
        "load": {"other_cpu_cores": 0.1, "loadavg_1m": 0.5, "loaded": False, "attempts": 1},
        "affinity": [0],
        "programs": {},
        "peak_rss_bytes": 5,
    }
    assert ProcessRun(0, "crashed").as_record()["load"] is None
