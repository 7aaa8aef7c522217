"""A probe reuses the stored result of its cell; without one it installs, measures, and says why it
could not."""

import dataclasses
import shutil
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from harness.catalogue import discovery
from harness.install import venvs
from harness.install.environments import Prepared
from harness.install.venvs import ReleaseEnv
from harness.measure.runner import Measured
from harness.measure.sides import Side
from harness.metric_names import Criterion
from harness.steps import confirm, reuse
from harness.steps.probes import ReleaseProber
from harness.store.results import read_result, write_result
from harness.store.schema import Libraries, Settings
from tests.conftest import REPO, derive, real_result, v1_result

# The machine the real fixtures were measured on: only its results are reused, wherever the tests
# run.
FIXTURE_MACHINE = real_result("async_dispatch-0.12.0.1")["host"]["machine"]["id"]
SETTINGS = Settings(repeats=7, max_seconds=1.0, processes=5)
ASYNC_DISPATCH = discovery.discover(REPO / "cases")["async_dispatch"]


class Call(NamedTuple):
    sides: list[Side]
    settings: Settings


class FakeMeasure:
    """Installs nothing and runs nothing: each measurement is recorded (its sides and settings) and
    stores, for each side, what ``stores`` gives (by default the real 5-process result posing as the
    side's release; None: nothing for that side)."""

    def __init__(self, results):
        self.results = results
        self.calls: list[Call] = []
        self.stores = lambda side, sides, settings: derive(
            real_result("async_dispatch-0.12.0.1"),
            release=side.release,
            scale=3,
            processes=settings.processes,
        )

    def __call__(self, plan, sides, settings, results_dir, **kwargs):
        assert results_dir == self.results and [item.case.name for item in plan] == [
            "async_dispatch"
        ]
        self.calls.append(Call(list(sides), settings))
        measured = []
        for side in sides:
            record = self.stores(side, sides, settings)
            stored = None if record is None else read_result(write_result(self.results, record))
            measured.append(Measured(side, None, stored))
        return measured


def prober(tmp_path, python="python3.12", measure=None):
    envs = {
        release: ReleaseEnv(
            release, release, python, ("jax==" + release,), tmp_path / f"venv-{release}"
        )
        for release in ("0.4.30", "0.4.31", "0.4.33")
    }
    lines = []
    found = ReleaseProber(
        envs,
        ASYNC_DISPATCH,
        {"N": 1000},
        "cpu",
        tmp_path / "results",
        SETTINGS,
        lines.append,
        machine=FIXTURE_MACHINE,
        **({} if measure is None else {"measure": measure}),
    )
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
    assert measured.result is not None and measured.result.result.id == newer["id"]
    assert measured.note.startswith("stored result reused") and lines == []


def test_a_release_that_cannot_be_installed_has_no_result_and_a_reason(tmp_path):
    probe, lines = prober(tmp_path, python=str(tmp_path / "no-such-python"))
    measured = probe("0.4.31")
    assert measured.result is None and measured.note.startswith("could not be installed: ")
    assert "0.4.31" in lines[0]


@pytest.fixture
def fake_measure(monkeypatch, tmp_path):
    monkeypatch.setattr(venvs, "ensure", lambda env: None)
    return FakeMeasure(tmp_path / "results")


def test_a_measurement_runs_the_case_in_the_processes_asked_for(tmp_path, fake_measure):
    probe, _ = prober(tmp_path, measure=fake_measure)
    measured = probe("0.4.30")
    [(sides, settings)] = fake_measure.calls
    assert [(side.release, side.profile, side.interpreter) for side in sides] == [
        ("0.4.30", "cpu", str(tmp_path / "venv-0.4.30" / "bin" / "python"))
    ], "one side, whose worker runs in the release's venv"
    assert (settings.processes, settings.repeats, settings.max_seconds, settings.decide) == (
        5,
        7,
        1.0,
        None,
    )
    assert measured.result is not None and len(measured.result.result.processes) == 5
    assert measured.note.startswith("measured (5) in ")


def test_a_stored_result_of_fewer_processes_is_measured_anew_not_reused(tmp_path, fake_measure):
    probe, _ = prober(tmp_path, measure=fake_measure)
    write_result(
        tmp_path / "results", derive(v1_result("async_dispatch-0.12.0.1"), release="0.4.30")
    )
    measured = probe("0.4.30")
    [(_, settings)] = fake_measure.calls
    assert settings.processes == 5, "one process settles nothing"
    assert measured.result is not None and len(measured.result.result.processes) == 5
    assert measured.note.startswith("measured (5)")


