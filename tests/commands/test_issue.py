"""``issue``: whether the draft has a change to show decides whether a progress line comes before
its answer."""

import dataclasses
import fcntl
import json
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from harness.catalogue import discovery
from harness.commands import issue
from harness.commands.issue import (
    IssueRequest,
    drafts_an_ending,
    programs_to_time,
    run_script,
    stored_change,
    write_issue,
)
from harness.errors import HarnessError, UsageError
from harness.install import venvs
from harness.install.venvs import ReleaseEnv
from harness.measure.locks import TIMING_LOCK_DIR_VARIABLE
from harness.metric_names import parse_metric_name
from harness.store.results import load_results
from harness.store.schema import Settings
from harness.upstream.change import Change

from ..conftest import FIXTURES, SEGFAULT, derive, died, nox_in_repo, real_result, write_results


def test_a_change_is_given_or_stored(tmp_path):
    plan = [
        ReleaseEnv("0.4.33", "0.4.33", "3.12", ("jax==0.4.33",), tmp_path / "release-jax-0.4.33")
    ]
    asked = request(tmp_path, plan=plan)
    assert stored_change(asked, []) is None, "nox's plan and nothing stored: nothing to draft"
    given = request(tmp_path, plan=plan, good="0.4.31", bad="0.4.33")
    assert stored_change(given, [], given.good, given.bad) is not None
    (tmp_path / "reports").mkdir()
    answer = json.loads((FIXTURES / "issue" / "bisect-scan_sync.json").read_text()) | {
        "sizes": TINY
    }
    (tmp_path / "reports" / "bisect-scan_sync.json").write_text(json.dumps(answer))
    assert stored_change(asked, []) is not None


SCAN_SYNC = discovery.discover()["scan_sync"]


TINY = {"N": 16, "M": 1}


def answer(tmp_path, name, **data):
    (tmp_path / name).write_text(json.dumps(data))


