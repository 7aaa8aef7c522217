"""Writing a draft: the script runs from its own folder, bisect answers are found by case name."""

from harness.upstream.issue import load_bisects, run_script


def test_bisect_answers_are_found_by_case_name(tmp_path):
    (tmp_path / "bisect-scan_sync.json").write_text('{"answer": "a"}')
    (tmp_path / "bisect-scan_sync-fails.json").write_text('{"answer": "b"}')
    (tmp_path / "bisect-scan_sync_other.json").write_text('{"answer": "another case"}')
    (tmp_path / "bisect-scan_sync-broken.json").write_text("{")
    found = load_bisects(tmp_path, "scan_sync")
    assert [b.name for b in found] == [
        "bisect-scan_sync.json",
        "bisect-scan_sync-broken.json",
        "bisect-scan_sync-fails.json",
    ]
    assert found[0].data == {"answer": "a"} and found[2].data == {"answer": "b"}
    assert found[1].data is None and found[1].problem
    assert load_bisects(tmp_path, "async_dispatch") == []


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
