"""The issue draft: JAX's bug-report form, numbers from stored results, short, valid, private."""

import dataclasses
import json
import os
import re
import socket

from harness.catalogue import discovery
from harness.measure.runner import Settings
from harness.store.results import StoredResult, load_results
from harness.upstream import export
from harness.upstream.draft import Bisect, DraftInputs, ScriptRun, bisect_answer, fenced, headline, render
from tests.conftest import FIXTURES, assert_valid_tables, document, tables, v1_result

ISSUE = FIXTURES / "issue"
SCAN_SYNC = discovery.discover()["scan_sync"]
SIZES = {"N": 16, "M": 3}


def stored() -> list[StoredResult]:
    found = []
    for folder in (FIXTURES / "results", ISSUE / "results"):
        results, problems = load_results(folder)
        assert problems == []
        found += results
    return found


def draft_inputs(**changes) -> DraftInputs:
    newest = next(r for r in stored() if r.case == "scan_sync" and r.release == "0.12.0.1")
    run = ScriptRun(
        release="0.12.0.1",
        profile="cpu",
        variables={"JAX_PLATFORMS": "cpu", "XLA_FLAGS": ""},
        returncode=0,
        stdout=(ISSUE / "scan_sync-output.txt").read_text(),
        stderr="",
        timeout_s=300.0,
    )
    inputs = DraftInputs(
        case=SCAN_SYNC,
        sizes=SIZES,
        script_name="scan_sync.py",
        script=export.export_script(SCAN_SYNC, SIZES, Settings().for_child()),
        run=run,
        environment_info=newest.result.jax.environment_info,
        results=stored(),
    )
    return dataclasses.replace(inputs, **changes)


def outside_details(markdown: str) -> str:
    return re.sub(r"<details>.*?</details>", "", markdown, flags=re.DOTALL)


def test_draft_follows_jax_bug_report_form_with_stored_numbers():
    text = render(draft_inputs())
    description = text.index("### Description")
    assert description < text.index("### System info (python version, jaxlib version, accelerator, etc.)")
    assert "**Title:** Two back-to-back lax.scan calls both return control to Python before their work" in text
    assert "not so on jax 0.4.26 (cpu)" in text
    assert f"**Expected** (from a user discussion): {SCAN_SYNC.claim}" in text
    assert "does not hold on jax 0.4.26 (cpu: 1 of 1 sizes)" in text
    assert "holds on jax 0.12.0.1 (cpu: 1 of 1 sizes)" in text
    evidence = "does not hold in 5 of 5 processes; e.g. scan 1 returned at 77.615 ms, scan 2 at 154.603 ms"
    assert evidence in text, "evidence of the stored 0.4.26 run: how many processes agree, and one's figures"
    assert "holds in 5 of 5 processes; e.g. scan 1 returned at 1.501 ms" in text
    assert "finds that the claim does not hold: scan 1 returned at 0.240 ms" in text, "the script's own verdict"
    assert "Run as `JAX_PLATFORMS=cpu XLA_FLAGS= python scan_sync.py`" in text
    assert "jax:    0.12.0.1" in text, "print_environment_info output"
    for line in (ISSUE / "scan_sync-output.txt").read_text().splitlines():
        assert line in text, "the observed output is quoted whole"


def test_the_whole_script_is_in_the_draft():
    inputs = draft_inputs()
    text = render(inputs)
    [block] = re.findall(r"```python\n(.*?)\n```", text, flags=re.DOTALL)
    assert block == inputs.script.rstrip()


def test_table_across_releases_has_status_verdict_and_medians():
    text = render(draft_inputs(sizes={"N": 100, "M": 500}))
    assert "Stored runs at the script's sizes (M=500 N=100)" in text
    rows = [row for table in tables(text) for row in table if "| scan_sync" in row or "| 0." in row]
    assert any(re.search(r"\| 0\.4\.26 +\| cpu +\| M=500 N=100 +\| ok +\| \*\*does not hold\*\*", r) for r in rows)
    assert any(re.search(r"\| 0\.12\.0\.1 +\| cpu +\| M=500 N=100 +\| ok +\| holds", r) for r in rows)
    # Each figure is the median of the process medians, the number comparisons judge: on 0.4.26 the pooled
    # samples' median (150 ms) differs from it; on 0.12.0.1 dispatch the pooled median would read 2.15 ms.
    assert "| two_scans: dispatch 143 ms, wall 143 ms; scan: compile 45.4 ms |" in text
    assert "| two_scans: dispatch 2.14 ms, wall 147 ms; scan: compile 80 ms" in text
    assert "No stored run at the script's sizes (M=3 N=16)" in render(draft_inputs())


def test_draft_is_valid_markdown_and_short():
    text = render(draft_inputs(bisects=[Bisect("bisect-scan_sync.json", {"last_good": "a", "first_bad": "b"})]))
    assert tables(text)
    assert_valid_tables(text)
    # the script, all stored runs, the bisect file, the environment
    assert text.count("<details>") == text.count("</details>") == 4
    fences = [line for line in text.splitlines() if line.startswith("```")]
    assert len(fences) % 2 == 0
    shown = [line for line in outside_details(text).splitlines() if line.strip()]
    assert len(shown) <= 40, "long parts belong in <details>"


