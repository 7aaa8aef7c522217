"""What the range commands share: a ``--vary`` range is the varied library's releases on the index,
bounded."""

import datetime
import math

import pytest

from harness.cli.parser import parse
from harness.cli.ranges import check
from harness.commands import ranges
from harness.errors import UsageError
from harness.install.venvs import ReleaseEnv
from harness.main import main
from harness.metric_names import ENDING, Criterion, parse_metric_name
from harness.steps.evidence import StepSides

from .conftest import release_plan

# 138 numpy releases, as many as the index lists from 1.3.0 to 2.5.4 (the hostile input's range).
NUMPY = [f"1.{3 + i // 5}.{i % 5}" for i in range(118)] + [f"2.{i // 5}.{i % 5}" for i in range(20)]


def varied(tmp_path, first, last):
    script = tmp_path / "repro.py"
    script.write_text("# /// script\n# dependencies = ['numpy']\n# ///\nprint(1)\n")
    argv = ["triage", "--script", str(script), "--results", str(tmp_path / "r")]
    more = ["--vary", "numpy", "--jax", "0.4.33", "--from", first, "--to", last]
    return check(parse([*argv, *more]))


@pytest.fixture
def listed(monkeypatch):
    when = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    monkeypatch.setattr(
        ranges.UploadTimes, "versions_with_times", lambda self, name: [(v, when) for v in NUMPY]
    )


def test_a_varied_library_s_range_over_the_bound_is_refused_before_any_release_is_resolved(
    tmp_path, listed
):
    assert len(NUMPY) == 138
    held = [ReleaseEnv("0.4.33", "0.4.33", "python3.12", (), tmp_path / "venv-0.4.33")]
    options = varied(tmp_path, NUMPY[0], NUMPY[-1])
    with pytest.raises(UsageError) as refused:
        ranges.labelled(options, held)
    assert str(refused.value) == (
        f"numpy {NUMPY[0]}–{NUMPY[-1]} is 138 releases; a triage measures each of them and takes "
        "at most 64: give a narrower --from/--to"
    )
    fitting = varied(tmp_path, NUMPY[-64], NUMPY[-1])
    renamed, labels, pins = ranges.labelled(fitting, held)
    assert len(labels) == 64 and renamed.first == f"0.4.33+numpy.{NUMPY[-64]}"
    assert pins[renamed.last] == (f"numpy=={NUMPY[-1]}",)


def test_a_varied_range_between_two_final_releases_leaves_their_pre_releases_out(
    tmp_path, monkeypatch
):
    when = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    versions = ["2.3.0", "2.4.0rc1", "2.4.0", "2.4.1"]
    monkeypatch.setattr(
        ranges.UploadTimes, "versions_with_times", lambda self, name: [(v, when) for v in versions]
    )
    held = [ReleaseEnv("0.4.33", "0.4.33", "python3.12", (), tmp_path / "venv-0.4.33")]
    _, labels, _ = ranges.labelled(varied(tmp_path, "2.3.0", "2.4.1"), held)
    assert [label.rpartition("+numpy.")[2] for label in labels] == ["2.3.0", "2.4.0", "2.4.1"]
    _, labels, _ = ranges.labelled(varied(tmp_path, "2.3.0", "2.4.0rc1"), held)
    assert len(labels) == 2, "a pre-release asked at an end is in"


FEW = ["--processes", "3", "--max-processes", "3", "--repeats", "2", "--max-seconds", "0.3"]
PRINTS_A_NUMBER = 'import json\nprint(json.dumps({"total": sum(range(1000))}))\n'


def triage_into(tmp_path, results, out, name="s"):
    script = tmp_path / f"{name}.py"
    script.write_text(PRINTS_A_NUMBER)
    plan = release_plan(tmp_path, "0.12.0", "0.12.0.1")
    argv = ["triage", "--script", str(script), "--from", "0.12.0", "--to", "0.12.0.1"]
    return main(
        [*argv, "--releases", str(plan), "--results", str(results), "--out", str(out), *FEW]
    )


