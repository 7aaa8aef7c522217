"""A pytest-benchmark suite's JSON as programs: each benchmark's rounds its samples, its name a
program's, and whatever the file holds beyond a result's bounds left out with a note."""

import hashlib
import json

from harness.measure.benchmark_json import MAX_BENCHMARKS, program_name, read_suite_run
from harness.measure.script_process import run_script


def written(tmp_path, benchmarks):
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps({"benchmarks": benchmarks, "version": "5.1.0"}))
    return path


def bench(fullname, data):
    return {"name": fullname.rpartition("::")[2], "fullname": fullname, "stats": {"data": data}}


def test_each_benchmark_is_a_program_whose_rounds_are_its_samples_in_nanoseconds(tmp_path):
    run = read_suite_run(
        written(tmp_path, [bench("tests/test_a.py::test_f[8]", [1e-6, 2e-6, 3e-6])])
    )
    [(name, program)] = run.programs.items()
    assert name == "bench.test_a_py_test_f_8"
    assert [s.wall_ns for s in program.samples] == [1000.0, 2000.0, 3000.0]
    assert program.kinds == ("wall",) and run.notes == []


def test_names_keep_no_folder_and_a_clash_gets_a_number():
    assert (
        program_name("/home/someone/lib/bench/test_x.py::test_f", set()) == "bench.test_x_py_test_f"
    )
    assert program_name("a/test_x.py::t", {"bench.test_x_py_t"}) == "bench.test_x_py_t_2"


def test_what_no_result_could_hold_is_left_out_with_a_note(tmp_path):
    entries = [
        bench("t.py::nan", [float("nan")]),
        bench("t.py::words", ["fast"]),
        bench("t.py::none", []),
        {"stats": {"data": [1.0]}},
        *[bench(f"t.py::b{i}", [1e-6]) for i in range(MAX_BENCHMARKS)],
    ]
    path = tmp_path / "benchmarks.json"
    path.write_text(json.dumps({"benchmarks": entries}).replace("NaN", "1e400"))
    run = read_suite_run(path)
    assert len(run.programs) == MAX_BENCHMARKS - 4
    notes = " | ".join(run.notes)
    assert "which no measurement gives" in notes and "a round that is not a number" in notes
    assert "no rounds" in notes and "without a name" in notes and "the first 200 kept" in notes


def test_no_file_is_no_suite_and_a_broken_one_is_said(tmp_path):
    assert read_suite_run(tmp_path / "absent.json").programs == {}
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert read_suite_run(broken).notes[0].startswith("pytest-benchmark's JSON not read")


def test_a_script_writing_the_json_the_harness_names_is_judged_on_its_rounds(tmp_path):
    script = tmp_path / "suite.py"
    script.write_text(
        "import json, os\n"
        "rounds = [0.001, 0.002]\n"
        "doc = {'benchmarks': [{'fullname': 'b.py::test_b', 'stats': {'data': rounds}}],"
        " 'harness_phases': {'import_ns': 7, 'collection_ns': 3, 'other_ns': 1}}\n"
        "open(os.environ['HARNESS_BENCHMARK_JSON'], 'w').write(json.dumps(doc))\n"
    )
    process = run_script(script, hashlib.sha256(script.read_bytes()).hexdigest(), 60.0)
    assert [s.wall_ns for s in process.programs["bench.b_py_test_b"].samples] == [1e6, 2e6]
    assert list(process.programs) == ["bench.b_py_test_b"], "not the process around it"
    assert not process.figures, "nor its phases"
    assert process.script["judged_on"] == "pytest-benchmark rounds"
    assert process.script["wall_ns"] > 0, "the process's time kept in its record"
    phases = {"import_ns": 7.0, "collection_ns": 3.0, "benchmarks_ns": 3e6}
    assert process.script["suite_phases"] == phases, "what the process cost, where"


def test_phases_no_watch_writes_are_left_out(tmp_path):
    path = tmp_path / "benchmarks.json"
    phases = {"import_ns": -1, "collection_ns": 1.5, "run_ns": 4}
    path.write_text(json.dumps({"benchmarks": [], "harness_phases": phases}))
    assert read_suite_run(path).phases == {}
