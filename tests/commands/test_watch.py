"""``watch`` over two releases whose results are already stored (nothing is installed): its exit
statuses, the summary it writes, what it remembers and what it measures again; then, marked
``releases``, real watches through nox on a small script folder and a small pytest-benchmark
suite."""

import json
import os
import shutil

import jsonschema
import pytest

from harness.commands.ranges import RangeRun
from harness.host.environment import machine_identity
from harness.install.venvs import ReleaseEnv, write_plan
from harness.main import main
from harness.steps.evidence import Skipped
from harness.store.results import write_result
from tests.conftest import FIXTURES, REPO, derive, nox_in_repo, real_result

SCHEMA = json.loads((REPO / "docs" / "watch.schema.json").read_text())
BASELINE, RELEASE = "0.4.31", "0.4.33"


def stored_pair(
    tmp_path, first=(1, 1), again=(1, 1), loaded_again=False, releases=(BASELINE, RELEASE)
):
    """A plan of two releases whose venvs do not exist, each release's first round stored (8
    processes at N=1000, scaled by ``first``) and its confirmation with the other (10 processes,
    scaled by ``again``; with ``loaded_again``, every process of the newer one measured under
    load)."""
    plan = tmp_path / "plan.json"
    missing = str(tmp_path / "no-such-python")
    write_plan(
        plan, [ReleaseEnv(r, r, missing, (f"jax=={r}",), tmp_path / f"venv-{r}") for r in releases]
    )
    data = real_result("async_dispatch-0.12.0.1")
    data["host"]["machine"] = machine_identity()
    for release, scale in zip(releases, first, strict=True):
        write_result(tmp_path / "results", derive(data, release=release, scale=scale, processes=8))
    for (release, scale), partner in zip(
        zip(releases, again, strict=True), releases[::-1], strict=True
    ):
        stored = derive(
            data, release=release, scale=scale, interleaved_with=[f"jax {partner} · cpu"]
        )
        stored["id"] += f"-again-with-{partner}"
        stored["created_at"] = "2099-01-01T00:00:00+00:00"
        if loaded_again and release == releases[1]:
            for process in stored["processes"]:
                process["load"]["loaded"] = True
        write_result(tmp_path / "results", stored)
    return plan


def watch_argv(tmp_path):
    return [
        "watch",
        "--case",
        "async_dispatch",
        "--profile",
        "cpu",
        "--releases",
        str(tmp_path / "plan.json"),
        "--results",
        str(tmp_path / "results"),
        "--out",
        str(tmp_path / "out"),
        "--memory",
        str(tmp_path / "memory"),
        "--no-why",
    ]


def settled(memory):
    """The settled watches the memory holds (not what an open one read)."""
    return [p for p in memory.iterdir() if not p.name.endswith(".open.json")]


def watch(tmp_path, *more):
    # The stored processes' noise (±7 %, ±20 % for one) at 8 processes a side leaves ×1.05
    # undecided, which a watch says (below); past ×1.5 they are decided.
    factor = [] if "--factor" in more else ["--factor", "1.5"]
    return main([*watch_argv(tmp_path), *factor, *more])