def test_bisect_section_only_when_an_answer_is_stored():
    assert "#### Bisect" not in render(draft_inputs())
    answer = json.loads((ISSUE / "bisect-scan_sync.json").read_text())
    text = render(
        draft_inputs(bisects=[Bisect("bisect-scan_sync.json", answer), Bisect("bisect-scan_sync-x.json", None, "bad")])
    )
    assert "From `bisect-scan_sync.json`: last good 0.4.31, first bad 0.4.33" in text
    assert "`bisect-scan_sync-x.json` could not be read: bad" in text


def test_bisect_answer_reads_any_shape():
    assert bisect_answer({"answer": "first fails in\n0.4.33"}) == "first fails in 0.4.33"
    assert bisect_answer({"release": "0.4.33", "details": {"x": 1}}) == "release: 0.4.33"
    assert bisect_answer(["0.4.31", "0.4.33"]) == '["0.4.31", "0.4.33"]'


def test_a_failing_script_is_reported_with_its_error():
    run = dataclasses.replace(draft_inputs().run, returncode=1, stdout="", stderr="Traceback\nValueError: boom\n")
    text = render(draft_inputs(run=run))
    assert "exited with code 1" in text and "ValueError: boom" in text
    timed_out = dataclasses.replace(run, returncode=None)
    assert "did not finish within 300 s" in render(draft_inputs(run=timed_out))


def test_nothing_private_leaks(monkeypatch):
    home, host = "/home/jdoe-private", "jdoe-laptop"
    monkeypatch.setenv("HOME", home)
    monkeypatch.setattr(socket, "gethostname", lambda: host)
    assert os.path.expanduser("~") == home
    leaky = []
    for result in stored():
        data = document(result)
        for process in data["processes"]:
            process["claim"]["evidence"] += f" (dumped to {home}/dumps on {host})"
            process["jax"]["environment_info"] += f"\nplatform: uname_result(node='{host}')"
        data["host"]["variables"] = {
            "HOME": home,
            "API_TOKEN": "s3cr3t",
            "JAX_SOME_TOKEN": "s3cr3t-under-an-allowed-prefix",
            "XLA_FLAGS": f"--xla_dump_to={home}/d",
        }
        leaky.append(StoredResult.from_document(result.path, data))
    run = dataclasses.replace(
        draft_inputs().run,
        variables={
            "XLA_FLAGS": f"--xla_dump_to={home}/xla",
            "API_TOKEN": "s3cr3t",
            "JAX_SOME_TOKEN": "s3cr3t-under-an-allowed-prefix",
            "XLA_OPAQUE": "ghp_0123456789abcdefghijklmnopqrstuvwx",
            "USER": "jdoe",
        },
        stdout=(ISSUE / "scan_sync-output.txt").read_text() + f"written to {home}/out on {host}\n",
        returncode=1,
        stderr=f'File "{home}/venv/lib/jax/core.py", line 1 on {host}\n',
    )
    text = render(
        draft_inputs(
            results=leaky,
            run=run,
            environment_info=f"jax: 0.12.0.1\nplatform: uname_result(node='{host}')",
            bisects=[Bisect("bisect-scan_sync.json", {"answer": f"see {home}/bisect on {host}"})],
        )
    )
    for secret in (home, "jdoe-private", host, "s3cr3t", "API_TOKEN", "JAX_SOME_TOKEN", "ghp_", "USER"):
        assert secret not in text, secret
    assert "--xla_dump_to=~/xla" in text and "<host>" in text, "allow-listed variables stay, scrubbed"


def test_headline_and_fences():
    assert headline("A returns at once: dispatch under half.") == "A returns at once"
    assert fenced("x ``` y", "text").startswith("````text\n")


def test_examples_prefer_the_script_sizes_and_profile_and_title_groups_profiles():
    results = []
    for result in stored():
        for profile in ("cpu", "cpu8"):
            data = document(result) | {"profile": profile}
            for process in data["processes"]:
                process["claim"]["evidence"] += f" [{profile}]"
            results.append(StoredResult.from_document(result.path, data))
    text = render(draft_inputs(results=results))
    assert "not so on jax 0.4.26 (cpu, cpu8)" in text
    assert "(dispatch 100% of completion) [cpu];" in text, "the example run has the script's profile"
    assert "[cpu8];" not in text


def test_an_unsettled_claim_is_named_not_left_out():
    # A version-1 result was measured in one process: its claim is unsettled, whatever that process found.
    one = StoredResult.from_document(ISSUE / "v1.json", v1_result("scan_sync-0.4.26") | {"profile": "cpu8"})
    text = render(draft_inputs(sizes={"N": 100, "M": 500}, results=[*stored(), one]))
    assert "**Observed** over 3 stored run(s): it does not hold on jax 0.4.26 (cpu: 1 of 1 sizes); " in text
    assert "it is unsettled on jax 0.4.26 (cpu8: 1 of 1 sizes)." in text
    assert "not so on jax 0.4.26 (cpu)\n" in text, "the title counts settled runs only"
    rows = [row for table in tables(text) for row in table]
    assert any(re.search(r"\| 0\.4\.26 +\| cpu8 +\| M=500 N=100 +\| ok +\| unsettled +\|", r) for r in rows)
    assert "(a run's median is the median of its process medians)" in text