@pytest.mark.parametrize("state", ["ro", "full"])
@pytest.mark.parametrize("folder", ["results", "pages"])
def test_a_folder_that_takes_no_writes_is_refused_before_anything_is_measured(
    tmp_path, this_interpreter_for_every_label, small_disk, capsys, folder, state
):
    disk = small_disk("disk", state)
    results, out = (disk, tmp_path / "out") if folder == "results" else (tmp_path / "r", disk)
    status = triage_into(tmp_path, results, out)
    err = capsys.readouterr().err
    cause = "Read-only file system" if state == "ro" else "No space left on device"
    # read-only: the folder named is bad input; full: the disk's own exit status, never 1 ("none")
    assert status == (2 if state == "ro" else 5), err
    assert err == f"harness: error: cannot write {folder} under {disk}: {cause}\n"


@pytest.mark.parametrize("folder", ["results", "pages"])
def test_a_folder_that_fills_up_mid_run_ends_the_command_with_one_line_saying_so(
    tmp_path, this_interpreter_for_every_label, small_disk, capsys, folder
):
    # One page left: the check's write fits, a result (two pages) or a triage's page and plot do
    # not.
    disk = small_disk("disk", "full", pages=1)
    results, out = (disk, tmp_path / "out") if folder == "results" else (tmp_path / "r", disk)
    status = triage_into(tmp_path, results, out)
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]
    assert "Traceback" not in err and "  not measured: " not in err, err[-3000:]
    assert status == 5 and last.startswith("harness: error: cannot "), err[-3000:]
    assert str(disk) in last and "No space left on device" in last, last


def test_a_script_whose_name_makes_the_page_s_name_too_long_is_refused_before_it_is_measured(
    tmp_path, this_interpreter_for_every_label, capsys
):
    status = triage_into(tmp_path, tmp_path / "r", tmp_path / "out", name="n" * 121)
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and err.startswith("harness: error: cannot name"), (
        err
    )
    assert "give the script a shorter name" in err
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").rglob("*.json")), (
        "nothing measured"
    )


def test_an_undeclared_package_that_moved_with_jax_is_asked_library_or_jax(tmp_path, monkeypatch):
    """``--deps as-of``: numpy (a jax dependency the script does not declare) 2.5.3 → 2.5.4 between
    the two releases' dates; every stored result records the installed set, so the why considers
    it."""
    from types import SimpleNamespace

    from harness.store.schema import Libraries

    script = tmp_path / "repro.py"
    script.write_text("# /// script\n# dependencies = ['equinox']\n# ///\nprint(1)\n")
    argv = ["triage", "--script", str(script), "--results", str(tmp_path / "r")]
    options = check(parse([*argv, "--from", "0.4.31", "--to", "0.4.33"]))
    installed = {
        "0.4.31": ("equinox==0.11.4", "jax==0.4.31", "jaxlib==0.4.31", "NumPy==2.5.3"),
        "0.4.33": ("equinox==0.11.4", "jax==0.4.33", "jaxlib==0.4.33", "numpy==2.5.4"),
    }

    def stored(label):
        had = Libraries("as-of", installed[label], "0" * 64, declared=("equinox",))
        return SimpleNamespace(result=SimpleNamespace(libraries=had))

    prober = SimpleNamespace(reuse=SimpleNamespace(stored=stored), progress=lambda line: None)
    envs = [ReleaseEnv(r, r, "python3.12", (), tmp_path / f"venv-{r}") for r in installed]
    run = ranges.RangeRun(options, envs, {env.jax: env for env in envs}, prober)  # type: ignore[arg-type]
    asked = []
    monkeypatch.setattr(ranges, "gather", lambda kinds, step, *rest: asked.append(step) or ())
    # the step's shape is read from stored results this fake prober has none of: a cost's
    monkeypatch.setattr(StepSides, "shaped", lambda self, step: step)
    run.explain(("0.4.31", "0.4.33"), [Criterion.of(parse_metric_name("json.t"))], "stem")
    [step] = asked
    assert dict(step.libraries) == {"numpy": ("2.5.3", "2.5.4")}, "jax and jaxlib are the release"
    libraries = run.libraries()
    assert libraries.moved("0.4.31", "0.4.33") == {}, "no declared library moved"
    from harness.render.why import libraries_line
    from harness.steps.answers import Setting

    setting = Setting(
        "repro", {}, "cpu", options.criterion, {}, options.thresholds, 1.0, libraries=libraries
    )
    found = libraries_line(setting, "0.4.31", "0.4.33")
    assert found is not None
    said = found.markdown()
    assert said.startswith("the script's libraries changed along with jax (numpy 2.5.3 → 2.5.4)")
    assert not said.startswith("comes with jax"), "never 'comes with jax' for a numpy change"


