"""The issue draft: a title with the change, short code, install line, real output per release,
tables, private; its first sentences: how sure, which phase moved, where the report comes from."""

import dataclasses
import os
import re
import socket
from pathlib import Path

from harness.catalogue import discovery
from harness.catalogue.discovery import CaseInfo
from harness.catalogue.subjects import PlainScript
from harness.metric_names import MetricKey, parse_metric_name
from harness.render import issue_draft
from harness.render.issue_draft import (
    SCRIPT_LINES,
    SHOWN_LINES,
    DraftInputs,
    ReleaseRun,
    ScriptRun,
    draft_title,
    fenced,
    headline,
    how_sure,
    phase_reading,
    render,
)
from harness.store.results import StoredResult
from harness.store.schema import EndKind, Settings
from harness.upstream import export
from harness.upstream.change import (
    Change,
    Dead,
    ProbeRow,
    change_from,
    read_bisect_answers,
)
from harness.upstream.minimal import minimal_script
from tests.conftest import FIXTURES, assert_valid_tables, document, stored_in, tables

from ..conftest import SEGFAULT, as_stored, derive, died, real_result

ISSUE = FIXTURES / "issue"
SCAN_SYNC = discovery.discover()["scan_sync"]
SIZES = {"N": 100, "M": 500}  # the fixtures' stored results of scan_sync are at these sizes
WALL = MetricKey("two_scans", "wall")
VARIABLES = {"JAX_PLATFORMS": "cpu", "XLA_FLAGS": ""}


def stored() -> list[StoredResult]:
    return stored_in(FIXTURES / "results", ISSUE / "results")


def short_output(release: str, dispatch_ms: float, wall_ms: float) -> str:
    return (
        f"jax {release} jaxlib {release} backend cpu devices 1\n"
        f"metric two_scans dispatch_ns median={dispatch_ms * 1e6:.0f} min=1 "
        f"max={wall_ms * 2e6:.0f} n=20\n"
        f"metric two_scans wall_ns median={wall_ms * 1e6:.0f} min=1 max={wall_ms * 2e6:.0f} n=20\n"
    )


def release_run(
    role: str, release: str, dispatch_ms: float, wall_ms: float, pins: tuple[str, ...] = ()
) -> ReleaseRun:
    run = ScriptRun(
        release, "cpu", VARIABLES, 0, short_output(release, dispatch_ms, wall_ms), "", 300.0
    )
    install = [f"jax=={release}", f"jaxlib=={release}", *pins]
    packages = [f"jax=={release}", f"jaxlib=={release}", "ml-dtypes==0.4.1", "numpy==1.26.4"]
    where = (
        f"in a venv of its own (`.nox/plain-jax-{release}`, made with uv) holding only jax, jaxlib "
        "and their needs"
    )
    return ReleaseRun(role, run, install, where, packages)


def change() -> Change:
    probes = [
        ProbeRow("0.4.31", 2.18e8, "good", "–", "–"),
        ProbeRow("0.4.33", 2.89e8, "bad", "×1.33, p=0.0001", "–"),
    ]
    return Change(
        WALL,
        "0.4.31",
        "0.4.33",
        2.18e8,
        2.89e8,
        "`bisect-scan_sync.json`",
        "first bad 0.4.33",
        probes,
    )


def draft_inputs(**changes) -> DraftInputs:
    newest = next(
        r for r in stored() if r.result.case == "scan_sync" and r.result.release == "0.12.0.1"
    )
    full = ScriptRun(
        "0.4.33", "cpu", VARIABLES, 0, (ISSUE / "scan_sync-output.txt").read_text(), "", 300.0
    )
    inputs = DraftInputs(
        case=SCAN_SYNC,
        sizes=SIZES,
        platform="cpu",
        short_name="scan_sync.py",
        short_script=minimal_script(SCAN_SYNC, SIZES, ["two_scans"], repeats=20, warmup=2),
        short_runs=[
            release_run("last good", "0.4.31", 218, 218),
            release_run("first bad", "0.4.33", 3.7, 289),
        ],
        full_name="scan_sync-full.py",
        full_run=full,
        environment_info=newest.result.jax.environment_info,
        results=stored(),
        change=change(),
    )
    return dataclasses.replace(inputs, **changes)


def outside_details(markdown: str) -> str:
    return re.sub(r"<details>.*?</details>", "", markdown, flags=re.DOTALL)


def test_the_title_says_what_changed_by_how_much_since_when_and_nothing_else():
    text = render(draft_inputs())
    [line] = [line for line in text.splitlines() if line.startswith("**Title:**")]
    assert (
        line == "**Title:** `two_scans` wall ×1.33 slower since jax 0.4.33 (218 ms → 289 ms) on CPU"
    )
    assert headline(SCAN_SYNC.claim) not in line and "0.4.31" not in line
    assert text.count(SCAN_SYNC.claim) == 1, "the claim is context, said once"


