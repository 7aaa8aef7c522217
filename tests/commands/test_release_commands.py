"""The bisect and sweep commands over releases whose results are already stored: nothing is
installed."""

import json
import shutil

import pytest

from harness.cli.parser import parse
from harness.cli.ranges import check as checked_range_args
from harness.commands.ranges import plan_for, prober_for
from harness.host.environment import machine_identity
from harness.install.venvs import ReleaseEnv, write_plan
from harness.main import main
from harness.render.screen import fits
from harness.store.results import write_result
from tests.conftest import derive, nox_in_repo, real_result

RELEASES = ["0.4.30", "0.4.31", "0.4.33", "0.4.34"]
SCALES = {"0.4.30": 1, "0.4.31": 1, "0.4.33": 3, "0.4.34": 3}


def on_screen(out, tmp_path):
    """Whether an answer fits one screen, its report's path (a long temporary folder here) aside."""
    return fits(out.replace(str(tmp_path / "reports"), "reports"))


def flat(out):
    """The answer with each command's continued lines joined, spaces collapsed."""
    return " ".join(out.replace(" \\\n", " ").split())


def stored_range(tmp_path):
    """A plan whose venvs do not exist, and a stored result for every release (at N=1000, profile
    cpu), measured in 8 processes on this machine (only this machine's results are reused): few
    enough for a triage's first round (fewer than twice 5), enough for sides measured together to
    pass the rank guard."""
    plan = tmp_path / "plan.json"
    missing_python = str(tmp_path / "no-such-python")
    write_plan(
        plan,
        [
            ReleaseEnv(r, r, missing_python, ("jax==" + r,), tmp_path / f"venv-{r}")
            for r in RELEASES
        ],
    )
    data = real_result("async_dispatch-0.12.0.1")
    data["host"]["machine"] = machine_identity()
    for release, scale in SCALES.items():
        write_result(tmp_path / "results", derive(data, release=release, scale=scale, processes=8))
    return plan


def command(tmp_path, name, first, last, *more):
    ends = ["--good", first, "--bad", last] if name == "bisect" else ["--from", first, "--to", last]
    return [
        name,
        "async_dispatch",
        *ends,
        "--profile",
        "cpu",
        "--releases",
        str(tmp_path / "plan.json"),
        "--results",
        str(tmp_path / "results"),
        "--out",
        str(tmp_path / "reports"),
        *more,
    ]


def test_bisect_answers_from_stored_results_alone(tmp_path, capsys):
    stored_range(tmp_path)
    assert main(command(tmp_path, "bisect", "0.4.30", "0.4.34", "--metric", "eager.wall_ns")) == 0
    out = capsys.readouterr().out
    stem = "bisect-async_dispatch-0.4.30-0.4.34-eager.wall_ns-N.1000-cpu"
    assert "First bad: jax 0.4.33 · last good: jax 0.4.31" in out.splitlines()
    assert out.splitlines()[-1] == f"Report: {tmp_path / 'reports' / stem}.md"
    assert on_screen(out, tmp_path)
    page = (tmp_path / "reports" / f"{stem}.md").read_text()
    assert page.count("stored result reused") == 4, "every probe from the results folder"
    data = json.loads((tmp_path / "reports" / f"{stem}.json").read_text())
    assert (data["last_good"], data["first_bad"], data["probe_count"]) == ("0.4.31", "0.4.33", 4)
    assert (data["good"], data["bad"], data["terms"]) == (
        "0.4.30",
        "0.4.34",
        {"old": "good", "new": "bad"},
    )
    assert (tmp_path / "reports" / f"{stem}.md").is_file()


def test_bisects_of_other_ranges_and_criteria_keep_their_own_answers(tmp_path):
    stored_range(tmp_path)
    assert main(command(tmp_path, "bisect", "0.4.30", "0.4.34", "--metric", "eager.wall_ns")) == 0
    assert (
        main(command(tmp_path, "bisect", "0.4.31", "0.4.34", "--metric", "eager.wall_ns")) == 2
    ), "not the plan's"
    assert main(command(tmp_path, "bisect", "0.4.30", "0.4.34", "--claim")) == 1
    names = sorted(p.name for p in (tmp_path / "reports").glob("bisect-*.json"))
    assert names == [
        "bisect-async_dispatch-0.4.30-0.4.34-claim-N.1000-cpu.json",
        "bisect-async_dispatch-0.4.30-0.4.34-eager.wall_ns-N.1000-cpu.json",
    ]