def test_a_second_look_runs_twice_the_processes(tmp_path, fake_measure):
    probe, _ = prober(tmp_path, measure=fake_measure)
    write_result(
        tmp_path / "results", derive(real_result("async_dispatch-0.12.0.1"), release="0.4.30")
    )
    measured = probe("0.4.30", True)
    [(_, settings)] = fake_measure.calls
    assert settings.processes == 10 and (settings.repeats, settings.max_seconds) == (7, 1.0), (
        "samples per process"
    )
    assert measured.result is not None and measured.note.startswith(
        "measured again in twice the processes (10)"
    )


def test_a_measurement_that_stores_nothing_gives_no_result_not_the_old_one(tmp_path, fake_measure):
    probe, _ = prober(tmp_path, measure=fake_measure)
    write_result(
        tmp_path / "results", derive(v1_result("async_dispatch-0.12.0.1"), release="0.4.30")
    )
    fake_measure.stores = lambda side, sides, settings: None
    measured = probe("0.4.30")
    assert measured.result is None and measured.note == "the measurement stored no result"


def test_a_measurement_the_harness_cannot_carry_out_is_said_and_gives_no_result(
    tmp_path, monkeypatch
):
    from harness.errors import HarnessError

    def refuse(*args, **kwargs):
        raise HarnessError("the worker of side 'jax 0.4.30 · cpu' did not start: boom")

    monkeypatch.setattr(venvs, "ensure", lambda env: None)
    probe, lines = prober(tmp_path, measure=refuse)
    measured = probe("0.4.30")
    assert measured.result is None and any("did not start: boom" in line for line in lines)


def test_releases_measured_together_are_one_interleaved_run_whose_results_the_probes_read(
    tmp_path, fake_measure
):
    probe, lines = prober(tmp_path, measure=fake_measure)
    probe.measure_together(["0.4.30", "0.4.31"])
    [(sides, settings)] = fake_measure.calls
    assert [side.release for side in sides] == ["0.4.30", "0.4.31"] and settings.processes == 5
    assert settings.decide is None, "no looks without a most to go to"
    assert any("2 releases measured together" in line for line in lines)
    for release in ("0.4.30", "0.4.31"):
        measured = probe(release)
        assert measured.result is not None and measured.result.result.release == release
        assert measured.note == "measured (5) interleaved with the other releases"
    assert len(fake_measure.calls) == 1, "the probes read what the measurement stored"
    probe.measure_together(["0.4.30", "0.4.31"])
    assert len(fake_measure.calls) == 1, "nothing left to measure"


def test_releases_measured_together_in_fewer_processes_are_read_back_not_measured_alone(
    tmp_path, fake_measure
):
    """Issue 78: a first round a time cap cut at one process a side is what was measured; each
    release measured again alone, in the planned processes, would spend past the cap."""
    probe, _ = prober(tmp_path, measure=fake_measure)
    real, planned = real_result("async_dispatch-0.12.0.1"), fake_measure.stores
    fake_measure.stores = lambda side, sides, settings: derive(
        real, release=side.release, processes=1
    )
    probe.measure_together(["0.4.30", "0.4.31"])
    for release in ("0.4.30", "0.4.31"):
        measured = probe(release)
        assert len(measured.result.result.processes) == 1
        assert measured.note == "measured (1) interleaved with the other releases"
    assert len(fake_measure.calls) == 1, "neither measured again alone"
    fake_measure.stores, (fresh, _) = planned, prober(tmp_path, measure=fake_measure)
    assert fresh("0.4.30").note.startswith("measured (5)"), "too few for another run to reuse"


def test_a_copy_of_a_prober_measures_on_its_own_record_and_leaves_the_prober_as_it_was(
    tmp_path, fake_measure
):
    probe, _ = prober(tmp_path, measure=fake_measure)
    copy = dataclasses.replace(probe, accept=reuse.first_round(5))
    copy.measure_together(["0.4.30", "0.4.31"])
    assert copy("0.4.30").note == "measured (5) interleaved with the other releases"
    assert probe.accept is None and probe.together == set(), "the prober it was copied from"
    assert probe("0.4.30").note.startswith("stored result reused"), "measured by the copy"
    with pytest.raises(dataclasses.FrozenInstanceError):
        probe.max_processes = 20  # type: ignore[misc]


