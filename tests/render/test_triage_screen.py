"""A triage's first screen, on stored results (a real run of a plain script, and the real
async_dispatch result, posing as each release): at most 40 lines of 100 columns whatever the number
of metrics and steps, one block per step with the script's own metrics first, each follow-up command
once, the report last."""

import dataclasses

from harness.analysis.processes import compare_processes
from harness.analysis.shapes import counted
from harness.analysis.significance import CostDetail, Shape, Thresholds, Verdict
from harness.explain.defaults import JAX, XLA, Change
from harness.explain.tried import DefaultsAnswer
from harness.metric_names import Criterion, Judged, parse_metric_name
from harness.render.screen import fits
from harness.render.triage_answer import follow_ups, triage_screen
from harness.steps.answers import RangeLibraries, Setting
from harness.steps.bisection import ReleaseStep
from harness.steps.probes import Probe
from harness.steps.triage import Confirmation, triage
from harness.units import format_ratio
from tests.conftest import FakeReleases, FakeScriptReleases
from tests.steps.test_triage import FakeConfirmer

RELEASES = ["0.4.30", "0.4.31", "0.4.33", "0.4.34"]
REPORT = "reports/triage-script-loop_json-0.4.30-0.4.34-all-cpu.md"
SETTING = Setting(
    "scan_sync",
    {"N": 600, "M": 2},
    "cpu",
    Criterion.of(parse_metric_name("two_scans.dispatch_ns")),
    {},
    Thresholds(),
    9.0,
)


def script_triage(scales, fake=FakeScriptReleases, **setting):
    found = triage(
        list(scales),
        fake(scales),
        FakeConfirmer(fake(scales)),
        metrics=None,
        with_claim=False,
        thresholds=Thresholds(),
    )
    return found, Setting(
        "script-loop_json",
        {},
        "cpu",
        Criterion(Judged.EVERY),
        {r: r for r in scales},
        Thresholds(),
        358.0,
        target=("--script", "loop_json.py"),
        **setting,
    )


def commands(text):
    """Each command the screen offers, its continued lines joined."""
    joined = text.replace(" \\\n", " ")
    return [
        " ".join(line.split()) for line in joined.splitlines() if line.strip().startswith("nox -s")
    ]


def test_a_step_of_a_script_is_one_block_its_own_numbers_first_each_command_once():
    libraries = RangeLibraries(
        {r: {"equinox": "0.11.4" if r < "0.4.33" else "0.12.0"} for r in RELEASES}
    )
    listed = [Change(f"jax_option_{i}", JAX, None, "False") for i in range(10)]
    listed.append(Change("xla_cpu_use_thunk_runtime", XLA, "false", "true"))
    found, setting = script_triage(
        # ×3: past what another run's first round lists nine times in ten, however the fixture's
        # phases scatter (×2 would leave its compile and run times small, named apart)
        dict(zip(RELEASES, [1, 1, 3, 3], strict=True)),
        libraries=libraries,
        evidence={("0.4.31", "0.4.33"): (DefaultsAnswer("0.4.31", "0.4.33", listed),)},
    )
    assert len(found.changes()) >= 6
    text = triage_screen(found, setting, 5, REPORT)
    assert fits(text), text
    lines = text.splitlines()
    assert lines[0] == "Triage: script-loop_json · profile cpu · jax 0.4.30 → 0.4.34"
    assert lines[-1] == f"Report: {REPORT}"
    heads = [line for line in lines if line.startswith("jax ")]
    assert heads == ["jax 0.4.31 → 0.4.33: 6 change(s)"], "one block for the step, not one a metric"
    metrics = [line.split()[0] for line in lines if line.startswith(("  json.", "  process."))]
    assert metrics[0] == "json.steps" and metrics[-1] == "process.import_ns", metrics
    assert "why: the script's libraries changed along with jax (equinox 0.11.4 → 0.12.0)" in text
    said = " ".join(text.split())
    assert "xla_cpu_use_thunk_runtime: false → true and 10 added option(s)" in said
    assert "jax_option_0" not in text, "options only added are counted, not listed"
    offered = commands(text)
    assert len(offered) == len(set(offered)) == 3, offered
    assert any("--hold equinox==0.11.4" in c for c in offered)
    assert any("--commits --good 0.4.31 --bad 0.4.33 --metric json.steps" in c for c in offered)
    assert "caveats: " in text and "10 processes a side" in text