def test_a_fix_is_bisected_between_a_broken_and_a_fixed_release(tmp_path, capsys):
    stored_range(tmp_path)
    # The terms are the user's, as git bisect's are: whatever changed between the broken and the
    # fixed release (here the newer releases are 3× slower) is bisected and answered in those terms.
    argv = command(tmp_path, "bisect", "0.4.30", "0.4.34", "--metric", "eager.wall_ns")
    argv[argv.index("--good")] = "--broken"
    argv[argv.index("--bad")] = "--fixed"
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Fixed in: jax 0.4.33 · last broken: jax 0.4.31" in out.splitlines()
    assert "probed: 0.4.30 broken, 0.4.34 fixed" in out and " good " not in out
    assert "--commits --broken 0.4.31 --fixed 0.4.33 --metric eager.wall_ns" in flat(out)
    assert "nox -s issue -- --case async_dispatch --metric eager.wall_ns --good 0.4.31" in flat(out)
    data = json.loads(
        (
            tmp_path
            / "reports"
            / "bisect-async_dispatch-0.4.30-0.4.34-eager.wall_ns-N.1000-cpu.json"
        ).read_text()
    )
    assert (data["broken"], data["fixed"], data["last_broken"], data["first_fixed"]) == (
        "0.4.30",
        "0.4.34",
        "0.4.31",
        "0.4.33",
    )
    assert "last_good" not in data and data["answer"] == "fixed in 0.4.33 (last broken 0.4.31)"


def test_bisect_without_an_answer_exits_1(tmp_path, capsys):
    stored_range(tmp_path)
    assert main(command(tmp_path, "bisect", "0.4.30", "0.4.34", "--claim")) == 1, (
        "the claim holds on all of them"
    )
    out = capsys.readouterr().out
    assert "claim: no answer: the bad endpoint 0.4.34 is not bad" in out and on_screen(
        out, tmp_path
    )
    triage = (
        "`nox -s triage -- --case async_dispatch --from 0.4.30 --to 0.4.34 --claim --processes 5 "
        "--every-release --size N=1000 --profile cpu`"
    )
    assert "every release between them is measured by:\n  nox -s triage" in out
    assert triage.strip("`") in flat(out), "the command, whole"
    data = json.loads(
        (
            tmp_path / "reports" / "bisect-async_dispatch-0.4.30-0.4.34-claim-N.1000-cpu.json"
        ).read_text()
    )
    assert triage in data["hint"] and "first_bad" not in data


def test_an_unknown_metric_is_refused_by_the_stored_results_before_any_probe(tmp_path, capsys):
    stored_range(tmp_path)
    assert (
        main(command(tmp_path, "bisect", "0.4.30", "0.4.34", "--metric", "two_scans.wall_ns")) == 2
    )
    err = capsys.readouterr().err.strip()
    assert err == (
        "harness: error: unknown metric two_scans.wall_ns for case async_dispatch; its metrics: "
        "eager.dispatch_ns, eager.wall_ns, jit.compile_ns, jit.dispatch_ns, jit.lower_ns, "
        "jit.wall_ns, process.peak_rss_bytes"
    )


def test_a_plan_for_another_range_is_refused(tmp_path, capsys):
    stored_range(tmp_path)
    assert main(command(tmp_path, "bisect", "0.4.26", "0.4.34", "--claim")) == 2
    assert "does not run from 0.4.26 to 0.4.34" in capsys.readouterr().err


def test_a_sweep_of_every_metric_writes_its_steps(tmp_path, capsys):
    stored_range(tmp_path)
    assert main(command(tmp_path, "sweep", "0.4.30", "0.4.34")) == 0
    text = (tmp_path / "reports" / "sweep-async_dispatch.md").read_text()
    assert "- eager.wall_ns: 0.4.31 → 0.4.33: slower" in text
    assert "0.4.30 → 0.4.31" not in text
    assert "by every metric and the claim" in text