def test_the_script_runs_by_name_from_its_folder(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text("import os, sys\nprint(os.getcwd())\nprint(sys.argv[0])\nsys.exit(3)\n")
    code, out, _ = run_script(script, timeout_s=60)
    assert code == 3
    assert out.splitlines() == [str(tmp_path), "probe.py"], (
        "tracebacks then name the file, not a local path"
    )


def test_a_script_that_hangs_is_stopped(tmp_path):
    script = tmp_path / "hangs.py"
    script.write_text("import time\nprint('started', flush=True)\ntime.sleep(60)\n")
    code, out, _ = run_script(script, timeout_s=1)
    assert code is None and "started" in out


def test_a_script_waits_for_the_machine_wide_measurement_lock(tmp_path, monkeypatch):
    """As every case process does: while another measurement holds the lock, the script does not
    start."""
    monkeypatch.setenv(TIMING_LOCK_DIR_VARIABLE, str(tmp_path))
    script = tmp_path / "clock.py"
    script.write_text("import time\nprint(time.time())\n")
    outcome = {}
    with open(tmp_path / "jax-repro-harness-timing.lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        runner = threading.Thread(
            target=lambda: outcome.update(done=run_script(script, timeout_s=60))
        )
        runner.start()
        time.sleep(1.0)
        assert runner.is_alive(), "the script ran while another measurement held the lock"
        released_at = time.time()
        fcntl.flock(held, fcntl.LOCK_UN)
    runner.join(timeout=60)
    code, out, _ = outcome["done"]
    assert code == 0 and float(out) >= released_at


def test_the_short_script_times_the_changed_program_else_every_program():
    output = (FIXTURES / "issue" / "scan_sync-output.txt").read_text()
    assert programs_to_time(None, output) == ["two_scans"]
    from harness.metric_names import MetricKey
    from harness.upstream.change import Change

    assert programs_to_time(Change(MetricKey("eager", "dispatch"), "a", "b"), output) == ["eager"]
    assert programs_to_time(Change(MetricKey("scan", "compile"), "a", "b"), output) == ["two_scans"]
    stored, _ = load_results(FIXTURES / "results")
    assert programs_to_time(None, "Traceback: the full script failed", stored) == [
        "eager",
        "jit",
        "two_scans",
    ]


def request(tmp_path: Path, **changes) -> IssueRequest:
    fields = {
        "case": SCAN_SYNC,
        "sizes": TINY,
        "settings": Settings(repeats=3, min_repeats=3, warmup=1, max_seconds=1.0),
        "profile": "cpu",
        "platform": "cpu",
        "results_dir": tmp_path / "results",
        "out_dir": tmp_path / "reports",
    }
    return IssueRequest(**(fields | changes))


def test_without_a_plan_both_scripts_run_here(tmp_path, monkeypatch):
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.setenv("HARNESS_LOCK_DIR", str(tmp_path))
    written = write_issue(request(tmp_path))
    assert [p.name for p in (written.draft, written.short, written.full)] == [
        "scan_sync.md",
        "scan_sync.py",
        "scan_sync-full.py",
    ]
    assert written.run.ok and "claim holds: " in written.run.stdout
    [here] = written.short_runs
    assert (
        here.role == "installed here"
        and here.run.ok
        and "metric two_scans wall_ns" in here.run.stdout
    )
    draft = written.draft.read_text()
    assert here.run.stdout.strip() in draft and "not a fresh venv" in draft
    assert "Not measured here" not in draft, "no change to measure: the JAX installed here"


def test_without_a_plan_the_draft_says_what_it_could_not_measure_and_the_command_that_does(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.setenv("HARNESS_LOCK_DIR", str(tmp_path))
    wall = parse_metric_name("two_scans.wall_ns")
    written = write_issue(request(tmp_path, good="0.4.31", bad="0.4.33", metric=wall))
    said = " ".join(written.draft.read_text().split())
    command = (
        "nox -s issue -- --case scan_sync --good 0.4.31 --bad 0.4.33 --metric two_scans.wall_ns "
        "--size N=16 --size M=1"
    )
    assert (
        "Not measured here (one JAX installed): the step confirmed, whether the newest release on "
        f"the index still shows it; `{command}`." in said
    ), said[:2000]
    assert written.measured and written.measured[0].startswith("Not measured here")


def test_with_a_plan_the_short_script_runs_on_both_releases_of_the_change_in_plain_venvs(
    tmp_path, monkeypatch
):
    """The flow with installs stubbed: this venv stands in for each release's (the labels are the
    plan's)."""
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.setenv("HARNESS_LOCK_DIR", str(tmp_path))
    plan = []
    for v in ("0.4.31", "0.4.33", "0.5.0"):
        for kind in ("release", "plain"):
            (tmp_path / f"{kind}-jax-{v}").symlink_to(sys.prefix)
        plan.append(
            ReleaseEnv(
                v,
                v,
                "3.12",
                ("-e", ".", f"jax=={v}", f"jaxlib=={v}"),
                tmp_path / f"release-jax-{v}",
            )
        )
    built = []
    monkeypatch.setattr(venvs, "ensure", lambda env: built.append((env.jax, env.install)))
    # What issue measures itself (the step, the newest release) is tested on real releases below.
    monkeypatch.setattr(issue, "measure_here", lambda request, change: issue.MeasuredHere())
    (tmp_path / "reports").mkdir()
    answer = json.loads((FIXTURES / "issue" / "bisect-scan_sync.json").read_text()) | {
        "sizes": TINY
    }
    (tmp_path / "reports" / "bisect-scan_sync.json").write_text(json.dumps(answer))
    written = write_issue(request(tmp_path, plan=plan, metric=None))
    assert built == [
        # the full script: the first bad release
        ("0.4.33", ("-e", ".", "jax==0.4.33", "jaxlib==0.4.33")),
        ("0.4.31", ("jax==0.4.31", "jaxlib==0.4.31")),  # the short one: jax and jaxlib alone
        ("0.4.33", ("jax==0.4.33", "jaxlib==0.4.33")),
    ]
    assert [(r.role, r.run.release) for r in written.short_runs] == [
        ("last good", "0.4.31"),
        ("first bad", "0.4.33"),
    ]
    draft = written.draft.read_text()
    assert "pip install jax==0.4.31 jaxlib==0.4.31" in draft
    assert "**Title:** `two_scans` " in draft and "since jax 0.4.33 (" in draft, (
        "figures from the two script runs"
    )
    shutil.rmtree(tmp_path / "reports")


def test_with_a_plan_and_no_change_to_draft_about_it_says_so_in_one_line_before_running_anything(
    tmp_path,
):
    plan = [
        ReleaseEnv("0.4.33", "0.4.33", "3.12", ("jax==0.4.33",), tmp_path / "release-jax-0.4.33")
    ]
    (tmp_path / "reports").mkdir()
    with pytest.raises(
        UsageError, match="nothing to draft about: no bisect or triage answer for scan_sync"
    ) as refused:
        write_issue(request(tmp_path, plan=plan, metric=None))
    assert "nox -s triage -- --case scan_sync" in str(refused.value)
    # at the sizes asked, as every command offered is built (``findings.nox_command``)
    assert "then draft it with `nox -s issue -- --case scan_sync --size N=16 --size M=1`" in str(
        refused.value
    )
    assert (
        not (tmp_path / "reports" / "issues").exists()
        and not (tmp_path / "release-jax-0.4.33").exists()
    )


def test_the_bisect_s_dumps_are_copied_beside_the_draft_and_nothing_else(tmp_path):
    reports, drafts = tmp_path / "reports", tmp_path / "reports" / "issues"
    kept = reports / "bisect-x-compiled"
    for release in ("0.4.31", "0.4.33"):
        (kept / release).mkdir(parents=True)
        (kept / release / "module_0005.jit_f.before_optimizations.txt").write_text(
            f"HloModule jit_f {release}"
        )
        (kept / release / "notes.txt").write_text("not XLA's")
    (tmp_path / "secret.txt").write_text("private")
    (kept / "0.4.31" / "module_0007.jit_g.before_optimizations.txt").symlink_to(
        tmp_path / "secret.txt"
    )
    drafts.mkdir()
    found = Change(None, "0.4.31", "0.4.33", dumps="bisect-x-compiled/")
    assert issue.copy_dumps(found, reports, drafts, "scan_sync") == "scan_sync-compiled/"
    copied = sorted(str(p.relative_to(drafts)) for p in drafts.rglob("*") if p.is_file())
    assert copied == [
        "scan_sync-compiled/0.4.31/module_0005.jit_f.before_optimizations.txt",
        "scan_sync-compiled/0.4.33/module_0005.jit_f.before_optimizations.txt",
    ], "a link and a file XLA would not name are left behind"
    assert issue.copy_dumps(Change(None, "0.4.31", "0.4.33"), reports, drafts, "scan_sync") == ""
    assert (
        issue.copy_dumps(
            Change(None, "../..", "0.4.30", dumps="bisect-x-compiled/"), reports, drafts, "c"
        )
        == ""
    )


def test_a_draft_never_names_a_dumps_folder_it_copied_nothing_into(tmp_path):
    reports, drafts = tmp_path / "reports", tmp_path / "reports" / "issues"
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "module_0005.jit_f.before_optimizations.txt").write_text("HloModule")
    (reports / "bisect-x-compiled").mkdir(parents=True)
    for release in ("0.4.31", "0.4.33"):  # each release's folder a link planted there
        (reports / "bisect-x-compiled" / release).symlink_to(tmp_path / "elsewhere")
    drafts.mkdir()
    found = Change(None, "0.4.31", "0.4.33", dumps="bisect-x-compiled/")
    assert issue.copy_dumps(found, reports, drafts, "scan_sync") == ""
    assert not any(drafts.rglob("*.txt"))


def test_the_reproducer_is_copied_beside_the_draft_only_where_it_showed_the_change(tmp_path):
    from harness.upstream.change import Reproduced

    reports, drafts = tmp_path / "reports", tmp_path / "reports" / "issues"
    kept = reports / "bisect-x-reproducer"
    (kept / "captured" / "0.4.31").mkdir(parents=True)
    for name in ("repro_0123456789.py", "programs.json", "program_01.jaxexport", "program_01.npz"):
        (kept / name).write_text(name)
    (kept / "notes.txt").write_text("not ours")
    (tmp_path / "secret.txt").write_text("private")
    (kept / "program_02.npz").symlink_to(tmp_path / "secret.txt")
    drafts.mkdir()
    metric = parse_metric_name("two_scans.wall_ns")
    found = Reproduced(
        "bisect-x-reproducer/", "repro_0123456789.py", "0.4.31", 34, {metric: ("slower", 1.3)}, {}
    )
    change = Change(metric, "0.4.31", "0.4.33", 2.2e8, 2.9e8, reproducer=found)
    assert issue.copy_reproducer(change, reports, drafts, "s") == "s-reproducer/"
    copied = sorted(p.name for p in (drafts / "s-reproducer").iterdir())
    assert copied == [
        "program_01.jaxexport",
        "program_01.npz",
        "programs.json",
        "repro_0123456789.py",
    ]
    unchanged = dataclasses.replace(found, measured={metric: ("unchanged", 1.0)})
    assert (
        issue.copy_reproducer(
            dataclasses.replace(change, reproducer=unchanged), reports, drafts, "t"
        )
        == ""
    )


def test_a_link_planted_at_a_part_of_the_draft_leaves_that_part_out_in_one_line(tmp_path, capsys):
    # The rule of docs/results.md: that part is not written, one line says so, the draft still is.
    reports, drafts = tmp_path / "reports", tmp_path / "reports" / "issues"
    kept = reports / "bisect-x-compiled"
    for release in ("0.4.31", "0.4.33"):
        (kept / release).mkdir(parents=True)
        (kept / release / "module_0005.jit_f.before_optimizations.txt").write_text("HloModule")
    drafts.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (drafts / "scan_sync-compiled").symlink_to(tmp_path / "elsewhere")
    found = Change(None, "0.4.31", "0.4.33", dumps="bisect-x-compiled/")
    assert issue.copy_dumps(found, reports, drafts, "scan_sync") == ""
    assert not any((tmp_path / "elsewhere").iterdir()), "nothing written through the link"
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 2 and all(
        line.startswith("harness: scan_sync-compiled/0.4.3")
        and "not written beside the draft" in line
        for line in said
    ), said


@pytest.mark.releases
def test_issue_alone_on_a_real_step_measures_it_its_reproducer_and_the_newest_release(tmp_path):
    """No bisect answer stored: ``issue`` measures jax 0.4.31 and 0.4.33 (asynchronous CPU dispatch)
    and the newest release on the index together, captures the program the script compiles ahead of
    time (never called through a jitted function), measures its reproducer on both, and says whether
    the newest release still shows the step; each side's install line pins every package whose
    version differs between them."""
    script = tmp_path / "aot_dispatch.py"
    shutil.copy(FIXTURES / "scripts" / script.name, script)
    results, out = tmp_path / "results", tmp_path / "out"
    done = nox_in_repo(
        *("-s", "issue", "--", "--script", str(script), "--metric", "json.dispatch_ms"),
        *("--good", "0.4.31", "--bad", "0.4.33", "--processes", "3", "--max-processes", "12"),
        *("--results", str(results), "--out", str(out)),
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    draft = (out / "issues" / "script-aot_dispatch.md").read_text()
    flat = " ".join(draft.split())
    assert "Newest release on the index: still on " in flat, flat[:3000]
    assert "still on " in " ".join(done.stdout.split()), "on the screen too"
    assert "exported no program" not in flat, "the program compiled ahead of time is captured"
    said = ("reproduces it with jax alone", "does not reproduce it", "jax alone is undecided")
    assert any(words in flat for words in said), flat[-4000:]
    mine = results / "script-aot_dispatch"  # the reproducer's own results are a case of their own
    measured = {path.parent.parent.name for path in mine.rglob("*.json")}
    assert {"jax-0.4.31", "jax-0.4.33"} < measured and len(measured) >= 3, measured
    installed = {}
    for path in mine.rglob("*.json"):
        data = json.loads(path.read_text())
        if data.get("libraries") and data["release"] in ("0.4.31", "0.4.33"):
            installed[data["release"]] = set(data["libraries"]["installed"])
    lines = [line for line in draft.splitlines() if line.startswith("pip install jax==0.4.3")]
    for release, other in (("0.4.31", "0.4.33"), ("0.4.33", "0.4.31")):
        [line] = [
            x for x in lines if x.startswith(f"pip install jax=={release} ") and "absl" not in x
        ]
        moved = installed[release] - installed[other]
        assert moved and all(pin in line.split() for pin in moved), (line, moved)


def test_issue_status_on_a_real_crash_drafts_jax_s_bug_form(tmp_path):
    """A plain-JAX script that segfaults on jax 0.4.33 alone (a version check): ``issue --status``
    measures 0.4.31, 0.4.33 and the newest release on the index together, and drafts the crash in
    JAX's bug form with the script itself, the signal, the stack at the fault, what the newest
    release does, and the crashing release's ``jax.print_environment_info()`` and CPU model."""
    script = tmp_path / "crashes_on_release.py"
    shutil.copy(FIXTURES / "scripts" / script.name, script)
    results, out = tmp_path / "results", tmp_path / "out"
    done = nox_in_repo(
        *("-s", "issue", "--", "--script", str(script), "--status", "--processes", "3"),
        *("--good", "0.4.31", "--bad", "0.4.33", "--results", str(results), "--out", str(out)),
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
    assert "crashes since jax 0.4.33 on CPU: SIGSEGV (exit 139)" in done.stdout, done.stdout
    draft = (out / "issues" / "script-crashes_on_release-crash.md").read_text()
    assert "runs ok on jax 0.4.31 (ok in 3 of 3 processes)" in draft, draft[:2000]
    assert "crashes on jax 0.4.33 (SIGSEGV (exit 139) in 3 of 3 processes)" in draft
    assert 'File "crashes_on_release.py", line' in draft, "faulthandler's stack at the fault"
    assert "about to crash" in draft, "the last lines it wrote"
    assert "if jax.__version__ == CRASHES_ON" in draft, "the script itself: it is plain JAX"
    assert "Newest release on the index: " in draft
    assert "jaxlib: 0.4.33" in draft and "CPU: " in draft
    assert "Workaround" not in draft, "no why found one"
    assert str(Path.home()) not in draft or str(Path.home()) == "/"


# An ending's draft (issue --status) without nox's plan: the step from a stored answer or
# --good/--bad, the crash from the stored results.

ANSWER = "bisect-async_dispatch-0.4.31-0.4.34-status-N.1000-cpu.json"
STACK = 'Current thread 0x1 (most recent call first):\n  File "/tmp/case.py", line 12 in programs'


def fields(tmp_path) -> dict:
    return {
        "case": discovery.discover()["async_dispatch"],
        "sizes": {"N": 1000},
        "settings": Settings(repeats=3, min_repeats=3, warmup=1, max_seconds=1.0),
        "profile": "cpu",
        "platform": "cpu",
        "results_dir": tmp_path / "results",
        "out_dir": tmp_path / "reports",
    }


def crash_request(tmp_path, **changes):
    return IssueRequest(**(fields(tmp_path) | {"status": True} | changes))


def stored(tmp_path, *, crashed: bool = True) -> None:
    base = real_result("async_dispatch-0.12.0.1")
    ok = derive(base, release="0.4.31", processes=3)
    dead = derive(base, release="0.4.33", processes=3)
    if crashed:
        died(dead, {**SEGFAULT, "stack": STACK})
    write_results(tmp_path / "results" / "async_dispatch", [ok, dead])


def test_with_nothing_stored_nor_given_there_is_nothing_to_draft_and_it_says_how_to_find_it(
    tmp_path,
):
    with pytest.raises(UsageError, match=r"nothing to draft about.*--status --good V --bad W"):
        write_issue(crash_request(tmp_path))


def test_a_stored_bisect_by_status_and_its_results_make_the_draft_with_its_workaround(tmp_path):
    (tmp_path / "reports").mkdir()
    shutil.copy(FIXTURES / "crash" / ANSWER, tmp_path / "reports" / ANSWER)
    stored(tmp_path)
    written = write_issue(crash_request(tmp_path))
    path, title, said = written.draft, written.title, written.measured
    assert path.name == "async_dispatch-crash.md" and written.short is not None
    assert written.short.name == "async_dispatch.py" and written.run is None
    assert title == "async_dispatch crashes since jax 0.4.33 on CPU: SIGSEGV (exit 139)"
    draft = path.read_text()
    assert (
        "Workaround: on jax 0.4.33 it runs with `XLA_FLAGS=--xla_cpu_use_thunk_runtime=false`"
        in draft
    )
    assert "a bisect of jax releases by how the script's processes end" in draft
    assert 'File "/tmp/case.py", line 12 in programs' in draft
    command = (
        "nox -s issue -- --case async_dispatch --status --good 0.4.31 --bad 0.4.33 --size N=1000"
    )
    [line] = said
    assert line.startswith("Not measured here (one JAX installed)") and command in line
    assert command in draft and written.short.is_file(), "the case's standalone script"


def test_releases_that_make_no_status_step_are_refused_in_one_line(tmp_path):
    stored(tmp_path, crashed=False)
    with pytest.raises(
        HarnessError, match=r"no crash to draft between jax 0\.4\.31 and jax 0\.4\.33: jax"
    ):
        write_issue(crash_request(tmp_path, good="0.4.31", bad="0.4.33"))


def test_a_stored_answer_its_stored_results_deny_is_one_line_naming_both_and_what_to_measure(
    tmp_path,
):
    """Results merged from another machine, or a rerun that no longer crashes: the answer says a
    crash, the results say ok."""
    (tmp_path / "reports").mkdir()
    shutil.copy(FIXTURES / "crash" / ANSWER, tmp_path / "reports" / ANSWER)
    stored(tmp_path, crashed=False)
    with pytest.raises(HarnessError) as refused:
        write_issue(crash_request(tmp_path))
    line = str(refused.value)
    assert "\n" not in line and line.startswith("the stored answer and the stored results disagree")
    assert ANSWER in line and "jax 0.4.31 → 0.4.33" in line and "results" in line
    assert "jax 0.4.33 ok in 3 of 3 processes" in line
    run = "nox -s run -- --case async_dispatch --jax {} --size N=1000"
    assert run.format("0.4.31") in line and run.format("0.4.33") in line


def test_a_crash_in_some_processes_confirmed_by_a_triage_drafts_with_its_counts(tmp_path):
    """A triage's confirmed step in how the processes end, whose stored results show deaths in
    some processes only (10 of 20 against 0 of 20): drafted with its counts, without being told
    ``--status``, never refused as "the stored answer and the stored results disagree"."""
    (tmp_path / "reports").mkdir()
    confirmed = {"metric": "status", "before": "0.4.31", "after": "0.4.33", "outcome": "confirmed"}
    first = {"case": "async_dispatch", "sizes": {"N": 1000}, "profile": "cpu"}
    answer = {"first_round": first, "confirmations": [confirmed]}
    triage = tmp_path / "reports" / "triage-async_dispatch-0.4.30-0.4.34-all-N.1000-cpu.json"
    triage.write_text(json.dumps(answer))
    base = real_result("async_dispatch-0.12.0.1")
    ok, dead = (derive(base, release=v, processes=20) for v in ("0.4.31", "0.4.33"))
    died(dead, {**SEGFAULT, "stack": STACK, "processes": 10})
    write_results(tmp_path / "results" / "async_dispatch", [ok, dead])
    written = write_issue(IssueRequest(**fields(tmp_path)))
    assert written.title == (
        "async_dispatch crashes since jax 0.4.33 in 10 of 20 processes (0 of 20 on 0.4.31) on "
        "CPU: SIGSEGV (exit 139)"
    )
    assert written.draft.name == "async_dispatch-crash.md"
    draft = " ".join(written.draft.read_text().split())
    assert "a triage of jax releases, its step measured again" in draft
    assert "in 0 of 20 on jax 0.4.31 (ok in 20 of 20 processes)" in draft


def test_issue_drafts_whichever_step_it_finds_an_ending_s_without_being_told(tmp_path):
    """One pipeline: ``issue`` without ``--status`` drafts the stored crash where no metric's step
    is stored, and the step ``--good``/``--bad`` make in the stored results; a metric asked is a
    metric's draft."""
    (tmp_path / "reports").mkdir()
    shutil.copy(FIXTURES / "crash" / ANSWER, tmp_path / "reports" / ANSWER)
    plan = [ReleaseEnv("0.4.33", "0.4.33", "3.12", ("jax==0.4.33",), tmp_path / "venv")]
    assert drafts_an_ending(IssueRequest(**(fields(tmp_path) | {"plan": plan})))
    assert not drafts_an_ending(
        IssueRequest(**(fields(tmp_path) | {"metric": parse_metric_name("loop.wall_ns")}))
    )
    given = fields(tmp_path) | {"good": "0.4.31", "bad": "0.4.33"}
    stored(tmp_path)
    assert drafts_an_ending(IssueRequest(**given))
    shutil.rmtree(tmp_path / "results")
    stored(tmp_path, crashed=False)
    assert not drafts_an_ending(IssueRequest(**given)), "both ran ok: a metric's step"