def test_the_description_cites_the_cases_source_when_it_is_a_url():
    linked = dataclasses.replace(
        SCAN_SYNC, source="https://github.com/jax-ml/jax/discussions/21411"
    )
    text = render(draft_inputs(case=linked))
    assert "a user discussion (https://github.com/jax-ml/jax/discussions/21411): " in text
    titled = dataclasses.replace(SCAN_SYNC, source='"A thread\'s title"; its URL was not found')
    assert "a user discussion: " in render(draft_inputs(case=titled))


def test_the_draft_follows_jax_bug_report_form():
    text = render(draft_inputs())
    assert text.index("### Description") < text.index(
        "### System info (python version, jaxlib version"
    )
    assert "between jax 0.4.31 and jax 0.4.33 (218 ms → 289 ms)" in text
    assert "`two_scans` wall (until ready) got ×1.33 slower" in text


def test_the_short_script_is_shown_whole_with_its_install_line_and_environment():
    inputs = draft_inputs()
    text = render(inputs)
    blocks = re.findall(r"```python\n(.*?)\n```", outside_details(text), flags=re.DOTALL)
    assert blocks == [inputs.short_script.rstrip()], (
        "only the short script is shown; the full one is a file"
    )
    assert f"(scan_sync.py, {len(inputs.short_script.splitlines())} lines, plain JAX)" in text
    # One block per release, the release named above it: copying a block installs that release
    # alone.
    assert "jax 0.4.31 (last good):\n\n```sh\npip install jax==0.4.31 jaxlib==0.4.31\n```" in text
    assert "jax 0.4.33 (first bad):\n\n```sh\npip install jax==0.4.33 jaxlib==0.4.33\n```" in text
    blocks = re.findall(r"```sh\n(.*?)\n```", text, flags=re.DOTALL)
    assert [block.count("pip install") for block in blocks] == [1, 1]
    assert "then run `JAX_PLATFORMS=cpu python scan_sync.py`" in text, (
        "set variables only, empty ones left out"
    )
    assert "scan_sync-full.py" in text and "def measure(" not in text


def test_numpy_below_2_is_pinned_where_the_release_rules_say_and_quoted_for_the_shell():
    old = release_run("last good", "0.4.25", 200, 200, pins=("numpy<2",))
    text = render(draft_inputs(short_runs=[old, release_run("first bad", "0.4.26", 3, 300)]))
    assert "pip install jax==0.4.25 jaxlib==0.4.25 'numpy<2'" in text


def test_the_real_output_on_both_releases_is_quoted_whole_with_where_it_ran():
    inputs = draft_inputs()
    text = render(inputs)
    for r in inputs.short_runs:
        assert r.run.stdout.strip() in text
        assert (
            f"On jax {r.run.release} ({r.role}), in a venv of its own "
            f"(`.nox/plain-jax-{r.run.release}`" in text
        )
    rows = [row for table in tables(text) for row in table if row.startswith("| 0.4.3")]
    assert any(re.fullmatch(r"\| 0\.4\.31 +\| 218 ms +\| 218 ms +\|", row) for row in rows)
    assert any(re.fullmatch(r"\| 0\.4\.33 +\| 3\.7 ms +\| 289 ms +\|", row) for row in rows)
    assert "- jax 0.4.31: jax==0.4.31, jaxlib==0.4.31, ml-dtypes==0.4.1, numpy==1.26.4" in text


def test_evidence_is_tables_never_raw_json():
    text = render(draft_inputs())
    assert "Bisect (`bisect-scan_sync.json`): first bad 0.4.33" in text
    assert re.search(r"\| 0\.4\.33 +\| 289 ms +\| ×1\.33, p=0\.0001 +\| bad +\|", text), (
        "no empty vs bad"
    )
    assert '{"case"' not in text and '"probes"' not in text and "```json" not in text
    assert "Earlier measurements at M=500 N=100, the newest of each release" in text
    rows = [row for table in tables(text) for row in table]
    assert any(re.match(r"\| 0\.4\.26 +\| 143 ms +\| – +\| does not hold +\|", row) for row in rows)
    assert any(
        re.match(r"\| 0\.12\.0\.1 +\| 147 ms +\| ×1\.0\d +\| holds +\|", row) for row in rows
    )


def test_the_draft_is_valid_markdown_short_and_folds_the_environment():
    text = render(draft_inputs())
    assert_valid_tables(text)
    assert text.count("<details>") == text.count("</details>") == 2, (
        "the full script's output, the environment"
    )
    assert "jax.print_environment_info()" in text and "jax:    0.12.0.1" in text
    assert "jax:    0.12.0.1" not in outside_details(text)
    assert len([line for line in text.splitlines() if line.startswith("```")]) % 2 == 0
    shown = [line for line in outside_details(text).splitlines() if line.strip()]
    script_lines = len(draft_inputs().short_script.splitlines())
    assert len(shown) - script_lines <= 45, "besides the short script, the draft reads short"


