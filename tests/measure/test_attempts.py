import signal

import pytest

from harness.measure.attempts import classify
from harness.store.schema import ProcessLoad, ProcessRun, RunStatus


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
        (0, {"status": "great"}, "failed"),
        (0, [1], "failed"),
    ],
)
def test_classify(returncode, payload, status):
    assert classify(returncode, payload, "line 1\nlast line").status is RunStatus(status)


def test_sigkill_mentions_memory_and_the_output_tail_is_kept():
    process = classify(-signal.SIGKILL, None, "line 1\nlast line")
    assert (
        process.status is RunStatus.CRASHED
        and "OOM" in process.detail
        and process.detail.endswith("last line")
    )
    assert process.programs == {} and process.claim is None


def test_a_payload_it_cannot_read_is_a_failed_process_that_says_why():
    process = classify(0, {"status": "ok", "programs": {"p": {"steps": []}}}, "last line")
    assert process.status is RunStatus.FAILED
    unreadable = "the case process wrote an unreadable result (payload.programs.p.samples: missing)"
    assert process.detail.startswith(unreadable)


def test_a_process_record_has_the_schema_fields_and_leaves_out_what_it_did_not_measure():
    run = ProcessRun(
        2, RunStatus.OK, "", 1.235, (10, 20), ProcessLoad(0.1, 0.5, False), (0,), peak_rss_bytes=5
    )
    assert run.to_json() == {
        "index": 2,
        "status": "ok",
        "detail": "",
        "duration_s": 1.235,
        "window_unix_ns": [10, 20],
        "load": {"other_cpu_cores": 0.1, "loadavg_1m": 0.5, "loaded": False, "attempts": 1},
        "affinity": [0],
        "peak_rss_bytes": 5,
    }
    assert ProcessRun(0, RunStatus.CRASHED).to_json()["load"] is None


# one quick sample series: what these tests ask of a process is how it ends
QUICK = {"warmup": 1, "repeats": 2, "min_repeats": 1, "max_seconds": 1.0, "compile_repeats": 1}


def test_a_case_that_raises_a_huge_message_stores_a_capped_detail(tmp_path):
    from harness.measure import child

    case = tmp_path / "huge.py"
    case.write_text(
        'CLAIM = "c"\nSOURCE = "d"\nSIZE_SPACE = {"K": (1, 2)}\nANCHORS = [{"K": 1}]\n'
        "def programs(K):\n    raise ValueError('y' * 5_000_000)\n"
    )
    payload = child.run(case, {"K": 1}, QUICK)
    assert payload.status is RunStatus.FAILED and len(payload.detail) <= child.DETAIL_CHARS


def test_a_step_that_dispatches_nothing_to_jax_fails_the_process(tmp_path):
    from harness.measure import child

    case = tmp_path / "no_dispatch.py"
    case.write_text(
        'import jax.numpy as jnp\nCLAIM = "c"\nSOURCE = "d"\nSIZE_SPACE = {"K": (1, 9)}\nANCHORS = '
        '[{"K": 1}]\n'
        "def programs(K):\n"
        "    x = jnp.ones(K)\n"
        "    return {'array': [('x + 1', lambda: x + 1)], 'number': [('int', lambda: K + 1)]}\n"
        "def verdict(m):\n    return True, 'fine'\n"
    )
    payload = child.run(case, {"K": 3}, QUICK)
    assert payload.status is RunStatus.FAILED, payload
    assert (
        "program number, step int returned int, no JAX array: nothing was dispatched"
        in payload.detail
    )