def test_an_answer_s_data_beside_its_page_holds_null_where_a_figure_is_not_a_number(tmp_path):
    """No ratio of a value is NaN in the answer, null in its file: the file ``issue`` reads back
    (``upstream.change.read_steps``) must parse, as every JSON the harness writes does."""
    from types import SimpleNamespace

    from harness.render.release_answers import Answer
    from harness.store.files import parse_document

    script = tmp_path / "repro.py"
    script.write_text("print(1)\n")
    argv = ["triage", "--script", str(script), "--out", str(tmp_path / "reports")]
    options = check(parse([*argv, "--from", "0.4.31", "--to", "0.4.33"]))
    run = ranges.RangeRun(options, [], {}, SimpleNamespace())  # type: ignore[arg-type]
    run.publish(Answer("", "page", {"ratio": math.nan}), "stem", data_file=True, printed=False)
    written = (tmp_path / "reports" / "stem.json").read_text()
    assert parse_document(written.encode()) == {"ratio": None}


def test_what_a_range_left_undecided_is_said_once_with_how_more_processes_may_decide(tmp_path):
    script = tmp_path / "repro.py"
    script.write_text("print(1)\n")
    argv = ["bisect", "--script", str(script), "--good", "0.4.30", "--bad", "0.4.31"]
    options = check(parse([*argv, "--results", str(tmp_path / "r"), "--max-processes", "20"]))
    said = ranges.undecided_hint(options, ["json.x 0.4.30 → 0.4.31 ×1.2"]).text
    assert said.startswith("Undecided, not unchanged (json.x 0.4.30 → 0.4.31 ×1.2): the endpoints")
    assert said.count("Undecided") == 1 and "--max-processes 40`" in said
    # a time budget may be what stopped the looks: the advice raises it too
    options = check(parse([*argv, "--results", str(tmp_path / "r"), "--time-budget", "8"]))
    said = ranges.undecided_hint(options).text
    assert "or 8 s and" in said and "--time-budget 16`" in said


def test_a_range_by_status_is_measured_until_the_counts_of_processes_that_died_decide(tmp_path):
    """The looks of a bisect by status go on deciding how the processes end (``process.end``, on
    its counts), not every metric of the processes that ran ok; with a metric, that metric."""
    script = tmp_path / "repro.py"
    script.write_text("print(1)\n")
    plan = release_plan(tmp_path, "0.4.26", "0.4.30")
    argv = ["bisect", "--script", str(script), "--good", "0.4.26", "--bad", "0.4.30"]
    argv += ["--releases", str(plan), "--results", str(tmp_path / "r")]
    for asked, judged in (("--status", ENDING), ("--metric", parse_metric_name("json.loss"))):
        words = [asked, judged.metric_name] if asked == "--metric" else [asked]
        options = check(parse([*argv, *words]))
        prober = ranges.prober_for(options, ranges.plan_for(options))
        assert prober.decide_on == (Criterion.of(judged),), asked