def test_the_probes_measure_in_the_processes_asked_for_five_by_default(tmp_path):
    stored_range(tmp_path)
    by_default = checked_range_args(
        parse(command(tmp_path, "bisect", "0.4.30", "0.4.34", "--claim"))
    )
    asked = checked_range_args(
        parse(command(tmp_path, "sweep", "0.4.30", "0.4.34", "--processes", "7"))
    )
    assert (by_default.measuring.processes, asked.measuring.processes) == (5, 7)
    assert prober_for(asked, plan_for(asked)).processes == 7


def test_stored_results_of_fewer_processes_than_asked_are_not_reused(tmp_path, capsys):
    stored_range(tmp_path)  # 8 processes each; the plan's venvs cannot be installed
    assert (
        main(
            command(
                tmp_path,
                "bisect",
                "0.4.30",
                "0.4.34",
                "--metric",
                "eager.wall_ns",
                "--processes",
                "10",
            )
        )
        == 1
    )
    out = capsys.readouterr().out
    assert "stored result reused" not in out and "could not be installed" in flat(out)
    page = tmp_path / "reports" / "bisect-async_dispatch-0.4.30-0.4.34-eager.wall_ns-N.1000-cpu.md"
    assert "stored result reused" not in page.read_text()


def test_fewer_processes_than_a_verdict_needs_are_refused(tmp_path, capsys):
    stored_range(tmp_path)
    assert main(command(tmp_path, "sweep", "0.4.30", "0.4.34", "--processes", "2")) == 2
    assert capsys.readouterr().err.strip() == (
        "harness: error: --processes 2: no verdict is possible with fewer than 3 processes a "
        "release"
    )


def stored_confirmations(tmp_path, pairs, scales=SCALES, processes=10):
    """Results of each pair's two releases measured again together, in ``processes`` processes
    each."""
    data = real_result("async_dispatch-0.12.0.1")
    data["host"]["machine"] = machine_identity()
    data["processes"] = [
        dict(p, index=i) for i, p in enumerate((data["processes"] * 4)[:processes])
    ]
    for before, after in pairs:
        for release, partner in ((before, after), (after, before)):
            again = derive(
                data,
                release=release,
                scale=scales[release],
                interleaved_with=[f"jax {partner} · cpu"],
            )
            again["id"] += f"-again-with-{partner}"
            again["created_at"] = "2099-01-01T00:00:00+00:00"
            write_result(tmp_path / "results", again)


def test_a_triage_confirms_the_step_from_stored_results_and_answers_it(tmp_path, capsys):
    stored_range(tmp_path)
    stored_confirmations(tmp_path, [("0.4.31", "0.4.33")])
    answer = tmp_path / "triage.json"
    assert (
        main(
            command(
                tmp_path,
                "triage",
                "0.4.30",
                "0.4.34",
                "--metric",
                "eager.wall_ns",
                "--json",
                str(answer),
            )
        )
        == 0
    )
    data = json.loads(answer.read_text())
    assert data["schema"] == "jax-repro-harness/triage" and data["schema_version"] == 1
    [confirmed] = data["confirmations"]
    assert (confirmed["before"], confirmed["after"], confirmed["outcome"]) == (
        "0.4.31",
        "0.4.33",
        "confirmed",
    )
    assert confirmed["again"]["verdict"] == "slower" and confirmed["again"]["ratio"] > 2
    assert [r["release"] for r in data["first_round"]["releases"]] == [
        "0.4.30",
        "0.4.31",
        "0.4.33",
        "0.4.34",
    ]
    assert data["answers"][0].startswith("eager.wall_ns: slower ×3 since 0.4.33")
    captured = capsys.readouterr()
    assert on_screen(captured.out, tmp_path)
    assert "jax 0.4.31 → 0.4.33: 1 change(s)" in captured.out.splitlines()
    [row] = [line for line in captured.out.splitlines() if line.startswith("  eager.wall_ns")]
    assert row.split()[6:8] == ["×3", "slower"], row
    assert "confirming" not in captured.err, "the stored confirmation is reused, nothing measured"
    report = (
        tmp_path / "reports" / "triage-async_dispatch-0.4.30-0.4.34-eager.wall_ns-N.1000-cpu.md"
    )
    assert captured.out.splitlines()[-1] == f"Report: {report}"
    text = report.read_text()
    [answer] = [line for line in text.splitlines() if line.startswith("- eager.wall_ns")]
    assert answer.startswith("- eager.wall_ns: slower ×3 since 0.4.33 (last good 0.4.31; ")
    assert (
        "0.4.31: stored with jax 0.4.33 (10 processes); 0.4.33: stored with jax 0.4.31 (10 "
        "processes)" in text
    )
    assert "**Answers**" in text and "| eager.wall_ns | 0.4.31 → 0.4.33 |" in text
    assert "[triage] (4/4) jax 0.4.34, 0 left" in captured.err
    plot = tmp_path / "reports" / "plots" / f"{report.stem}.png"
    if plot.exists():  # matplotlib installed: the report links the plot
        assert f"(plots/{report.stem}.png)" in text
    else:
        assert "Plot not drawn: matplotlib is not installed" in text


