"""A probe reuses the stored result of its cell; without one it installs, and says why it could not."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.releases import probes
from harness.releases.probes import ReleaseProber
from harness.releases.venvs import ReleaseEnv
from harness.store.results import write_result
from tests.conftest import derive, real_result, v1_result

# The machine the real fixtures were measured on: only its results are reused, wherever the tests run.
FIXTURE_MACHINE = real_result("async_dispatch-0.12.0.1")["host"]["machine"]["id"]


def prober(tmp_path, python="python3.12"):
    envs = {
        release: ReleaseEnv(release, release, python, ("jax==" + release,), tmp_path / f"venv-{release}")
        for release in ("0.4.30", "0.4.31", "0.4.33")
    }
    lines = []
    found = ReleaseProber(
        envs, "async_dispatch", {"N": 1000}, "cpu", tmp_path / "results", [], 7, 1.0, 5, lines.append,
        machine=FIXTURE_MACHINE,
    )  # fmt: skip
    return found, lines


def test_a_stored_result_of_the_cell_is_reused_without_installing(tmp_path):
    probe, lines = prober(tmp_path)
    data = real_result("async_dispatch-0.12.0.1")
    older = derive(data, release="0.4.30", created_at="2026-01-01T00:00:00+00:00")
    newer = derive(data, release="0.4.30", scale=2)
    other_sizes = derive(data, release="0.4.30", sizes={"N": 64}, id="other")
    for record in (older, newer, other_sizes):
        write_result(tmp_path / "results", record)
    measured = probe("0.4.30")
    assert measured.result is not None and measured.result.id == newer["id"]
    assert measured.note.startswith("stored result reused") and lines == []


def test_a_release_that_cannot_be_installed_has_no_result_and_a_reason(tmp_path):
    probe, lines = prober(tmp_path, python=str(tmp_path / "no-such-python"))
    measured = probe("0.4.31")
    assert measured.result is None and measured.note.startswith("could not be installed: ")
    assert "0.4.31" in lines[0]


class FakeRun:
    """Installs nothing; each ``harness run`` is recorded and stores what ``stores`` gives for its command
    (by default the real 5-process result posing as 0.4.30; None: the run stores nothing)."""

    def __init__(self, results):
        self.results = results
        self.commands = []
        self.stores = lambda command: derive(real_result("async_dispatch-0.12.0.1"), release="0.4.30", scale=3)

    def __call__(self, command, **kwargs):
        self.commands.append(command)
        record = self.stores(command)
        if record is not None:
            write_result(self.results, record)
        return subprocess.CompletedProcess(command, 0)


@pytest.fixture
def fake_run(monkeypatch, tmp_path):
    found = FakeRun(tmp_path / "results")
    monkeypatch.setattr(probes.venvs, "ensure", lambda env: None)
    monkeypatch.setattr(probes.subprocess, "run", found)
    return found


def option(command, name):
    return command[command.index(name) + 1]


def test_a_measurement_runs_the_case_in_the_processes_asked_for(tmp_path, fake_run):
    probe, _ = prober(tmp_path)
    measured = probe("0.4.30")
    [command] = fake_run.commands
    assert command[1:4] == ["-m", "harness", "run"] and "--force" not in command, "nothing stored to replace"
    assert (option(command, "--processes"), option(command, "--repeats"), option(command, "--max-seconds")) == (
        "5", "7", "1.0",
    )  # fmt: skip
    assert measured.result is not None and len(measured.result.result.processes) == 5
    assert measured.note.startswith("measured (5) in ")


def test_a_plain_script_is_measured_by_its_absolute_path_in_place_of_the_case(tmp_path, fake_run, monkeypatch):
    probe, _ = prober(tmp_path)
    monkeypatch.chdir(tmp_path)  # the release's harness run starts in the checkout, not here
    (tmp_path / "repro.py").write_text("print('hi')\n")
    probe.script = Path("repro.py")
    probe("0.4.30")
    [command] = fake_run.commands
    assert "--case" not in command and option(command, "--script") == str(tmp_path / "repro.py")


def test_a_stored_result_of_fewer_processes_is_measured_anew_not_reused(tmp_path, fake_run):
    probe, _ = prober(tmp_path)
    write_result(tmp_path / "results", derive(v1_result("async_dispatch-0.12.0.1"), release="0.4.30"))
    measured = probe("0.4.30")
    [command] = fake_run.commands
    assert option(command, "--processes") == "5" and "--force" in command, "one process settles nothing"
    assert measured.result is not None and len(measured.result.result.processes) == 5
    assert measured.note.startswith("measured (5)")


def test_a_second_look_runs_twice_the_processes(tmp_path, fake_run):
    probe, _ = prober(tmp_path)
    write_result(tmp_path / "results", derive(real_result("async_dispatch-0.12.0.1"), release="0.4.30"))
    measured = probe("0.4.30", True)
    [command] = fake_run.commands
    assert option(command, "--processes") == "10" and "--force" in command
    assert (option(command, "--repeats"), option(command, "--max-seconds")) == ("7", "1.0"), "samples per process"
    assert measured.result is not None and measured.note.startswith("measured again in twice the processes (10)")


def test_a_run_that_stores_nothing_new_gives_no_result_not_the_old_one(tmp_path, fake_run):
    probe, _ = prober(tmp_path)
    write_result(tmp_path / "results", derive(v1_result("async_dispatch-0.12.0.1"), release="0.4.30"))
    fake_run.stores = lambda command: None
    measured = probe("0.4.30")
    assert measured.result is None and measured.note == "harness run stored no result (exit code 0)"


def test_releases_measured_together_are_one_interleaved_run_whose_results_the_probes_read(tmp_path, fake_run):
    probe, lines = prober(tmp_path)

    def stores(command):
        plan = json.loads(Path(option(command, "--sides")).read_text())
        for side in plan:
            write_result(fake_run.results, derive(real_result("async_dispatch-0.12.0.1"), release=side["release"]))
        return None

    fake_run.stores = stores
    probe.measure_together(["0.4.30", "0.4.31"])
    [command] = fake_run.commands
    assert command[0] == sys.executable, "the harness drives; each side's worker runs in its release's venv"
    assert "--profile" not in command and option(command, "--processes") == "5" and "--force" in command
    assert any("2 releases measured together" in line for line in lines)
    for release in ("0.4.30", "0.4.31"):
        measured = probe(release)
        assert measured.result is not None and measured.result.release == release
        assert measured.note == "measured (5) interleaved with the other releases"
    assert len(fake_run.commands) == 1, "the probes read what the run stored"
    probe.measure_together(["0.4.30", "0.4.31"])
    assert len(fake_run.commands) == 1, "nothing left to measure"


def test_a_release_is_measured_anew_with_both_endpoints_in_one_interleaved_run(tmp_path, fake_run):
    probe, _lines = prober(tmp_path)
    runs = []

    def stores(command):
        plan = json.loads(Path(option(command, "--sides")).read_text())
        runs.append([side["release"] for side in plan])
        for side in plan:
            write_result(
                fake_run.results,
                derive(
                    real_result("async_dispatch-0.12.0.1"),
                    release=side["release"],
                    id=f"run{len(runs)}-{side['release']}",
                ),
            )
        return None

    fake_run.stores = stores
    probe.measure_together(["0.4.30", "0.4.33"])
    good, middle, bad = probe.measure_with_endpoints("0.4.31", "0.4.30", "0.4.33")
    assert runs == [["0.4.30", "0.4.33"], ["0.4.30", "0.4.31", "0.4.33"]], "the endpoints are measured again"
    assert [p.result.id.split("-")[:2] for p in (good, middle, bad)] == [
        ["run2", r] for r in ("0.4.30", "0.4.31", "0.4.33")
    ]
    assert middle.note.startswith("measured (5) interleaved with both endpoints")
    assert option(fake_run.commands[-1], "--processes") == "5" and "--force" in fake_run.commands[-1]
    again = probe.measure_with_endpoints("0.4.31", "0.4.30", "0.4.33", again=True)
    assert option(fake_run.commands[-1], "--processes") == "10", "a second look: twice the processes, all three"
    assert [p.result.id.split("-")[0] for p in again] == ["run3"] * 3
    resumed = probe.measure_with_endpoints("0.4.31", "0.4.30", "0.4.33")
    assert len(runs) == 3 and resumed[1].note.startswith("stored result reused"), "a resumed bisect reuses it"


def test_an_interleaved_run_that_stores_nothing_gives_no_result(tmp_path, fake_run):
    probe, _ = prober(tmp_path)
    fake_run.stores = lambda command: None
    _good, middle, _bad = probe.measure_with_endpoints("0.4.31", "0.4.30", "0.4.33")
    assert middle.result is None and middle.note == "the interleaved run stored no result"


def in_processes_of(count, release, id=None, **changes):
    """The real result posing as ``release``, measured in ``count`` processes (its five repeated)."""
    data = derive(real_result("async_dispatch-0.12.0.1"), release=release, **changes)
    data["id"] = id or data["id"]
    data["processes"] = [dict(p, index=i) for i, p in enumerate((data["processes"] * 4)[:count])]
    return data


def test_the_first_round_of_a_triage_passes_over_a_confirmation_stored_later(tmp_path):
    probe, _ = prober(tmp_path)
    first = in_processes_of(5, "0.4.30", created_at="2026-01-01T00:00:00+00:00")
    again = in_processes_of(10, "0.4.30", id="again", interleaved_with=["jax 0.4.31 · cpu"])
    for record in (first, again):
        write_result(tmp_path / "results", record)
    assert probe("0.4.30").result.id == "again", "a bisect or sweep reuses the newest of enough processes"
    probe.accept = probes.first_round(5)
    assert probe("0.4.30").result.id == first["id"]


def test_a_confirmation_is_a_result_measured_until_decided_with_the_other_release(tmp_path, fake_run):
    probe, lines = prober(tmp_path)
    probe.max_processes = 20
    confirmer = probes.PairConfirmer(probe)
    stored = [
        in_processes_of(10, "0.4.30", id="alone"),  # a bisect's second look: measured alone
        in_processes_of(5, "0.4.31", id="few", interleaved_with=["jax 0.4.30 · cpu"]),  # a first round's
    ]
    for record in stored:
        write_result(tmp_path / "results", record)
    assert confirmer.confirmation("0.4.30", "0.4.31") is None and confirmer.confirmation("0.4.31", "0.4.30") is None

    def stores(command):
        plan = json.loads(Path(option(command, "--sides")).read_text())
        for side in plan:
            others = [f"jax {s['release']} · cpu" for s in plan if s is not side]
            record = in_processes_of(
                15, side["release"], id=f"together-{side['release']}", interleaved_with=others,
                settings={"processes": 5, "decide": "changes", "max_processes": 20},
            )  # fmt: skip
            write_result(fake_run.results, record)
        return None

    fake_run.stores = stores
    found = confirmer({("0.4.30", "0.4.31"): ("eager.wall_ns",)})
    [command] = fake_run.commands
    assert option(command, "--processes") == "5" and "--force" in command
    assert option(command, "--decide") == "changes" and option(command, "--max-processes") == "20"
    assert "--decide-metric=eager.wall_ns" in command, "looks judged on the steps' metrics"
    before, after = found[("0.4.30", "0.4.31")]
    assert (before.result.id, after.result.id) == ("together-0.4.30", "together-0.4.31")
    assert before.note == "measured again with jax 0.4.31 (15 processes)"
    said = "2 releases measured again together, 5 processes each, then until decided (at most 20)"
    assert any(said in line for line in lines)

    again = confirmer({("0.4.30", "0.4.31"): ()})
    assert len(fake_run.commands) == 1, "a stored confirmation is reused"
    assert again[("0.4.30", "0.4.31")][1].note == "stored with jax 0.4.30 (15 processes)"

    for release in ("0.4.34", "0.4.35", "0.4.37", "0.4.38"):
        probe.envs[release] = ReleaseEnv(release, release, "python3.12", (), tmp_path / f"venv-{release}")
    plans = []
    fake_run.stores = lambda command: plans.append(json.loads(Path(option(command, "--sides")).read_text()))
    confirmer({("0.4.33", "0.4.34"): ("a.wall_ns",), ("0.4.34", "0.4.35"): (), ("0.4.37", "0.4.38"): ("b.lower_ns",)})
    [plan] = plans
    assert [(side["release"], side.get("compare_next"), side.get("compare_metrics")) for side in plan] == [
        ("0.4.33", True, ["a.wall_ns"]),
        ("0.4.34", False, None),  # its step flipped the claim only: settled over the planned processes
        ("0.4.35", False, None),  # 0.4.35 → 0.4.37 is no step
        ("0.4.37", True, ["b.lower_ns"]),
        ("0.4.38", None, None),
    ], "each step's two releases compared on the metrics that step moved"
    judged = [word for word in fake_run.commands[-1] if word.startswith("--decide-metric=")]
    assert judged == ["--decide-metric=a.wall_ns", "--decide-metric=b.lower_ns"], "the run's own: every step's"


def test_a_scripts_arguments_reach_every_run_it_is_measured_in(tmp_path):
    script = tmp_path / "repro.py"
    script.write_text("print(1)\n")
    found = ReleaseProber(
        {}, "script-repro", {}, "cpu", tmp_path / "results", [], 7, 1.0, 5, print, script=script,
        script_args=("--n", "-1"),
    )  # fmt: skip
    options = found._measure_options(5)
    assert options[:4] == ["--script", str(script.resolve()), "--script-arg=--n", "--script-arg=-1"]