def test_many_steps_fold_to_one_screen_and_say_how_many_are_left_out():
    releases = [f"0.4.{n}" for n in range(26, 64)]
    scales = {r: 1 + (i // 3) % 2 for i, r in enumerate(releases)}  # a step every third release
    found, setting = script_triage(scales)
    assert len({(c.step.before, c.step.after) for c in found.changes()}) > 8
    text = triage_screen(found, setting, 5, REPORT)
    assert fits(text), text
    assert text.splitlines()[-1] == f"Report: {REPORT}"
    assert "steps, each with its first metric:" in text, "one row a step"
    assert "Each step's metrics, why and commands to run next: the report." in text
    assert "caveats: l processes measured while other work loaded" in text
    assert "u the ratio is an upper estimate" not in text, "the legend says only the marks shown"
    offered = commands(text)
    assert len(offered) == len(set(offered))


def test_no_step_says_so_in_a_line_or_two():
    found, setting = script_triage(dict.fromkeys(RELEASES, 1), fake=FakeReleases)
    text = triage_screen(found, setting, 5, REPORT)
    assert fits(text) and "No change found: no step between consecutive releases" in text
    assert len(text.splitlines()) <= 8


def test_an_undecided_step_is_named_with_what_may_decide_it():
    scales, again = {"a": 1, "b": 3}, {"a": 1, "b": 1}
    found = triage(
        list(scales),
        FakeReleases(scales),
        FakeConfirmer(FakeReleases(again)),
        metrics=[parse_metric_name("eager.wall_ns")],
        with_claim=False,
        thresholds=Thresholds(),
    )
    setting = dataclasses.replace(SETTING, case="async_dispatch", sizes={"N": 1000})
    text = triage_screen(found, setting, 5, REPORT)
    assert fits(text)
    assert "Undecided, not unchanged: eager.wall_ns a → b (10 a side, within ±7.5%)" in text
    assert "larger --max-processes" in text and "No confirmed change" in text


def commits_hint(setting, change):
    """What a step without evidence offers next, as a page says it: the commit bisect alone."""
    [follow_up] = follow_ups(setting, change)
    return follow_up.markdown()


def confirmed(metric, change):
    """A step confirmed as ``change`` moved: a claim's flip (held in 5 of 5, then 0 of 5), else a
    cost ``change`` way."""
    claim = metric == "claim"
    criterion = Criterion(Judged.CLAIM) if claim else Criterion.of(parse_metric_name(metric))
    compared = dataclasses.replace(compare_processes([[1.0]] * 3, [[2.0]] * 3), verdict=change)
    if claim:
        flip = counted(Shape.CLAIM, change, ((5, 5), (0, 5)))
        compared = dataclasses.replace(flip, sides=("holds", "does not hold"))
    step = ReleaseStep(criterion, "0.4.31", "0.4.33", compared, change)
    return Confirmation(step, Probe("0.4.31", None, ""), Probe("0.4.33", None, ""), None, True, "")


def test_a_triage_step_offers_the_commit_bisect_of_its_two_releases():
    command = "nox -s bisect -- --case scan_sync --commits"
    sizes = "--size N=600 --size M=2 --profile cpu"
    assert commits_hint(SETTING, confirmed("scan.lower_ns", Verdict.SLOWER)) == (
        f"jax's Python or jaxlib, and which jax commit: `{command} --good 0.4.31 --bad 0.4.33 "
        f"--metric scan.lower_ns {sizes}`"
    )
    assert (
        f"--broken 0.4.31 --fixed 0.4.33 --metric two_scans.dispatch_ns {sizes}`"
        in commits_hint(SETTING, confirmed("two_scans.dispatch_ns", Verdict.FASTER))
    )
    assert "--good 0.4.31 --bad 0.4.33 --claim --size" in commits_hint(
        SETTING, confirmed("claim", Verdict.CHANGED)
    )


def test_a_claim_that_flips_is_a_row_of_its_own_first_in_its_step():
    scales = {"0.4.31": 1, "0.4.33": 3}
    holds = {"0.4.31": False, "0.4.33": True}
    found = triage(
        list(scales),
        FakeReleases(scales, holds=holds),
        FakeConfirmer(FakeReleases(scales, holds=holds)),
        metrics=None,
        with_claim=True,
        thresholds=Thresholds(),
    )
    setting = dataclasses.replace(
        SETTING, case="async_dispatch", sizes={"N": 1000}, criterion=Criterion(Judged.CLAIM)
    )
    text = triage_screen(found, setting, 5, REPORT)
    assert fits(text), text
    rows = [line.split() for line in text.splitlines() if line.startswith("  ") and "→" in line]
    assert rows[1][:6] == ["claim", "fails", "→", "holds", "now", "holds"], rows
    [command] = commands(text)
    assert "--commits --good 0.4.31 --bad 0.4.33 --metric eager.wall_ns" in command


def test_a_direct_run_s_follow_up_names_no_profile_nox_would_refuse():
    direct = dataclasses.replace(SETTING, profile="default")  # `jax-repro triage` without --profile
    hint = commits_hint(direct, confirmed("scan.lower_ns", Verdict.SLOWER))
    assert "--profile" not in hint and hint.endswith("--size N=600 --size M=2`")
    assert "--profile cpu8`" in commits_hint(
        dataclasses.replace(SETTING, profile="cpu8"), confirmed("scan.lower_ns", Verdict.SLOWER)
    )


class Part:
    """Stands in for one part's Comparison: its direction, ratio and word."""

    def __init__(self, verdict, ratio):
        self.verdict, self.said = verdict, str(verdict)
        self.cost, self.ratio_cell = CostDetail(ratio), format_ratio(ratio)


def test_a_step_that_comes_with_a_library_says_so_whole_and_offers_the_library_s_releases():
    from harness.explain.held_library import HeldAnswer, Parts

    moved = {name: ("0.11.4", "0.12.0") for name in ("equinox", "optax", "diffrax", "lineax")}
    libraries = RangeLibraries(
        {r: {name: v[r >= "0.4.33"] for name, v in moved.items()} for r in RELEASES}
    )
    found, setting = script_triage(
        dict(zip(RELEASES, [1, 1, 2, 2], strict=True)), libraries=libraries
    )
    slower, same = Part(Verdict.SLOWER, 2.0), Part(Verdict.UNCHANGED, 1.0)
    metrics = {c.step.criterion.metric for c in found.changes()}
    parts = {metric: Parts(slower, same, slower) for metric in metrics}
    held = HeldAnswer("0.4.31", "0.4.33", moved, "0.4.33+held", "0.4.33", parts)
    setting = dataclasses.replace(setting, evidence={("0.4.31", "0.4.33"): (held,)})
    text = triage_screen(found, setting, 5, REPORT)
    assert fits(text), text
    shown = " ".join(text.split())
    assert "comes with the libraries: equinox 0.11.4 → 0.12.0, optax 0.11.4 → 0.12.0" in shown
    assert "(jax's part " in shown and "…" not in text, "the why line wraps, no sentence is cut"
    offered = commands(text)
    assert offered and all("--vary" in c and "--jax 0.4.33" in c for c in offered), offered
    assert not any("--commits" in c for c in offered), "no jax commit bisect for a library's change"


def test_a_fix_and_a_claim_that_holds_again_are_said_so_in_their_rows():
    """The rows know a fix from ``TriageOutcome.ordered``, never from their answer's words."""
    from tests.render.test_triage_answer import outcome

    found, setting = outcome({"a": 1, "b": 3, "c": 1}, metric=parse_metric_name("eager.wall_ns"))
    rows = " ".join(triage_screen(found, setting, 5, "r.md").split())
    assert "eager.wall_ns" in rows and " fixed " in rows, rows
    found, setting = outcome(dict.fromkeys("abc", 1), claim=True, holds={"b": False})
    rows = " ".join(triage_screen(found, setting, 5, "r.md").split())
    assert "stops holding" in rows and "holds again" in rows, rows


def test_a_head_line_of_wide_characters_wraps_at_100_columns():
    """Issue 74: a head line reached 102 columns: wrapped by characters, where a wide one takes
    two columns."""
    found, setting = script_triage(dict.fromkeys(RELEASES, 1), fake=FakeReleases)
    long = dataclasses.replace(setting, case="script-" + "ベンチマーク" * 8, sizes={"N": 600})
    text = triage_screen(found, long, 5, REPORT)
    assert fits(text) and "ベンチマーク" in text


def test_dozens_of_small_steps_leave_the_screen_one_screen():
    """A plain script's phases and memory gave 27 to 38 small steps over the whole table: the screen
    names three and counts the rest; the report names each."""
    from harness.render.triage_answer import SMALL_ON_SCREEN, small_line

    found, _ = script_triage(dict(zip(RELEASES, [1, 1, 3, 3], strict=True)))
    small = [(change, "×1.1 (within ×1.5)") for change in found.changes()]
    line = small_line(small, most=SMALL_ON_SCREEN)
    assert f"; {len(small) - SMALL_ON_SCREEN} more in the report:" in line
    assert line.count("(within ×1.5)") == SMALL_ON_SCREEN
    assert small_line(small).count("(within ×1.5)") == len(small)