def test_a_triage_whose_step_cannot_be_measured_again_finds_no_change_and_exits_1(tmp_path, capsys):
    stored_range(tmp_path)  # no confirmation stored, and the plan's venvs cannot be installed
    assert main(command(tmp_path, "triage", "0.4.30", "0.4.34", "--metric", "eager.wall_ns")) == 1
    out = capsys.readouterr().out
    assert (
        "No confirmed change: no candidate step of the first round held on measuring again." in out
    )
    assert "no result measured together with jax 0.4.33" in flat(out), "why it did not hold"


@pytest.mark.parametrize("name", ["triage", "sweep"])
def test_a_range_where_no_release_can_be_installed_says_nothing_could_be_measured_and_exits_4(
    tmp_path, capsys, name
):
    stored_range(tmp_path)
    shutil.rmtree(tmp_path / "results")  # nothing stored, and the plan's venvs cannot be installed
    (tmp_path / "results").mkdir()
    more = ("--metric", "eager.wall_ns", "--no-why") if name == "triage" else ()
    assert main(command(tmp_path, name, "0.4.30", "0.4.34", *more)) == 4
    out = capsys.readouterr().out
    assert "Nothing could be measured: 0 of the 4 releases ran ok" in out
    assert "No change found" not in out and "No significant step" not in out


def test_a_confirmation_never_stands_in_for_the_first_round(tmp_path, capsys):
    stored_range(tmp_path)
    # A confirmation that shows no change is stored for 0.4.31 and 0.4.33; the first round still
    # sees the step.
    stored_confirmations(tmp_path, [("0.4.31", "0.4.33")], scales=dict.fromkeys(SCALES, 1))
    assert (
        main(command(tmp_path, "triage", "0.4.30", "0.4.34", "--metric", "eager.wall_ns")) == 3
    ), "undecided"
    out = capsys.readouterr().out
    assert "| eager.wall_ns | 0.4.31 → 0.4.33 |" not in out and on_screen(out, tmp_path)
    assert (
        "Undecided, not unchanged: eager.wall_ns 0.4.31 → 0.4.33 (10 a side, within ±7.5%)" in out
    )
    page = tmp_path / "reports" / "triage-async_dispatch-0.4.30-0.4.34-eager.wall_ns-N.1000-cpu.md"
    text = page.read_text()
    assert "within ±7.5% this time" in text, "no change shown, and none beyond ±7.5%"
    assert "1 candidate step(s) of a metric were measured again" in text


def nox_session(name, *posargs):
    return nox_in_repo("-s", name, "--", *posargs)


@pytest.fixture(scope="module")
def async_dispatch_results(tmp_path_factory):
    """One results folder for this module's real bisects of async_dispatch (N=256, 9 repeats, 2 s,
    cpu): the second reuses the releases the first measured (a bisect counts any stored result of
    the cell measured here in at least the processes it asks) instead of measuring them again."""
    return tmp_path_factory.mktemp("async-dispatch-results")