def test_without_a_change_the_draft_still_shows_the_script_and_its_output():
    run = dataclasses.replace(
        draft_inputs().short_runs[0], role="installed here", install=[], packages=[]
    )
    text = render(draft_inputs(change=None, short_runs=[run]))
    assert "**Title:** Two back-to-back lax.scan calls both return control to Python" in text
    assert (
        text.rstrip().endswith("</details>") and "pip install" not in text and "Bisect" not in text
    )


def test_a_failing_script_is_reported_with_its_error():
    inputs = draft_inputs()
    broken = dataclasses.replace(
        inputs.short_runs[1].run, returncode=1, stdout="", stderr="Traceback\nValueError: x\n"
    )
    text = render(
        draft_inputs(
            short_runs=[inputs.short_runs[0], dataclasses.replace(inputs.short_runs[1], run=broken)]
        )
    )
    assert "(exit code 1)" in text and "ValueError: x" in text
    stopped = dataclasses.replace(inputs.full_run, returncode=None)
    assert "(stopped after 300 s)" in render(draft_inputs(full_run=stopped))


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
        leaky.append(StoredResult.from_document(result.path, data))
    variables = {
        "XLA_FLAGS": f"--xla_dump_to={home}/xla",
        "API_TOKEN": "s3cr3t",
        "JAX_SOME_TOKEN": "s3cr3t-under-an-allowed-prefix",
        "XLA_OPAQUE": "ghp_0123456789abcdefghijklmnopqrstuvwx",
        "USER": "jdoe",
    }
    inputs = draft_inputs()
    full = dataclasses.replace(
        inputs.full_run,
        variables=variables,
        stdout=inputs.full_run.stdout + f"written to {home}/out on {host}\n",
        returncode=1,
        stderr=f'File "{home}/venv/lib/jax/core.py", line 1 on {host}\n',
    )
    short = dataclasses.replace(
        inputs.short_runs[0].run, variables=variables, stdout=f"at {home} on {host}\n"
    )
    text = render(
        draft_inputs(
            results=leaky,
            full_run=full,
            short_runs=[
                dataclasses.replace(inputs.short_runs[0], run=short, environment=f"in {home}/venv")
            ],
            environment_info=f"jax: 0.12.0.1\nplatform: uname_result(node='{host}')",
            change=dataclasses.replace(change(), answer=f"see {home}/bisect on {host}"),
        )
    )
    for secret in (
        home,
        "jdoe-private",
        host,
        "s3cr3t",
        "API_TOKEN",
        "JAX_SOME_TOKEN",
        "ghp_",
        "USER",
    ):
        assert secret not in text, secret
    assert "--xla_dump_to=~/xla" in text and "<host>" in text, (
        "allow-listed variables stay, scrubbed"
    )


def test_no_credential_reaches_the_run_as_line_the_variables_or_the_environment_info(monkeypatch):
    for name in ("JAX_SECRET_TOKEN", "JAX_PASS", "JAX_LICENSE_KEY", "XLA_SERVICE_SECRET"):
        monkeypatch.delenv(name, raising=False)  # only what the draft is given can leak
    variables = {
        "JAX_PASS": "planted-pass",
        "JAX_LICENSE_KEY": "planted-licence",
        "JAX_CACHE_URL": "https://alice:planted-url@cache.example/",
        "JAX_PLATFORMS": "cpu",
    }
    info = "jax: 0.12.0.1\n" + "\n".join(
        f"{k}={v}"
        for k, v in {
            **variables,
            "JAX_SECRET_TOKEN": "abc",
            "XLA_SERVICE_SECRET": "planted-xla",
        }.items()
    )
    inputs = draft_inputs()
    full = dataclasses.replace(inputs.full_run, variables=variables)
    short = dataclasses.replace(inputs.short_runs[0].run, variables=variables)
    text = render(
        draft_inputs(
            full_run=full,
            short_runs=[dataclasses.replace(inputs.short_runs[0], run=short)],
            environment_info=info,
        )
    )
    for secret in ("planted-", "alice", "JAX_SECRET_TOKEN=abc"):
        assert secret not in text, secret
    [run_as] = [line for line in text.splitlines() if line.startswith("Run as")]
    assert "JAX_CACHE_URL='https://***@cache.example/'" in run_as and "JAX_PLATFORMS=cpu" in run_as
    assert "JAX_PASS" not in run_as, (
        "a redacted variable is left out of a command meant for posting"
    )


def test_headline_and_fences():
    assert headline("A returns at once: dispatch under half.") == "A returns at once"
    assert fenced("x ``` y", "text").startswith("````text\n")


def test_the_full_script_is_todays_export():
    """The instrumented script beside the draft is the exported one, unchanged."""
    full = export.export_script(SCAN_SYNC, SIZES, Settings().for_child())
    assert "def measure(" in full and "claim holds: " in full


