"""``--script FILE``: a plain repro script measured, stored and judged like a case, through the
command line.

Real processes throughout: the scripts under ``fixtures/scripts`` run as ``python FILE`` on the JAX
installed here.  Timing assertions are ratios with generous margins, never absolute times.
"""

import json
import shutil

from harness.analysis.metrics import compare_metric, metric_samples
from harness.analysis.significance import Thresholds, Verdict
from harness.cli.parser import parse
from harness.cli.ranges import check as checked_range_args
from harness.main import main
from harness.metric_names import parse_metric_name
from tests.conftest import FIXTURES, stored_in

SCRIPTS = FIXTURES / "scripts"
# The judging's wiring is under test, not this shared machine's noise: a looser significance level
# than the default, with ratios far beyond the factor.
LOOSE = Thresholds(alpha=0.05)


def run_script(script, results, *options):
    return main(
        ["run", "--script", str(script), "--results", str(results), "--profile", "cpu", *options]
    )


def test_a_plain_jax_script_is_timed_as_a_whole_process_in_each_of_its_processes(tmp_path, capsys):
    assert run_script(SCRIPTS / "cumsum_loop.py", tmp_path / "r", "--processes", "2") == 0
    [result] = stored_in(tmp_path / "r")
    assert (result.result.case, result.result.status, result.result.profile) == (
        "script-cumsum_loop",
        "ok",
        "cpu",
    )
    assert result.result.script is not None and result.result.script.file == "cumsum_loop.py"
    samples = {key.metric_name: found for key, found in metric_samples(result).items()}
    phases = [
        "process.wall_ns",
        "process.import_ns",
        "process.trace_ns",
        "process.lower_ns",
        "process.compile_ns",
        "process.run_ns",
        "process.peak_rss_bytes",
    ]
    assert sorted(samples) == sorted(phases), (
        "the whole process and its phases, the script left as it is"
    )
    assert all(len(found.processes) == 2 for found in samples.values()), (
        "one run of the script per process"
    )
    wall, imported, run = (
        samples[name].figure for name in ("process.wall_ns", "process.import_ns", "process.run_ns")
    )
    assert 0 < imported < wall and 0 < run < wall, (
        "the import of jax apart from the script's own run"
    )
    document = json.loads(result.path.read_text())
    assert [p["script"]["exit_status"] for p in document["processes"]] == [0, 0]
    assert all(p["jax"]["backend"] == "cpu" for p in document["processes"]), (
        "the side's JAX, for the record"
    )


def test_a_script_that_exits_non_zero_is_a_recorded_failure_and_the_run_goes_on(tmp_path, capsys):
    assert run_script(SCRIPTS / "exits_nonzero.py", tmp_path / "r", "--processes", "2") == 0
    [result] = stored_in(tmp_path / "r")
    assert result.result.status == "failed" and [p.status for p in result.result.processes] == [
        "failed",
        "failed",
    ]
    assert (
        "exited with code 1" in result.result.detail
        and "the repro broke here" in result.result.detail
    )
    assert (
        run_script(
            SCRIPTS / "exits_nonzero.py", tmp_path / "r", "--processes", "2", "--force", "--strict"
        )
        == 1
    )


def test_an_exported_case_round_trips_judged_on_the_figures_it_prints(tmp_path, capsys):
    sizes = ["--size", "N=16", "--size", "M=3"]
    exported = tmp_path / "scan_sync.py"
    assert main(["export", "scan_sync", *sizes, "--repeats", "3", "--out", str(exported)]) == 0
    assert run_script(exported, tmp_path / "script", "--processes", "2") == 0
    case_run = ["run", "--case", "scan_sync", *sizes, "--repeats", "3", "--processes", "1"]
    assert main([*case_run, "--results", str(tmp_path / "case")]) == 0
    [script_result], [case_result] = stored_in(tmp_path / "script"), stored_in(tmp_path / "case")
    assert script_result.result.case == "script-scan_sync" and script_result.result.status == "ok"
    script_metrics = [key for key in metric_samples(script_result) if key.name != "process"]
    case_metrics = [key for key in metric_samples(case_result) if key.name != "process"]
    assert script_metrics == case_metrics, "the case's own metrics, beside the phases"
    claims = [p.claim for p in script_result.result.processes]
    assert all(claim is not None and claim.evidence for claim in claims), (
        "its claim lines, as the case's verdict"
    )


def test_a_scripts_json_numbers_are_metrics_and_its_arguments_reach_it(tmp_path, capsys):
    script = tmp_path / "reports_itself.py"
    script.write_text(
        "import json, sys, time\n"
        "n = int(sys.argv[sys.argv.index('--n') + 1])\n"
        "for _ in range(3):\n"
        "    t = time.perf_counter(); sum(range(n)); ms = (time.perf_counter() - t) * 1e3\n"
        "    print(json.dumps({'loop_ms': ms, 'n': n, 'label': 'plain'}))\n"
    )
    assert (
        run_script(
            script, tmp_path / "r", "--processes", "2", "--script-arg=--n", "--script-arg", "200000"
        )
        == 0
    )
    [result] = stored_in(tmp_path / "r")
    assert result.result.script.args == ("--n", "200000")
    samples = {key.metric_name: found for key, found in metric_samples(result).items()}
    assert {"json.loop_ms", "json.n"} <= set(samples) and samples["json.n"].figure == 200000
    assert all(p.printed["json.label"] == ('"plain"',) for p in result.result.processes), (
        "a text field is a value, kept as printed"
    )
    assert samples["json.label"].shown(parse_metric_name("json.label")) == '"plain"'
    assert all("json.loop_ms" in p.printed for p in result.result.processes), "3 values each"
    assert "process.import_ns" not in samples, "no jax imported: no import phase, never a zero"
    capsys.readouterr()
    assert (
        run_script(
            script, tmp_path / "r", "--processes", "2", "--script-arg=--n", "--script-arg", "10"
        )
        == 2
    )
    assert "other arguments" in capsys.readouterr().err, (
        "results of another command line are never mixed"
    )