@pytest.mark.releases
def test_a_real_bisect_over_three_releases_installs_measures_and_then_reuses(
    tmp_path, async_dispatch_results
):
    """jax 0.4.31 dispatches synchronously on CPU, 0.4.33 asynchronously (0.4.32 is yanked)."""
    posargs = [
        "async_dispatch",
        "--metric",
        "eager.dispatch_ns",
        "--good",
        "0.4.30",
        "--bad",
        "0.4.33",
        "--size",
        "N=256",
        "--repeats",
        "9",
        "--max-seconds",
        "2",
        "--results",
        str(async_dispatch_results),
        "--out",
        str(tmp_path / "out"),
        "--max-processes",
        "40",  # dispatch's process medians scatter widely: decided even on a loaded machine
        "--no-why",  # why a step moved is asked in a test of its own
    ]
    done = nox_session("bisect", *posargs)
    assert done.returncode == 0, done.stderr[-4000:]
    stem = "bisect-async_dispatch-0.4.30-0.4.33-eager.dispatch_ns-N.256-cpu"
    data = json.loads((tmp_path / "out" / f"{stem}.json").read_text())
    assert (data["last_good"], data["first_bad"]) == ("0.4.31", "0.4.33"), data["answer"]
    assert [p["release"] for p in data["probes"]] == ["0.4.30", "0.4.33", "0.4.31"]
    assert data["probes"][1]["vs_good"]["verdict"] == "faster", "async dispatch returns sooner"
    stored = {path.parent.parent.name for path in async_dispatch_results.rglob("*.json")}
    assert stored == {"jax-0.4.30", "jax-0.4.31", "jax-0.4.33"}

    again = nox_session("bisect", *posargs)
    assert again.returncode == 0, again.stderr[-4000:]
    reread = json.loads((tmp_path / "out" / f"{stem}.json").read_text())
    sources = [p["source"] for p in reread["probes"]]
    assert sum(source.startswith("stored result reused") for source in sources) == 3, sources
    assert "First bad: jax 0.4.33" in again.stdout, "the screen: the details are in the report"


@pytest.mark.releases
def test_a_real_bisect_tries_the_step_s_changed_defaults_and_names_the_one_bringing_dispatch_back(
    tmp_path, async_dispatch_results
):
    """jax 0.4.33 dispatches asynchronously on CPU because jax_cpu_enable_async_dispatch became
    True; set back to False on 0.4.33, dispatch is as slow as on 0.4.31 again."""
    posargs = [
        "async_dispatch",
        "--metric",
        "eager.dispatch_ns",
        "--good",
        "0.4.31",
        "--bad",
        "0.4.33",
        "--size",
        "N=256",
        "--repeats",
        "9",
        "--max-seconds",
        "2",
        "--processes",
        "3",
        "--max-processes",
        "24",  # decided even with the other tests loading the machine
        "--why-budget",
        # every kind asked: by default the why spends at most half what the bisect's measuring
        # took, and the workaround found would end it (the compiled programs are checked below)
        "3600",
        "--why-every-kind",
        "--results",
        str(async_dispatch_results),
        "--out",
        str(tmp_path / "out"),
    ]
    done = nox_session("bisect", *posargs)
    assert done.returncode == 0, done.stderr[-4000:]
    answer = (
        tmp_path / "out" / "bisect-async_dispatch-0.4.31-0.4.33-eager.dispatch_ns-N.256-cpu.json"
    )
    data = json.loads(answer.read_text())
    [defaults] = data["defaults"]
    changed = {
        change["name"]: (change["before"], change["after"]) for change in defaults["changed"]
    }
    assert changed["jax_cpu_enable_async_dispatch"] == ("False", "True")
    assert changed["xla_cpu_use_thunk_runtime"] == ("false", "true")
    tried = {(t["release"], t["option"]): t for t in defaults["tried"]}
    back = tried[("0.4.33", "jax_cpu_enable_async_dispatch")]
    # Async dispatch off on 0.4.33 undoes most of the step (×0.72–0.78 of 0.4.31, which more
    # processes may tell apart: the thunk runtime made dispatch a little faster too).
    assert back["vs_after"] == "slower", back
    said = 'on 0.4.33, jax.config.update("jax_cpu_enable_async_dispatch", False) gives'
    assert any(
        line.startswith(said) and line.endswith("a workaround, and a strong hint at the cause")
        for line in data["why"]
    ), data["why"]
    [compiled] = data["compiled"]  # what each release compiled, dumped by one extra process each
    assert (compiled["before"], compiled["after"], compiled["problem"]) == ("0.4.31", "0.4.33", "")
    assert compiled["modules"] and all(m["hint"] for m in compiled["modules"])
    dumps = tmp_path / "out" / f"{answer.stem}-compiled"
    assert {p.name for p in dumps.iterdir() if p.is_dir()} == {"0.4.31", "0.4.33"}
    assert all(p.suffix == ".diff" for p in dumps.iterdir() if not p.is_dir()), "text diffs beside"
    assert {p.suffix for p in dumps.glob("*/*") if p.is_file()} == {".txt"}, (
        "LLVM IR and objects not kept"
    )
    assert any(
        line.startswith("compiled programs of 0.4.31 and 0.4.33 (XLA's dumps in ")
        for line in data["why"]
    )
    # one profiled process each: 0.4.33's thunks, 0.4.31's ops by its traceme flag
    [profile] = data["profiles"]
    old, new = profile["ops"]
    assert "problem" not in old and "problem" not in new, profile
    assert any(line.startswith("where the time went, by op") for line in data["why"])