class RacedMeasure(FakeMeasure):
    """Another triage into the same folder stores ``raced``'s result between the prober's own look
    and this measurement's turn at the folder lock; what the prober's ``reuse`` takes is not
    measured."""

    def __init__(self, results, raced):
        super().__init__(results)
        self.raced = raced

    def __call__(self, plan, sides, settings, results_dir, **kwargs):
        other = derive(real_result("async_dispatch-0.12.0.1"), release=self.raced, id="other-run")
        write_result(self.results, other)
        reuse = kwargs.get("reuse")
        taken = {s.label: found for s in sides if reuse and (found := reuse(plan[0], s))}
        measured = super().__call__(
            plan, [s for s in sides if s.label not in taken], settings, results_dir
        )
        return [*measured, *(Measured(s, None, taken[s.label]) for s in sides if s.label in taken)]


def test_reuse_is_decided_again_under_the_folder_lock_so_two_triages_measure_a_release_once(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(venvs, "ensure", lambda env: None)
    raced = RacedMeasure(tmp_path / "results", "0.4.31")
    probe, _ = prober(tmp_path, measure=raced)
    probe.measure_together(["0.4.30", "0.4.31"])
    [(sides, _)] = raced.calls
    assert [side.release for side in sides] == ["0.4.30"], "0.4.31 measured by the other triage"
    assert probe("0.4.31").result.result.id.startswith("other-run")
    assert probe("0.4.31").note.startswith("stored result reused"), "not 'measured interleaved'"
    assert probe("0.4.30").note == "measured (5) interleaved with the other releases"
    alone = RacedMeasure(tmp_path / "results", "0.4.33")
    single, _ = prober(tmp_path, measure=alone)
    found = single("0.4.33")
    assert [call.sides for call in alone.calls] == [[]], "nothing measured"
    assert found.result.result.id.startswith("other-run") and found.note.startswith(
        "stored by another run meanwhile"
    )


def test_a_release_is_measured_anew_with_both_endpoints_in_one_interleaved_run(
    tmp_path, fake_measure
):
    probe, _lines = prober(tmp_path, measure=fake_measure)

    def stores(side, sides, settings):
        run = len(fake_measure.calls)
        data = real_result("async_dispatch-0.12.0.1")
        return derive(
            data, release=side.release, id=f"run{run}-{side.release}", processes=settings.processes
        )

    fake_measure.stores = stores
    probe.measure_together(["0.4.30", "0.4.33"])
    good, middle, bad = probe.measure_with_endpoints("0.4.31", "0.4.30", "0.4.33")
    runs = [[side.release for side in call.sides] for call in fake_measure.calls]
    assert runs == [["0.4.30", "0.4.33"], ["0.4.30", "0.4.31", "0.4.33"]], (
        "the endpoints are measured again"
    )
    assert [p.result.result.id.split("-")[:2] for p in (good, middle, bad)] == [
        ["run2", r] for r in ("0.4.30", "0.4.31", "0.4.33")
    ]
    assert middle.note.startswith("measured (5) interleaved with both endpoints")
    assert fake_measure.calls[-1].settings.processes == 5
    again = probe.measure_with_endpoints("0.4.31", "0.4.30", "0.4.33", again=True)
    assert fake_measure.calls[-1].settings.processes == 10, (
        "a second look: twice the processes, all three"
    )
    assert [p.result.result.id.split("-")[0] for p in again] == ["run3"] * 3
    resumed = probe.measure_with_endpoints("0.4.31", "0.4.30", "0.4.33")
    assert len(fake_measure.calls) == 3 and resumed[1].note.startswith("stored result reused"), (
        "a resumed bisect"
    )


def test_an_interleaved_run_that_stores_nothing_gives_no_result(tmp_path, fake_measure):
    probe, _ = prober(tmp_path, measure=fake_measure)
    fake_measure.stores = lambda side, sides, settings: None
    _good, middle, _bad = probe.measure_with_endpoints("0.4.31", "0.4.30", "0.4.33")
    assert middle.result is None and middle.note == "the interleaved run stored no result"


def in_processes_of(count, release, id=None, **changes):
    """The real result posing as ``release``, measured in ``count`` processes (its five
    repeated)."""
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
    assert probe("0.4.30").result.result.id == "again", (
        "a bisect or sweep reuses the newest of enough processes"
    )
    first_round = dataclasses.replace(probe, accept=reuse.first_round(5))
    assert first_round("0.4.30").result.result.id == first["id"]


def test_a_confirmation_is_a_result_measured_until_decided_with_the_other_release(
    tmp_path, fake_measure
):
    probe, lines = prober(tmp_path, measure=fake_measure)
    probe = dataclasses.replace(probe, max_processes=20)
    confirmer = confirm.PairConfirmer(probe)
    stored = [
        in_processes_of(10, "0.4.30", id="alone"),  # a bisect's second look: measured alone
        # a first round's
        in_processes_of(5, "0.4.31", id="few", interleaved_with=["jax 0.4.30 · cpu"]),
    ]
    for record in stored:
        write_result(tmp_path / "results", record)
    assert (
        confirmer.confirmation("0.4.30", "0.4.31") is None
        and confirmer.confirmation("0.4.31", "0.4.30") is None
    )

    def stores(side, sides, settings):
        others = [other.label for other in sides if other is not side]
        return in_processes_of(
            15,
            side.release,
            id=f"together-{side.release}",
            interleaved_with=others,
            settings={"processes": 5, "decide": "changes", "max_processes": 20},
        )

    fake_measure.stores = stores
    found = confirmer({("0.4.30", "0.4.31"): (Criterion.named("eager.wall_ns"),)})
    [(_, settings)] = fake_measure.calls
    assert (settings.processes, settings.decide, settings.max_processes) == (5, "changes", 20)
    assert settings.decide_metrics == ("eager.wall_ns",), "looks judged on the steps' metrics"
    before, after = found[("0.4.30", "0.4.31")]
    assert (before.result.result.id, after.result.result.id) == (
        "together-0.4.30",
        "together-0.4.31",
    )
    assert before.note == "measured again with jax 0.4.31 (15 processes)"
    said = "2 releases measured again together, 5 processes each, then until decided (at most 20)"
    assert any(said in line for line in lines)

    again = confirmer({("0.4.30", "0.4.31"): ()})
    assert len(fake_measure.calls) == 1, "a stored confirmation is reused"
    assert again[("0.4.30", "0.4.31")][1].note == "stored with jax 0.4.30 (15 processes)"

    more = {
        release: ReleaseEnv(release, release, "python3.12", (), tmp_path / f"venv-{release}")
        for release in ("0.4.34", "0.4.35", "0.4.37", "0.4.38")
    }
    confirmer = confirm.PairConfirmer(dataclasses.replace(probe, envs={**probe.envs, **more}))
    fake_measure.stores = lambda side, sides, settings: None
    confirmer(
        {
            ("0.4.33", "0.4.34"): (Criterion.named("a.wall_ns"),),
            ("0.4.34", "0.4.35"): (),
            ("0.4.37", "0.4.38"): (Criterion.named("b.lower_ns"),),
        }
    )
    sides, settings = fake_measure.calls[-1]
    assert [(side.release, side.compare_next, side.compare_metrics) for side in sides] == [
        ("0.4.33", True, ("a.wall_ns",)),
        # its step flipped the claim only: settled over the planned processes
        ("0.4.34", False, ()),
        ("0.4.35", False, ()),  # 0.4.35 → 0.4.37 is no step
        ("0.4.37", True, ("b.lower_ns",)),
        ("0.4.38", True, ()),
    ], "each step's two releases compared on the metrics that step moved"
    assert settings.decide_metrics == ("a.wall_ns", "b.lower_ns"), (
        "the measurement's own: every step's"
    )


class ScriptEnvironments:
    """Stands in for the environments of a script: every release ready in one venv that holds
    equinox."""

    libraries = Libraries(
        "as-of", ("equinox==0.11.4", "jax==0.4.30"), "ab" * 32, None, ("equinox",)
    )

    def matches(self, label, libraries):
        return libraries == self.libraries

    def prepare(self, label, env):
        return Prepared(env.venv / "bin" / "python", self.libraries)


def test_a_plain_script_is_measured_in_place_of_the_case_in_its_own_venv_with_its_arguments(
    tmp_path,
):
    from harness.catalogue.scripts import read_script

    script = tmp_path / "repro.py"
    script.write_text("print(1)\n")
    planned, sides = [], []

    def measure(plan, measured_sides, settings, results_dir, **kwargs):
        planned.extend(plan)
        sides.extend(measured_sides)
        return []

    probe, _ = prober(tmp_path, measure=measure)
    case = read_script(script, ("--n", "-1"))
    probe = dataclasses.replace(probe, case=case, sizes={}, environments=ScriptEnvironments())
    assert probe("0.4.30").result is None
    [item] = planned
    assert (
        item.case.path == script.resolve()
        and item.case.subject.args == ("--n", "-1")
        and item.sizes == {}
    )
    [side] = sides
    assert side.libraries == ScriptEnvironments.libraries, (
        "the side says what its venv holds: its results record it"
    )


def test_raising_max_processes_measures_again_what_ran_out_of_processes_and_reuses_what_was_decided(
    tmp_path,
):
    """The advice an undecided answer gives, followed: a confirmation that used all of a smaller
    budget is not read back with the same verdict; one decided early under it still counts."""
    probe, _ = prober(tmp_path)
    until_decided = {"processes": 5, "decide": "changes", "max_processes": 10}
    for release, partner, count in (("0.4.30", "0.4.31", 10), ("0.4.31", "0.4.30", 10)):
        record = in_processes_of(
            count,
            release,
            id=f"spent-{release}",
            interleaved_with=[f"jax {partner} · cpu"],
            settings=until_decided,
        )
        write_result(tmp_path / "results", record)
    confirmer = confirm.PairConfirmer(dataclasses.replace(probe, max_processes=10))
    assert confirmer.confirmation("0.4.30", "0.4.31").result.id == "spent-0.4.30", (
        "the same budget: reused"
    )
    confirmer = confirm.PairConfirmer(dataclasses.replace(probe, max_processes=20))
    assert confirmer.confirmation("0.4.30", "0.4.31") is None, (
        "all of a smaller budget spent: measured again"
    )
    early = in_processes_of(
        5, "0.4.30", id="early", interleaved_with=["jax 0.4.31 · cpu"], settings=until_decided
    )
    write_result(tmp_path / "results", early)
    assert confirmer.confirmation("0.4.30", "0.4.31").result.id == "early", (
        "decided before its budget ran out"
    )


class RacedConfirmation(FakeMeasure):
    """Another triage or watch of the same pair stores both halves of its confirmation while this
    one waits on the folder lock (what the measurement's ``reuse`` then takes is not measured)."""

    def __call__(self, plan, sides, settings, results_dir, **kwargs):
        for side in sides:
            others = [other.label for other in sides if other is not side]
            record = in_processes_of(
                15,
                side.release,
                id=f"other-watch-{side.release}",
                interleaved_with=others,
                settings={"processes": 5, "decide": "changes", "max_processes": 20},
            )
            write_result(self.results, record)
        reuse = kwargs.get("reuse")
        taken = {s.label: found for s in sides if reuse and (found := reuse(plan[0], s))}
        measured = super().__call__(
            plan, [s for s in sides if s.label not in taken], settings, results_dir
        )
        return [*measured, *(Measured(s, None, taken[s.label]) for s in sides if s.label in taken)]


def test_a_confirmation_another_run_stored_while_this_one_waited_on_the_lock_is_reused(
    tmp_path, monkeypatch
):
    """Issue 57 #6: two triages (or watches) into one results folder both measured the confirmation;
    the second, after its wait on the folder lock, now takes the first's."""
    monkeypatch.setattr(venvs, "ensure", lambda env: None)
    raced = RacedConfirmation(tmp_path / "results")
    probe, _ = prober(tmp_path, measure=raced)
    confirmer = confirm.PairConfirmer(dataclasses.replace(probe, max_processes=20))
    found = confirmer({("0.4.30", "0.4.31"): (Criterion.named("eager.wall_ns"),)})
    assert [call.sides for call in raced.calls] == [[]], "nothing measured"
    before, after = found[("0.4.30", "0.4.31")]
    assert (before.result.result.id, after.result.result.id) == (
        "other-watch-0.4.30",
        "other-watch-0.4.31",
    )
    assert before.note.startswith("stored by another run meanwhile with jax 0.4.31")


def test_a_release_whose_venv_vanished_under_the_command_is_made_anew_and_measured_again_once(
    tmp_path, monkeypatch
):
    """A clean-up outside the harness removed the venv mid-run: the measurement says so and stores
    nothing (``VenvGone``); the probe makes the venv anew and measures it again."""
    made = []

    def ensure(env):
        made.append(env.jax)
        (env.venv / "bin").mkdir(parents=True, exist_ok=True)
        (env.venv / "bin" / "python").symlink_to(sys.executable)

    monkeypatch.setattr(venvs, "ensure", ensure)
    measure = FakeMeasure(tmp_path / "results")
    stores = measure.stores

    def vanishing(side, sides, settings):
        if len(measure.calls) == 1:  # the first measurement: its venv removed as it ran
            shutil.rmtree(Path(side.interpreter).parents[1])
            return None
        return stores(side, sides, settings)

    measure.stores = vanishing
    probe, _ = prober(tmp_path, measure=measure)
    measured = probe("0.4.30")
    assert made == ["0.4.30", "0.4.30"] and len(measure.calls) == 2
    assert measured.result is not None and measured.note.startswith("measured (5)")