def test_a_whole_process_is_judged_over_processes(tmp_path, capsys):
    """A 0.5 s longer script is slower, its two versions measured as two sides of one run.

    Interleaved, so that whatever else this machine does falls on both alike: measured in two
    separate runs with other work about, the rule would rightly refuse a verdict.
    """
    from harness.measure.sides import release_label

    plan = tmp_path / "sides.json"
    plan.write_text(
        json.dumps(
            [
                {
                    "release": release_label(),
                    "profile": label,
                    "env": {"HARNESS_TEST_SLEEP_S": seconds},
                }
                for label, seconds in (("short", "0"), ("long", "0.5"))
            ]
        )
    )
    argv = [
        "run",
        "--script",
        str(SCRIPTS / "sleeps.py"),
        "--results",
        str(tmp_path / "r"),
        "--sides",
        str(plan),
    ]
    assert main([*argv, "--processes", "4"]) == 0
    by_side = {
        result.result.profile: metric_samples(result) for result in stored_in(tmp_path / "r")
    }
    short, long = by_side["short"], by_side["long"]
    assert {key.metric_name for key in short} == {
        "process.wall_ns",
        "process.run_ns",
        "process.peak_rss_bytes",
    }, "no jax: no JAX phases"
    [key] = [key for key in short if key.metric_name == "process.wall_ns"]
    change = compare_metric(short[key], long[key], LOOSE)
    assert change.invocation_spread == 0, "one run: no allowance between runs"
    assert change.verdict == Verdict.SLOWER and change.cost.ratio > 1.5, change


def test_printed_figures_are_judged_over_processes(tmp_path, capsys):
    assert run_script(SCRIPTS / "prints_figures.py", tmp_path / "r", "--processes", "4") == 0
    [result] = stored_in(tmp_path / "r")
    samples = {
        key.metric_name: found
        for key, found in metric_samples(result).items()
        if key.name != "process"
    }
    assert set(samples) == {"small.wall_ns", "large.wall_ns"}, (
        "what it printed, no dispatch stood in, and the phases"
    )
    change = compare_metric(samples["small.wall_ns"], samples["large.wall_ns"], LOOSE)
    assert change.verdict == Verdict.SLOWER and change.cost.ratio > 3, "20 times the work"


def test_a_changed_script_is_refused_rather_than_mixed_with_the_old_ones_results(tmp_path, capsys):
    script = tmp_path / "repro.py"
    shutil.copy(SCRIPTS / "prints_figures.py", script)
    assert run_script(script, tmp_path / "r", "--processes", "1") == 0
    script.write_text(script.read_text() + "# edited\n")
    capsys.readouterr()
    assert run_script(script, tmp_path / "r", "--processes", "1") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "never mixed" in err and "another version" in err
    assert len(stored_in(tmp_path / "r")) == 1


def test_bisect_and_sweep_take_a_script_in_place_of_the_case(tmp_path):
    argv = [
        "sweep",
        "--script",
        str(SCRIPTS / "cumsum_loop.py"),
        "--from",
        "0.4.26",
        "--to",
        "0.4.35",
        "--metric",
        "process.wall_ns",
        "--results",
        str(tmp_path),
    ]
    options = checked_range_args(parse(argv))
    assert (
        options.case.name == "script-cumsum_loop"
        and options.case.subject.kind == "script"
        and options.sizes == {}
    )
    assert options.metric is not None and options.metric.metric_name == "process.wall_ns"


def test_an_issue_draft_quotes_the_script_as_it_is_and_its_real_output(tmp_path, capsys):
    out = tmp_path / "reports"
    argv = [
        "issue",
        "--script",
        str(SCRIPTS / "prints_figures.py"),
        "--results",
        str(tmp_path / "r"),
    ]
    assert main([*argv, "--out", str(out)]) == 0
    copied = out / "issues" / "script-prints_figures.py"
    assert copied.read_text() == (SCRIPTS / "prints_figures.py").read_text()
    draft = (out / "issues" / "script-prints_figures.md").read_text()
    assert "metric large wall_ns median=" in draft


ENVIRONMENT_SCRIPT = """import json, os
print("metric env wall_ns median=1 min=1 max=1 n=1")
for name in ("XLA_FLAGS", "TPU_SKIP_MDS_QUERY", "PYTHONPATH"):
    print("fact", name, json.dumps(os.environ.get(name)))
"""


def test_in_either_isolation_the_script_sees_the_sides_environment_not_the_harnesss(
    tmp_path, monkeypatch, capsys
):
    script = tmp_path / "environment.py"
    script.write_text(ENVIRONMENT_SCRIPT)
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    # what a JAX import sets: the fork worker's does
    monkeypatch.delenv("TPU_SKIP_MDS_QUERY", raising=False)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    for isolation in ("fork", "spawn"):
        assert (
            run_script(script, tmp_path / isolation, "--processes", "1", "--isolation", isolation)
            == 0
        )
        [result] = stored_in(tmp_path / isolation)
        assert result.result.status == "ok", result.result.detail
        assert dict(result.result.processes[0].facts) == {
            "XLA_FLAGS": "--xla_force_host_platform_device_count=2",
            "TPU_SKIP_MDS_QUERY": None,
            "PYTHONPATH": None,
        }, isolation