def test_a_plain_scripts_draft_shows_its_phases_and_own_numbers_per_release(tmp_path):
    from harness.render.issue_draft import script_figures_table
    from harness.store.results import StoredResult
    from tests.conftest import derive, real_result

    stored = []
    for release, scale in (("0.5.0", 1.0), ("0.5.1", 1.7)):
        data = derive(
            real_result("async_dispatch-0.12.0.1"), release=release, case="script-repro", sizes={}
        )
        for process in data["processes"]:
            process["figures"] = {
                "process.import_ns": 2.1e9,
                "process.trace_ns": 8e8 / scale,
                "json.reg_ms": 10 * scale,
            }
        stored.append(StoredResult.from_document(tmp_path / f"{release}.json", data))
    script = dataclasses.replace(
        SCAN_SYNC, name="script-repro", subject=PlainScript("repro.py", "0" * 64)
    )
    profile = stored[0].result.profile
    table = script_figures_table(draft_inputs(case=script, results=stored, change=None), profile)
    header, _, *rows = [
        [cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()[2:]
    ]
    assert header == [
        "jax",
        "process.import_ns",
        "process.trace_ns",
        "json.reg_ms",
        "process.peak_rss_bytes",
    ]
    assert rows == [
        ["0.5.0", "2.1 s", "800 ms", "10 ms", "249 MiB"],
        ["0.5.1", "2.1 s", "471 ms", "17 ms", "249 MiB"],
    ], "each in its own unit: a duration, a script's _ms number as the duration it is, a size"
    asked = change_from(
        [],
        stored,
        case="script-repro",
        sizes={},
        profile=stored[0].result.profile,
        good="0.5.0",
        bad="0.5.1",
        metric=MetricKey("json", "reg_ms"),
    )
    asked_inputs = draft_inputs(case=script, results=stored, change=asked)
    shown, folded = script_figures_table(asked_inputs, profile).split("<details>")
    columns = [cell.strip() for cell in shown.strip().splitlines()[2].strip("|").split("|")]
    assert columns == ["jax", "process.trace_ns", "json.reg_ms"], (
        "what moved, and the one asked about"
    )
    assert "The other 2, which did not move" in folded
    from harness.render.issue_draft import releases_table

    reg = MetricKey("json", "reg_ms")
    from harness.analysis.metrics import compare_results
    from harness.analysis.significance import Thresholds

    rule = Thresholds(values=("json.reg_ms",))
    compared = compare_results(stored[0], stored[1], reg, rule)
    assert compared is not None
    value = Change(reg, "0.5.0", "0.5.1", comparisons={reg: compared}, significant=True)
    as_values = releases_table(
        draft_inputs(case=script, sizes={}, results=stored, change=value), profile
    )
    assert f"| {compared.said} (jax 0.5.0 → 0.5.1) " in as_values, "the step's own comparison"
    assert "×1.7" not in as_values, "a value's step is no ratio"
    assert "*vs previous* is the step's comparison" in as_values
    assert "process.import_ns" in folded and "process.peak_rss_bytes" in folded


def speed_up() -> Change:
    probes = [
        ProbeRow("0.4.31", 2.89e8, "good", "–", "–"),
        ProbeRow("0.4.33", 2.18e8, "bad", "–", "–"),
    ]
    return dataclasses.replace(
        change(),
        before_ns=2.89e8,
        after_ns=2.18e8,
        probes=probes,
        answer="first bad 0.4.33, last good 0.4.31",
    )


def test_a_speed_up_is_said_in_neutral_words():
    runs = [
        release_run("last good", "0.4.31", 289, 289),
        release_run("first bad", "0.4.33", 3.7, 218),
    ]
    text = render(draft_inputs(change=speed_up(), short_runs=runs))
    assert "×1.33 faster since jax 0.4.33" in text
    for word in ("first bad", "last good", "vs good", "vs bad"):
        assert word not in text, word
    assert "jax 0.4.31 (the last release before the change):" in text
    assert "On jax 0.4.33 (the first release with the change)" in text
    assert (
        "Bisect (`bisect-scan_sync.json`): the change lies between jax 0.4.31 and jax 0.4.33"
        in text
    )
    assert re.search(r"\| 0\.4\.33 +\| 218 ms +\| like 0\.4\.33 +\|", text)


def test_a_slowdown_keeps_good_and_bad():
    text = render(draft_inputs())
    assert "jax 0.4.31 (last good):" in text and "On jax 0.4.33 (first bad)" in text


def test_no_table_of_the_draft_has_a_column_empty_in_every_row():
    for text in (render(draft_inputs()), render(draft_inputs(change=speed_up()))):
        assert_valid_tables(text)
        for found in tables(text):
            header, _, *rows = found
            cells = [[c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]
            for i, name in enumerate(c.strip() for c in header.split("|")[1:-1]):
                assert any(row[i] not in ("", "–") for row in cells), (
                    f"column {name!r} is empty in every row"
                )


def test_the_draft_uses_no_harness_jargon():
    inputs = draft_inputs()
    compared = dataclasses.replace(
        inputs.change,
        significant=True,
    )
    # past the note to the user
    text = render(dataclasses.replace(inputs, change=compared)).split("-->", 1)[1]
    for jargon in (
        "harness",
        " sides",
        " cells",
        "profile `",
        "run's process medians",
        "stored runs",
    ):
        assert jargon not in text.lower(), jargon


def test_why_it_changed_is_quoted_with_the_dumps_beside_the_draft():
    from harness.findings import Finding

    why = (
        Finding(
            "on 0.4.33, XLA_FLAGS=--xla_cpu_use_thunk_runtime=false gives ×1.02 of 0.4.31: a "
            "workaround",
            leads=True,
        ),
        Finding(
            "compiled programs of 0.4.31 and 0.4.33 (XLA's dumps in "
            "`bisect-x-compiled/<release>/`): 1 module(s) compared",
            leads=True,
        ),
        Finding(
            "defaults that changed from 0.4.31 to 0.4.33: xla_cpu_use_thunk_runtime: false → true"
        ),
    )
    found = dataclasses.replace(change(), why=why, dumps="bisect-x-compiled/")
    text = render(draft_inputs(change=found, dumps="scan_sync-compiled/"))
    evidence = text.split("#### Evidence", 1)[1]
    assert "Why, as far as measured (jax 0.4.31 → 0.4.33):\n\n- on 0.4.33, XLA_FLAGS=" in evidence
    assert "(XLA's dumps in `scan_sync-compiled/<release>/`, beside this draft)" in evidence
    assert "bisect-x-compiled" not in text
    shown, folded = evidence.split("<details><summary>1 more: every changed default tried", 1)
    assert "defaults that changed" in folded and "defaults that changed" not in shown, (
        "read first, the rest folded"
    )
    assert "Why, as far as measured" not in render(draft_inputs())
    unmarked = dataclasses.replace(found, why=tuple(Finding(f.text) for f in why))
    said = render(draft_inputs(change=unmarked, dumps="scan_sync-compiled/"))
    assert "<details><summary>" not in said.split("#### Evidence", 1)[1].split("Earlier")[0], (
        "an older answer's sentences, none marked leading, are all shown"
    )


def test_a_reproducer_that_showed_the_change_leads_the_draft_with_jax_alone():
    from harness.upstream.change import Reproduced

    measured = {WALL: ("slower", 1.29)}
    found = dataclasses.replace(
        change(),
        reproducer=Reproduced(
            "bisect-x-reproducer/",
            "repro_0123456789.py",
            "0.4.31",
            34,
            measured,
            {WALL: parse_metric_name("json.run_ms")},
        ),
    )
    text = render(draft_inputs(change=found, reproducer="scan_sync-reproducer/"))
    alone, original = text.split("#### Reproduce with jax alone", 1)[1].split(
        "#### The original script"
    )
    assert "python scan_sync.py" in original, "the user's script kept, after it"
    assert "`scan_sync-reproducer/repro_0123456789.py` (34 lines)" in alone
    flat = " ".join(alone.split())
    assert (
        "it reproduces the change on `json.run_ms`, its counterpart of "
        f"{WALL.quoted()}: ×1.29 (the original script: ×1.33"
    ) in flat, "on that metric, said so"
    installs = [line for line in alone.splitlines() if line.startswith("pip install")]
    assert installs == [
        "pip install jax==0.4.31 jaxlib==0.4.31 flatbuffers absl-py",
        "pip install jax==0.4.33 jaxlib==0.4.33 flatbuffers absl-py",
    ], "jax and jaxlib alone, and what jax.export needs to read a module"
    assert text.index("with jax alone") < text.index("The original script")
    assert "#### Reproduce\n" in render(draft_inputs()), "without one, the script reproduces"


def first_screen(text: str) -> str:
    return text.split("-->", 1)[1].split("#### Reproduce", 1)[0]


def test_the_first_screen_of_a_case_a_fix_a_commit_level_and_a_script_draft_reads_in_a_minute():
    script_case = dataclasses.replace(SCAN_SYNC, subject=PlainScript("repro.py", "0" * 64))
    below = dataclasses.replace(
        change(), below="jax commit f255fb700a (#23112) is the first bad commit"
    )
    drafts = {
        "case": render(draft_inputs()),
        "fix": render(draft_inputs(change=speed_up())),
        "commit": render(draft_inputs(change=below)),
        "script": render(draft_inputs(case=script_case)),
    }
    for kind, text in drafts.items():
        screen = first_screen(text)
        assert len(screen.split()) <= 150, (kind, len(screen.split()))
        assert "harness" not in screen.lower() and "Welch" not in screen, kind
        assert "**Title:**" in screen and "### Description" in screen, kind
    assert "Found with a user's script, `repro.py`, run unmodified" in first_screen(
        drafts["script"]
    )
    assert "claim from a user discussion" not in first_screen(drafts["script"])
    assert "Found while checking a claim from a user discussion" in first_screen(drafts["case"])
    assert "Below the releases: jax commit f255fb700a" in first_screen(drafts["commit"])
    assert "faster" in first_screen(drafts["fix"]) and "bad" not in first_screen(drafts["fix"])


def test_a_script_is_called_plain_jax_only_when_it_imports_nothing_else():
    library = "import jax\nimport diffrax\nimport equinox as eqx\nprint(jax.__version__)\n"
    text = render(draft_inputs(short_script=library))
    assert "plain JAX" not in text
    assert "(scan_sync.py, 4 lines, with diffrax, equinox)" in text
    assert "lines, plain JAX)" in render(draft_inputs())


def test_a_credential_in_stored_results_is_redacted_and_the_short_script_pasted_as_it_is():
    token = "Bearer 0123456789abcdefABCDEF"
    leaky = []
    for result in stored():
        data = document(result)
        for process in data["processes"]:
            process["claim"]["evidence"] += f" (Authorization: {token})"
        leaky.append(StoredResult.from_document(result.path, data))
    inputs = draft_inputs()
    script = inputs.short_script + "y = jax.random.normal(key=subkey_0123456789abcdef)\n"
    text = render(
        draft_inputs(
            results=leaky,
            short_script=script,
            change=dataclasses.replace(change(), answer=f"AKIAIOSFODNN7EXAMPLE {token}"),
        )
    )
    assert "0123456789abcdefABCDEF" not in text and "AKIA" not in text
    assert "key=subkey_0123456789abcdef)" in text, "the short script is the case's own code"


# The draft for an ending (a crash report), rendered from stored fixture answers and results.

SCRIPT = (
    "import os, signal\nimport jax\nif jax.__version__ == '0.4.33':\n    os.kill(os.getpid(), "
    "signal.SIGSEGV)\n"
)
STACK = (
    "Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call first):\n"
    + "\n".join(f'  File "repro.py", line {n} in <module>' for n in range(60))
    + '\n  File "<frozen runpy>", line 88 in _run_code'
    + '\n  File "/opt/venv/lib/harness/measure/script_hook.py", line 340 in main'
)


REPRO = CaseInfo(
    "script-repro",
    Path("repro.py"),
    "",
    "",
    None,  # type: ignore[arg-type]
    subject=PlainScript("repro.py", "0" * 64),
)


def draft(dead: int = 5, processes: int = 5, **changes) -> DraftInputs:
    """An ending's draft: the stored bisect answer's step, ``dead`` of ``processes`` on 0.4.33."""
    where = {"case": "async_dispatch", "sizes": {"N": 1000}, "profile": "cpu"}
    answers = read_bisect_answers(FIXTURES / "crash", "async_dispatch")
    base = real_result("async_dispatch-0.12.0.1")
    ok = as_stored(derive(base, release="0.4.31", processes=processes))
    crashed = derive(base, release="0.4.33", processes=processes)
    died(crashed, {**SEGFAULT, "stack": STACK, "processes": dead})
    step = change_from(answers, [ok, as_stored(crashed)], **where, ending=True)
    assert step is not None and step.dead is not None
    fields = {
        "case": REPRO,
        "sizes": {},
        "platform": "cpu",
        "short_name": "repro.py",
        "short_script": SCRIPT,
        "short_runs": [],
        "full_name": "",
        "full_run": None,
        "environment_info": "jax:    0.4.33\njaxlib: 0.4.33",
        "results": [],
        "change": step,
        "script_words": "the script itself (plain JAX)",
        "newest": "still crashes on 0.5.0 (SIGSEGV (exit 139) in 5 of 5 processes)",
    }
    return dataclasses.replace(DraftInputs(**fields), **changes)


def with_dead(d: DraftInputs, **changes) -> DraftInputs:
    """The draft with its step's dead side changed."""
    assert d.change is not None and d.change.dead is not None
    dead = dataclasses.replace(d.change.dead, **changes)
    return dataclasses.replace(d, change=dataclasses.replace(d.change, dead=dead))


def dead_of(d: DraftInputs) -> Dead:
    assert d.change is not None and d.change.dead is not None
    return d.change.dead


def test_the_draft_has_the_bug_form_s_sections_with_the_crash_the_stack_and_the_workaround():
    d = draft()
    text = render(d)
    assert draft_title(d) == "repro.py crashes since jax 0.4.33 on CPU: SIGSEGV (exit 139)"
    order = ["### Description", "#### Reproducer", "#### What happened", "### System info"]
    assert [text.index(heading) for heading in order] == sorted(text.index(h) for h in order)
    assert "runs ok on jax 0.4.31 (ok in 5 of 5 processes)" in text
    assert "crashes on jax 0.4.33 (SIGSEGV (exit 139) in 5 of 5 processes)" in text
    assert (
        "Workaround: on jax 0.4.33 it runs with `XLA_FLAGS=--xla_cpu_use_thunk_runtime=false`"
        in text
    )
    assert "Newest release on the index: still crashes on 0.5.0" in text
    assert "```python\n" + SCRIPT in text and "pip install jax==0.4.33 jaxlib==0.4.33" in text
    assert "faulthandler" in text and "line 59 in <module>" in text
    assert "line 0 in <module>" not in text, f"the stack's end only, {SHOWN_LINES} lines"
    assert "Fatal Python error: Segmentation fault" in text, "the last lines it wrote"
    assert "print_environment_info()</code> (jax 0.4.33)" in text and "jaxlib: 0.4.33" in text
    assert f"CPU: {dead_of(d).cpu_model}" in text
    assert "#### Output" not in text and "Evidence" not in text, "a metric's sections"


def test_a_crash_in_some_processes_drafts_with_its_counts():
    """A step in how the processes end where only some died: its counts in the title and the
    description, the test that decided them, how each release's processes ended."""
    d = draft(dead=10, processes=20)
    text = render(d)
    title = (
        "repro.py crashes since jax 0.4.33 in 10 of 20 processes (0 of 20 on 0.4.31) on CPU: "
        "SIGSEGV (exit 139)"
    )
    assert draft_title(d) == title and f"**Title:** {title}" in text
    assert (
        "This script crashes in 10 of 20 processes on jax 0.4.33 (ok in 10, SIGSEGV (exit 139) in "
        "10 of 20 processes) and in 0 of 20 on jax 0.4.31 (ok in 20 of 20 processes)"
    ) in text
    assert "told apart by Fisher's exact test on the counts (p=" in text
    assert "every process" not in text
    assert (
        "On jax 0.4.33: ok in 10, SIGSEGV (exit 139) in 10 of 20 processes; on jax 0.4.31" in text
    )


def test_without_a_workaround_or_a_reproducer_the_draft_says_so_and_no_more():
    missing = (
        "The script imports optax besides jax; `nox -s bisect -- --script r.py --status` cuts one."
    )
    d = draft(short_script="", missing_script=missing)
    assert d.change is not None
    text = render(dataclasses.replace(d, change=dataclasses.replace(d.change, workaround="")))
    assert "Workaround" not in text and "```python" not in text
    assert missing in text


def test_a_script_too_long_to_paste_is_named_and_a_fix_is_titled_as_one():
    text = render(draft(short_script="x = 1\n" * (SCRIPT_LINES + 1)))
    assert "attach `repro.py`" in text and "```python" not in text
    assert draft_title(with_dead(draft(), runs="0.5.0")) == (
        "repro.py crashes on jax 0.4.33 on CPU, runs again since 0.5.0: SIGSEGV (exit 139)"
    )


def test_each_release_installs_as_the_plan_pins_it_quoted_for_a_shell():
    text = render(draft(installs={"0.4.31": ("jax==0.4.31", "jaxlib==0.4.30", "numpy<2")}))
    assert "pip install jax==0.4.31 jaxlib==0.4.30 'numpy<2'" in text
    assert "pip install jax==0.4.33 jaxlib==0.4.33" in text, "a release the plan does not pin"


def test_a_hang_is_titled_as_one_with_its_stack_at_the_time_out():
    d = draft()
    end = dead_of(d).end
    assert end is not None
    end = dataclasses.replace(end, how=EndKind.TIMEOUT, signal=None, timeout_s=60.0)
    text = render(with_dead(d, how="timed out at 60 s", verb="hangs", end=end))
    assert text.count("hangs since jax 0.4.33 on CPU: timed out at 60 s") == 1
    assert "stack at its time-out (faulthandler)" in text


def test_credentials_in_stored_results_are_redacted_again_but_the_script_is_pasted_as_it_is():
    d = draft(short_script=SCRIPT + "y = jax.random.normal(key=subkey_0123456789ab, shape=(3,))\n")
    assert d.change is not None and dead_of(d).end is not None
    token = "ghp_" + "0123456789abcdefghijklmn"
    end = dataclasses.replace(
        dead_of(d).end,  # type: ignore[arg-type]
        stack=f'  File "repro.py", line 3 in <module>  # {token}',
        last_lines="Authorization: Bearer abc.def0123456789.ghi\nAKIAIOSFODNN7EXAMPLE",
    )
    d = dataclasses.replace(with_dead(d, end=end), environment_info=f"HF={token}")
    assert d.change is not None
    workaround = f"on jax 0.4.33 it runs with `XLA_FLAGS=--x` (key sk-{token})"
    text = render(
        dataclasses.replace(d, change=dataclasses.replace(d.change, workaround=workaround))
    )
    for secret in ("ghp_", "abc.def", "AKIA"):
        assert secret not in text
    assert "Authorization: <redacted>" in text and "line 3 in <module>" in text
    assert "key=subkey_0123456789ab" in text, "the reproducer is the user's own, pasted whole"


def test_the_draft_renderer_is_one_function_for_every_shape():
    """One ``def render`` in the draft renderer: the step's shape chooses its sections."""
    source = Path(issue_draft.__file__).read_text()
    assert len(re.findall(r"^def render\w*\(", source, flags=re.MULTILINE)) == 1


def test_a_value_or_presence_that_did_not_change_is_never_described_as_a_step():
    """A metric asked about that neither release printed is no presence step: the description is
    the plain one, never "printed again (in 0 of 3 processes, was 0 of 3)"."""
    from harness.analysis.shapes import compare_counts
    from harness.analysis.significance import Shape, Thresholds
    from harness.render.issue_draft import description

    absent = compare_counts(Shape.PRESENCE, (0, 3), (0, 3), Thresholds(), WALL)
    asked = Change(WALL, "0.4.31", "0.4.33", comparisons={WALL: absent}, significant=False)
    said = description(draft_inputs(change=asked))
    assert "printed again" not in said and "The script below times it" in said


SOLVE = MetricKey("json", "solve_ms")


def script_results(tmp_path, compile_scale: float, spread: float = 0.0) -> list[StoredResult]:
    """A script's results on 0.9.0 and 0.9.1: compile time ×``compile_scale``, its solve with it;
    tracing the same. ``spread``: each process's figures apart by that share, so the releases'
    processes overlap."""
    found = []
    for release, scale in (("0.9.0", 1.0), ("0.9.1", compile_scale)):
        data = derive(
            real_result("async_dispatch-0.12.0.1"), release=release, case="script-m", sizes={}
        )
        for i, process in enumerate(data["processes"]):
            wobble = 1 + spread * (i - 2)
            process["figures"] = {
                "process.trace_ns": 5e8 * wobble,
                "process.lower_ns": 2e8 * wobble,
                "process.compile_ns": 1e9 * scale * wobble,
                "json.solve_ms": 40 * scale * wobble,
            }
        found.append(StoredResult.from_document(tmp_path / f"{release}.json", data))
    return found


def judged_change(results: list[StoredResult], good: str = "0.9.0") -> Change:
    """The change ``issue`` reads from the stored results: every metric compared by its rule."""
    where = {"case": "script-m", "sizes": {}, "profile": "cpu", "metric": SOLVE}
    change = change_from([], results, good=good, bad="0.9.1", **where)
    assert change is not None
    return change


def test_a_change_every_process_agrees_on_is_said_so_with_the_phase_that_moved(tmp_path):
    results = script_results(tmp_path, 16.6)
    change = judged_change(results)
    processes = len(results[0].result.processes)
    assert how_sure(change) == (
        f"Measured in {processes} separate Python processes per release: every one on 0.9.1 slower "
        "than every one on 0.9.0."
    )
    assert phase_reading(change) == (
        "Compile time (×16.6 changed from 1 s to 16.6 s in every process) moved; tracing and "
        "lowering did not."
    )


def test_overlapping_processes_are_said_with_the_test_and_no_phase_reading_without_a_move(tmp_path):
    results = script_results(tmp_path, 1.1, spread=0.2)
    said = how_sure(judged_change(results))
    assert (
        said.startswith("Measured in")
        and "whose figures overlap: the medians differ ×1.1 at p=" in said
    )
    assert phase_reading(judged_change(script_results(tmp_path, 1.0))) == ""
    assert how_sure(judged_change(results, good="0.8.0")) == "", "no result of 0.8.0"
    assert phase_reading(Change(SOLVE, "0.9.0", "0.9.1")) == "", "not compared"


def provenance(case: CaseInfo) -> str:
    """Where the draft's description says the report comes from."""
    return case.subject.provenance(case.claim, case.source)


def test_a_script_is_the_user_s_and_a_case_cites_its_discussion():
    script = CaseInfo("script-m", Path("m.py"), "", "", None, subject=PlainScript("m.py", "0" * 64))  # type: ignore[arg-type]
    assert provenance(script).startswith(
        "Found with a user's script, `m.py`, run unmodified on each release"
    )
    case = discovery.discover()["scan_sync"]
    assert provenance(case).startswith("Found while checking a claim from a user discussion")
    assert case.claim in provenance(case)


# A secret hard-coded in the script's own source: each by its shape, as every other text is.
HARD_CODED = (
    'TOKEN = "ghp_0123456789abcdefghijklmnopqrstuvwxyz"\n'
    'session = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"\n'
    'password = "correct horse battery"\n'
    'KEY = """-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0123456789abcdefABCDEF\n'
    '-----END RSA PRIVATE KEY-----"""\n'
)


def test_a_secret_hard_coded_in_the_script_is_redacted_in_the_draft_s_quote_its_code_kept():
    script = draft_inputs().short_script + HARD_CODED
    script += "def f(key: jax.Array, tokenizer='bert-base-uncased'):\n    return g(key=key)\n"
    crash = draft(short_script=SCRIPT + HARD_CODED)
    for text in (render(draft_inputs(short_script=script)), render(crash)):
        for secret in ("ghp_0123", "eyJhbGci", "MIIEowIBAAKCAQEA", "correct horse"):
            assert secret not in text, secret
        assert "-----<redacted> PRIVATE KEY-----" in text and 'password = "<redacted>"' in text
    kept = render(draft_inputs(short_script=script))
    assert "def f(key: jax.Array, tokenizer='bert-base-uncased'):" in kept
    assert "return g(key=key)" in kept, "code that only names a key is kept"
