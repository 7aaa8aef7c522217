"""Writing a draft: the script runs from its own folder, bisect answers are found by case name."""

import json

from harness.upstream.issue import load_bisects, run_script


def test_bisect_answers_are_found_by_case_name(tmp_path):
    (tmp_path / "bisect-scan_sync.json").write_text('{"answer": "a"}')
    (tmp_path / "bisect-scan_sync_other.json").write_text('{"answer": "another case"}')
    (tmp_path / "bisect-scan_sync-broken.json").write_text("{")
    found = load_bisects(tmp_path, "scan_sync")
    assert [b.name for b in found] == ["bisect-scan_sync.json", "bisect-scan_sync-broken.json"]
    assert found[0].data == {"answer": "a"}
    assert found[1].data is None and found[1].problem
    assert load_bisects(tmp_path, "async_dispatch") == []


def answer(tmp_path, name, **data):
    (tmp_path / name).write_text(json.dumps(data))


def test_the_newest_answer_of_the_case_is_quoted_preferring_the_drafts_sizes_and_profile(tmp_path):
    answer(tmp_path, "bisect-scan_sync-a.json", case="scan_sync", created_at="2026-01-02T00:00:00+00:00",
           sizes={"N": 100}, profile="cpu", answer="regression")  # fmt: skip
    answer(tmp_path, "bisect-scan_sync-b.json", case="scan_sync", created_at="2026-01-03T00:00:00+00:00",
           sizes={"N": 100}, profile="cpu", answer="fixed in 0.5.0 (last broken 0.4.38)")  # fmt: skip
    answer(tmp_path, "bisect-scan_sync-c.json", case="scan_sync", created_at="2026-01-04T00:00:00+00:00",
           sizes={"N": 7}, profile="cpu", answer="at other sizes")  # fmt: skip
    # Named like scan_sync's but another case's answer: its own case decides.
    answer(tmp_path, "bisect-scan_sync-d.json", case="scan_sync-d", created_at="2027-01-01T00:00:00+00:00")
    assert [b.name for b in load_bisects(tmp_path, "scan_sync")] == ["bisect-scan_sync-c.json"]
    assert [b.name for b in load_bisects(tmp_path, "scan_sync", {"N": 100}, "cpu")] == ["bisect-scan_sync-b.json"]
    assert [b.name for b in load_bisects(tmp_path, "scan_sync", {"N": 5}, "cpu")] == ["bisect-scan_sync-c.json"]
    assert [b.name for b in load_bisects(tmp_path, "scan_sync-d")] == ["bisect-scan_sync-d.json"]


def test_the_script_runs_by_name_from_its_folder(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text("import os, sys\nprint(os.getcwd())\nprint(sys.argv[0])\nsys.exit(3)\n")
    code, out, _ = run_script(script, timeout_s=60)
    assert code == 3
    assert out.splitlines() == [str(tmp_path), "probe.py"], "tracebacks then name the file, not a local path"


def test_a_script_that_hangs_is_stopped(tmp_path):
    script = tmp_path / "hangs.py"
    script.write_text("import time\nprint('started', flush=True)\ntime.sleep(60)\n")
    code, out, _ = run_script(script, timeout_s=1)
    assert code is None and "started" in out