@pytest.mark.releases
@pytest.mark.parametrize(
    ("good", "bad", "message"),
    [
        ("0.4.32", "0.4.33", "jax 0.4.32 is not an installable release on the package index"),
        ("0.4.31", "9.9", "jax 9.9 is not an installable release on the package index"),
    ],
)
def test_nox_bisect_refuses_a_release_the_index_does_not_offer(good, bad, message):
    done = nox_session("bisect", "async_dispatch", "--claim", "--good", good, "--bad", bad)
    assert done.returncode == 2
    # nox passes the harness's lines through on either stream
    said = (done.stdout + done.stderr).splitlines()
    ours = [line for line in said if not line.startswith("nox >")]
    assert len(ours) == 1 and message in ours[0], done.stderr


class _Asked:
    """A kind of evidence that says one thing; ``_Stopped`` is stopped (Ctrl-C) while it is
    asked."""

    name = "first"

    def wanted(self, step, found):
        return True

    def gather(self, step, sides, found):
        from harness.steps.evidence import Skipped

        return Skipped(self.name, "what the first kind found")


class _Stopped(_Asked):
    name = "second"

    def gather(self, step, sides, found):
        raise KeyboardInterrupt


def test_a_why_stopped_part_way_keeps_the_answer_and_what_the_why_had_found(
    tmp_path, capsys, monkeypatch
):
    from harness.commands import ranges

    stored_range(tmp_path)
    stored_confirmations(tmp_path, [("0.4.31", "0.4.33")])
    monkeypatch.setattr(ranges, "kinds_for", lambda step, only: (_Asked(), _Stopped()))
    argv = command(tmp_path, "triage", "0.4.30", "0.4.34", "--metric", "eager.wall_ns")
    assert main(argv) == 130, "stopped as any Ctrl-C is"
    captured = capsys.readouterr()
    page = tmp_path / "reports" / "triage-async_dispatch-0.4.30-0.4.34-eager.wall_ns-N.1000-cpu.md"
    text = page.read_text()
    assert "- eager.wall_ns: slower ×3 since 0.4.33 (last good 0.4.31; " in text, "the answer"
    assert "first not asked: what the first kind found" in text, "what the why had found"
    assert "second not asked: the why was stopped while this kind was asked" in text
    assert captured.out.splitlines()[-1] == f"Report: {page}", "the answer printed all the same"
    assert "[triage] answer: eager.wall_ns: slower ×3 since 0.4.33" in captured.err, (
        "said as soon as known, before the why"
    )
    assert "harness: interrupted" in captured.err