def summary(tmp_path):
    data = json.loads((tmp_path / "out" / "watch.json").read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    return data


def test_a_confirmed_slowdown_is_a_regression_and_exits_1(tmp_path, capsys):
    stored_pair(tmp_path, first=(1, 3), again=(1, 3))
    assert watch(tmp_path) == 1
    data = summary(tmp_path)
    [target] = data["targets"]
    assert (data["baseline"], data["release"], data["exit_status"]) == (BASELINE, RELEASE, 1)
    assert target["outcome"] == "regression" and target["kind"] == "case"
    kinds = {finding["kind"] for finding in target["findings"]}
    assert kinds == {"regression"}
    assert any(
        f["text"].startswith("eager.wall_ns: slower ×3 since 0.4.33") for f in target["findings"]
    )
    assert target["issue"][:2] == ["--case", "async_dispatch"] and "--metric" in target["issue"]
    markdown = (tmp_path / "out" / "watch.md").read_text()
    assert "**A regression was confirmed.**" in markdown and "## Regressions" in markdown
    assert (tmp_path / "out" / target["page"]).is_file(), "the target's triage page"
    assert "No process of either release was measured under load (more than 0.5 other" in markdown
    assert data["load_threshold"] == 0.5
    assert markdown in capsys.readouterr().out


def test_a_confirmed_speed_up_is_no_regression_and_exits_0(tmp_path):
    stored_pair(tmp_path, first=(3, 1), again=(3, 1))
    assert watch(tmp_path) == 0
    [target] = summary(tmp_path)["targets"]
    assert target["outcome"] == "improved" and target["issue"] == []
    assert {f["kind"] for f in target["findings"]} == {"improvement"}


def test_a_step_the_confirmation_does_not_show_stays_undecided_and_exits_3(tmp_path):
    stored_pair(tmp_path, first=(1, 3), again=(1, 1))
    assert watch(tmp_path, "--factor", "1.05") == 3
    [target] = summary(tmp_path)["targets"]
    assert target["outcome"] == "undecided"
    assert "undecided" in {f["kind"] for f in target["findings"]}


def test_a_metric_left_undecided_is_never_unchanged_nor_remembered_and_measured_anew(
    tmp_path, capsys
):
    """Issue 66 #4: benchmarks at ×0.80 "within ±86 %" read "No regression.", `"outcome":
    "unchanged"`, and the memory kept it, so the next week's watch reused it. At ×1.05 the stored
    processes' ±7 % is undecided: measured again until decided, still undecided, said so (exit 3),
    and the results it read are never read again: the next watch measures anew."""
    stored_pair(tmp_path)
    assert watch(tmp_path, "--factor", "1.05") == 3
    [target] = summary(tmp_path)["targets"]
    undecided = [f for f in target["findings"] if f["kind"] == "undecided"]
    assert target["outcome"] == "undecided" and undecided, target
    assert all("the next watch measures it again" in f["text"] for f in undecided)
    assert "measured again, until decided" in capsys.readouterr().err
    assert "## Undecided" in (tmp_path / "out" / "watch.md").read_text()
    memory = tmp_path / "memory"
    assert not settled(memory)
    [spent] = memory.glob("*.open.json")
    read = set(json.loads(spent.read_text())["results"])
    assert len(read) == 4, "both releases' first round and their measuring again"
    # Nothing it read is read again, so the second watch installs (here it cannot: no venvs).
    assert watch(tmp_path, "--factor", "1.05") == 3
    [target] = summary(tmp_path)["targets"]
    [finding] = target["findings"]
    assert finding["kind"] == "not measured" and "could not be installed" in finding["text"]


def test_a_change_measured_under_load_is_said_and_never_called_a_change(tmp_path):
    stored_pair(tmp_path, first=(1, 3), again=(1, 3), loaded_again=True)
    assert watch(tmp_path) == 3, "not 1: the slower side was measured under load"
    data = summary(tmp_path)
    [target] = data["targets"]
    under = [f for f in target["findings"] if f["kind"] == "under load"]
    assert under and all(
        "not called a change: measured under load on 0.4.33" in f["text"] for f in under
    )
    assert not [f for f in target["findings"] if f["kind"] == "regression"]
    loads = {load["release"]: load for load in target["loads"]}
    assert loads[RELEASE]["loaded"] == 10 and loads[BASELINE]["loaded"] == 0
    markdown = (tmp_path / "out" / "watch.md").read_text()
    assert "## Measured under load: not called a change" in markdown
    assert f"{RELEASE} 10 of 18" in markdown
    assert not settled(tmp_path / "memory"), "an open watch is measured again next time"


def test_a_pair_already_watched_is_reported_from_memory_and_a_new_release_is_watched(
    tmp_path, capsys
):
    stored_pair(tmp_path, first=(1, 3), again=(1, 3))
    assert watch(tmp_path) == 1
    capsys.readouterr()
    [remembered] = settled(tmp_path / "memory")
    assert remembered.name.startswith("async_dispatch-")
    for result in (tmp_path / "results").rglob("*.json"):
        result.unlink()  # what is remembered needs no result: nothing may be measured, or even read
    assert watch(tmp_path) == 1, "the remembered regression still stands"
    err = capsys.readouterr().err
    assert "watched on" in err and "not measured again" in err
    [target] = summary(tmp_path)["targets"]
    assert target["remembered"] and target["outcome"] == "regression"
    assert "(remembered from " in (tmp_path / "out" / "watch.md").read_text()

    newer = tmp_path / "newer"
    newer.mkdir()
    stored_pair(newer, releases=(RELEASE, "0.4.34"))
    shutil.copytree(tmp_path / "memory", newer / "memory")
    assert watch(newer) == 0
    [target] = summary(newer)["targets"]
    assert not target["remembered"], "a new release on the index is watched"
    assert len(settled(newer / "memory")) == 2


def test_a_watch_judged_at_another_load_threshold_is_not_the_one_remembered(tmp_path, capsys):
    stored_pair(tmp_path, first=(3, 1), again=(3, 1))
    assert watch(tmp_path) == 0
    assert watch(tmp_path, "--max-load", "1.5") == 0
    assert "not measured again" not in capsys.readouterr().err, "what counts as loaded changed"
    assert len(settled(tmp_path / "memory")) == 2
    assert summary(tmp_path)["load_threshold"] == 1.5


def test_why_is_asked_once_per_called_step_through_the_range_s_seam_and_summed_up(
    tmp_path, monkeypatch
):
    """The why is the triage's (``RangeRun.explain``, every kind within its budget), asked only of a
    change the watch calls; what it found is the summary's. The kinds stand in here: they need the
    releases installed."""
    asked = []

    def explain(run, pair, metrics, stem, releases=None):
        asked.append((pair, tuple(metrics)))
        return (Skipped("defaults", "the why's time budget ran out"),)

    monkeypatch.setattr(RangeRun, "explain", explain)
    stored_pair(tmp_path, first=(1, 3), again=(1, 3))
    argv = [a for a in watch_argv(tmp_path) if a != "--no-why"]
    assert main(argv) == 1
    [(pair, metrics)] = asked
    assert pair == (BASELINE, RELEASE) and "eager.wall_ns" in [
        c.metric.metric_name for c in metrics if c.metric
    ]
    [target] = summary(tmp_path)["targets"]
    assert target["why"] == ["defaults not asked: the why's time budget ran out"]
    assert "## Why, as far as was asked" in (tmp_path / "out" / "watch.md").read_text()

    asked.clear()
    loaded = tmp_path / "loaded"
    loaded.mkdir()
    stored_pair(loaded, first=(1, 3), again=(1, 3), loaded_again=True)
    assert main([a for a in watch_argv(loaded) if a != "--no-why"]) == 3
    assert asked == [], "a change measured under load is not called, so not asked why"


def test_a_watch_asks_only_the_kinds_of_why_named_and_refuses_a_name_no_kind_has(
    tmp_path, monkeypatch, capsys
):
    """``--why-kinds`` reaches each target's triage as ``triage --why-kinds`` does; a typo is one
    line and exit 2 before anything is measured."""
    kinds = []
    monkeypatch.setattr(RangeRun, "explain", lambda run, *a, **k: kinds.append(run.options) or ())
    stored_pair(tmp_path, first=(1, 3), again=(1, 3))
    argv = [a for a in watch_argv(tmp_path) if a != "--no-why"]
    assert main([*argv, "--why-kinds", "library,defaults"]) == 1
    assert [options.why_kinds for options in kinds] == [("library", "defaults")]
    assert main([*argv, "--why-kinds", "libary"]) == 2
    assert "--why-kinds: no kind named 'libary'" in capsys.readouterr().err
    assert len(kinds) == 1


def test_a_plan_that_is_not_the_named_pair_is_refused(tmp_path, capsys):
    stored_pair(tmp_path)
    assert watch(tmp_path, "--release", "0.4.34") == 2
    assert "runs 0.4.31 and 0.4.33, not 0.4.34" in capsys.readouterr().err


# --- real releases, through nox

# a while_loop 0.4.33 runs ×30 slower than 0.4.31: a script and a suite
WATCHED = FIXTURES / "watch"
LOOP = "json.loop_ms"
BENCH = "bench.test_while_loop_py_test_while_loop.wall_ns"
# 7 a side: the fewest whose rank test can confirm at level 0.002 (docs/statistics.md).
FEW = ["--processes", "3", "--max-processes", "7", "--repeats", "3", "--max-seconds", "0.3"]


def nox_watch(tmp_path, *posargs):
    places = [
        "--results",
        str(tmp_path / "results"),
        "--out",
        str(tmp_path / "out"),
        "--memory",
        str(tmp_path / "memory"),
    ]
    ends = ["--baseline", BASELINE, "--release", RELEASE]
    return nox_in_repo("-s", "watch", "--", *posargs, *ends, *FEW, *places, "--no-why")


def why_not(done, tmp_path) -> str:
    """What the watch said, for a failed assertion: its summary, else the end of its output."""
    page = tmp_path / "out" / "watch.md"
    return page.read_text() if page.is_file() else done.stderr[-4000:]


@pytest.mark.releases
def test_a_real_watch_of_a_script_folder_calls_a_real_regression_then_remembers_it(tmp_path):
    """The while_loop regression of jax 0.4.33 (×30 here) through nox: called a regression (exit 1),
    settled, so a second watch measures nothing.

    This machine may be shared: at the default threshold (0.5 other cores busy) every process of a
    loaded machine is flagged and the watch, rightly, calls nothing (the stored-results test above
    holds it to that). Flagging only above every core of the machine lets this test see the watch
    call a change that load neither makes nor hides."""
    scripts = tmp_path / "scripts"
    shutil.copytree(WATCHED / "scripts", scripts)
    unflagged = ["--max-load", str(os.cpu_count())]
    done = nox_watch(tmp_path, "--scripts", str(scripts), *unflagged)
    assert done.returncode == 1, why_not(done, tmp_path)
    assert "measured together" in done.stdout, "the target's triage answer, printed"
    data = summary(tmp_path)
    [target] = data["targets"]
    assert (target["target"], target["kind"], target["outcome"], target["remembered"]) == (
        "script-while_loop",
        "script",
        "regression",
        None,
    )
    [loop] = [f for f in target["findings"] if f["metric"] == LOOP]
    assert loop["kind"] == "regression" and loop["ratio"] > 5, loop
    assert "slower ×" in loop["text"] and f"since {RELEASE}" in loop["text"]
    assert data["exit_status"] == 1 and target["issue"][:1] == ["--script"]
    assert target["detectable"][LOOP] < loop["ratio"], "a ×30 change is above what it could see"
    assert {load["release"] for load in target["loads"]} == {BASELINE, RELEASE}
    assert all(load["processes"] >= 3 for load in target["loads"])
    assert str(tmp_path) not in (tmp_path / "out" / "watch.md").read_text()
    again = nox_watch(tmp_path, "--scripts", str(scripts), *unflagged)
    assert again.returncode == 1, why_not(again, tmp_path)
    said = again.stdout + again.stderr  # nox passes the command's stderr on in its stdout
    assert "not measured again" in said and "measured together" not in said, said[-4000:]
    [remembered] = summary(tmp_path)["targets"]
    assert remembered["remembered"] and remembered["outcome"] == "regression"


@pytest.mark.releases
def test_a_real_watch_of_a_pytest_benchmark_suite_takes_each_benchmark_s_rounds(tmp_path):
    """The same regression as a pytest-benchmark suite, run unchanged, a process flagged as loaded
    at the default threshold (``off``: flagged, not measured again, which keeps the test short): the
    change is confirmed either way, called a regression (exit 1) where no process was measured under
    load, else said and not called (exit 3)."""
    suite = tmp_path / "bench"
    shutil.copytree(WATCHED / "suite", suite)
    done = nox_watch(tmp_path, "--pytest-benchmark", str(suite), "--max-load", "off")
    assert done.returncode in (1, 3), why_not(done, tmp_path)
    data = summary(tmp_path)
    [target] = data["targets"]
    assert (target["target"], target["kind"]) == ("script-pytest-bench", "pytest-benchmark")
    loaded = sum(load["loaded"] for load in target["loads"])
    benches = [f for f in target["findings"] if f["metric"] == BENCH]
    assert len(benches) == 1, (target["findings"], why_not(done, tmp_path))
    [bench] = benches
    assert bench["ratio"] > 5 and "slower ×" in bench["text"], bench
    if loaded:
        assert bench["kind"] == "under load" and "not called a change" in bench["text"]
        assert done.returncode == 3 and target["outcome"] == "undecided"
    else:
        assert bench["kind"] == "regression" and done.returncode == 1, bench
    assert data["exit_status"] == done.returncode and data["load_threshold"] == 0.5
    stored = [json.loads(p.read_text()) for p in (tmp_path / "results").rglob("*.json")]
    rounds = {
        len(process["programs"]["bench.test_while_loop_py_test_while_loop"]["samples"])
        for result in stored
        for process in result["processes"]
        if process["status"] == "ok"
    }
    assert rounds == {10}, "each round a sample, each process a unit"
    assert sorted(p.name for p in suite.iterdir()) == ["test_while_loop.py"], (
        "nothing written into the suite"
    )
    assert all(str(tmp_path) not in json.dumps(result) for result in stored), (
        "the suite's path in no result"
    )


@pytest.mark.parametrize(
    ("field", "planted"),
    [
        ("watched_at", '2026-12-01 <img src=x onerror="alert(1)">\x1b]0;owned\x07'),
        ("page", "javascript:alert(1)"),
        ("loads", [{"release": "<img src=x>", "loaded": -1, "processes": 8}]),
    ],
)
def test_a_memory_file_s_fields_are_checked_on_recall(tmp_path, capsys, field, planted):
    """Issue 57 #7: a memory file's fields reached watch.md (the CI job's summary) and stdout raw
    (HTML, links, ESC), and watch.json then failed its own schema. A file no watch wrote is measured
    again (each field: tests/steps/test_watch.py)."""
    stored_pair(tmp_path, first=(1, 3), again=(1, 3))
    assert watch(tmp_path) == 1
    [remembered] = (tmp_path / "memory").iterdir()
    document = json.loads(remembered.read_text())
    if field == "watched_at":
        document["watched_at"] = planted
    else:
        document["watch"][field] = planted
    remembered.write_text(json.dumps(document))
    capsys.readouterr()
    assert watch(tmp_path) == 1
    said = capsys.readouterr()
    assert "not measured again" not in said.err, "a tampered memory is measured again"
    [target] = summary(tmp_path)["targets"]  # held to docs/watch.schema.json
    assert target["remembered"] is None
    markdown = (tmp_path / "out" / "watch.md").read_text()
    for text in (markdown, said.out):
        assert "<img" not in text and "<b>" not in text and "\x1b" not in text
        assert "javascript:" not in text and "example.com" not in text


@pytest.mark.releases
def test_a_real_watch_of_a_library_s_suite_takes_the_maintainer_s_selection(tmp_path):
    """Issue 66 #1, #2, #6: a suite shaped like optimistix's (no JAX in it: both releases run the
    same code), narrowed by -k and its conftest's own option, each benchmark judged and named on the
    summary by its test and parameters, the triage page without a claim column."""
    library = tmp_path / "library"
    shutil.copytree(FIXTURES / "watch" / "library", library)
    selection = "--pytest-args=-k solve --max-dimension=4 --benchmark-max-time=0.005"
    done = nox_watch(tmp_path, "--pytest-benchmark", str(library / "benchmarks"), selection)
    assert done.returncode in (0, 3), why_not(done, tmp_path)
    [target] = summary(tmp_path)["targets"]
    assert sorted(target["medians"]) == [
        f"bench.test_optimise_py_test_solve_{solver}-Problem_dimension_{d}.wall_ns"
        for solver in ("Bisection_tol_0_001_+bisection", "Newton_tol_1e-06_+newton")
        for d in (1, 4)
    ], target["medians"]
    assert not [f for f in target["findings"] if f["kind"] == "regression"], target["findings"]
    markdown = (tmp_path / "out" / "watch.md").read_text()
    assert "## Benchmarks of `script-pytest-benchmarks`" in markdown
    floor = target["floor"]  # issue 78 #1: said after the first process of each side
    assert floor["import_s"] >= 0.5 and floor["processes_needed"] == 7, floor
    assert f"Its floor, said after its first process of each side: {floor['said']}" in markdown
    assert f"[watch] script-pytest-benchmarks: {floor['said']}" in done.stdout + done.stderr
    page = (tmp_path / "out" / target["page"]).read_text()
    [releases] = [
        line for line in page.splitlines() if line.startswith("| jax ") and "status" in line
    ]
    assert "claim" not in releases, releases
