"""Metric names as typed on the command line: PROGRAM.KIND_ns."""

import re

import pytest

from harness.errors import UsageError
from harness.metric_names import ENDING, Criterion, Judged, MetricKey, parse_metric_name
from harness.units import format_ns


def test_names_round_trip_with_or_without_the_ns_suffix():
    assert parse_metric_name("two_scans.dispatch_ns") == MetricKey("two_scans", "dispatch")
    assert parse_metric_name("scan.compile") == MetricKey("scan", "compile")
    assert MetricKey("two_scans", "wall").metric_name == "two_scans.wall_ns"
    assert parse_metric_name("a.b.lower_ns") == MetricKey("a.b", "lower"), (
        "the kind is after the last dot"
    )


@pytest.mark.parametrize(
    "text", ["two_scans", "two_scans.", ".wall_ns", "two_scans.speed_ns", "two_scans.mark:scan 1"]
)
def test_malformed_names_are_refused_with_the_kinds(text):
    with pytest.raises(
        UsageError, match=r"malformed metric .* wall_ns, dispatch_ns, lower_ns, compile_ns"
    ):
        parse_metric_name(text)


def test_a_plain_scripts_phases_and_own_numbers_have_names_of_their_own():
    trace = parse_metric_name("process.trace_ns")
    assert trace == MetricKey("process", "trace") and trace.in_ns and not trace.is_jax_import
    assert parse_metric_name("process.import_ns").is_jax_import
    own = parse_metric_name("json.reg_ms")
    assert own == MetricKey("json", "reg_ms") and own.metric_name == "json.reg_ms" and not own.in_ns
    assert "printed by the script" in own.label()


@pytest.mark.parametrize(
    "text", ["process.dispatch_ns", "json.a-b", "json.", "scan.import_x", "json." + "a" * 80]
)
def test_names_outside_every_family_are_refused(text):
    with pytest.raises(UsageError, match="malformed metric"):
        parse_metric_name(text)


def test_a_script_s_number_named_for_a_unit_of_time_is_a_duration_and_a_rate_is_not():
    assert parse_metric_name("json.solve_ms").format(1.988) == format_ns(1.988e6)
    assert (
        parse_metric_name("json.compile_s").is_duration
        and parse_metric_name("json.step_us").is_duration
    )
    for name in ("json.items_per_s", "json.loss", "json.ms", "json.value_per_ms"):
        key = parse_metric_name(name)
        assert not key.is_duration and key.format(12.5) == "12.5", name


def test_the_phase_table_is_the_one_list_of_a_script_s_phases():
    """The hook (which runs without the harness on its path) names JAX's events; the table says
    which phases come from them, and what each phase is everywhere else: its label, unit, rank and
    words."""
    from harness.measure.script_hook import EVENTS
    from harness.metric_names import EVENT_PHASES, PHASES, PROCESS, reading_rank

    assert tuple(EVENTS) == EVENT_PHASES
    assert MetricKey(PROCESS, "peak_rss").metric_name == "process.peak_rss_bytes"
    assert [
        reading_rank(MetricKey(PROCESS, p)) for p in ("trace", "wall", "peak_rss", "import")
    ] == [
        1,
        2,
        3,
        4,
    ]
    assert not MetricKey(PROCESS, "compile").about_run_time
    assert MetricKey(PROCESS, "run").about_run_time and MetricKey("json", "solve_ms").about_run_time
    assert {p for p, m in PHASES.items() if not m.compiled} == {"trace", "lower", "import"}


def test_a_criterion_says_itself_again_as_a_file_name_a_command_line_and_a_page_do():
    metric = Criterion.of(parse_metric_name("eager.dispatch_ns"), Judged.CLAIM)
    assert (metric.name, metric.words()) == ("eager.dispatch_ns", ["--metric", "eager.dispatch_ns"])
    claim, status, every = Criterion(Judged.CLAIM), Criterion.of(ENDING), Criterion.of(None)
    assert (claim.name, claim.words(), claim.is_claim) == ("claim", ["--claim"], True)
    assert (status.name, status.words(), status.ending) == ("process.end", ["--status"], True)
    assert (status.metric, status.figures, metric.figures) == (ENDING, None, metric.metric)
    assert (every.name, every.words(), every.said()) == ("all", [], "every metric and the claim")
    assert [c.rank() for c in (status, claim, metric)] == [-2, -1, 0]


def test_a_record_names_the_claim_by_its_stem_and_the_processes_ends_as_a_metric():
    assert [Judged.named(name) for name in ("claim", "status", "all", "scan.wall_ns", "")] == [
        Judged.CLAIM,
        None,
        Judged.EVERY,
        None,
        None,
    ]
    # ``status``: how a record written before the ending was a metric names it
    assert Criterion.named("status") == Criterion.named("process.end") == Criterion.of(ENDING)
    assert parse_metric_name("process.end") == ENDING and ENDING.metric_name == "process.end"
    with pytest.raises(UsageError):
        parse_metric_name("process.end_ns")


def test_docs_scripts_metric_table_lists_every_phase_and_no_other():
    """docs/scripts.md's table of what a script is judged on says the phases ``PHASES`` holds: a new
    measured phase is a row there too."""
    from harness.metric_names import PHASES, PROCESS, MetricKey
    from tests.conftest import REPO

    text = (REPO / "docs" / "scripts.md").read_text()
    table = text[text.index("## What it is judged on") : text.index("## Shapes")]
    first_cells = [line.split(" | ")[0] for line in table.splitlines() if line.startswith("| `")]
    named = set(re.findall(r"`(process\.\w+)`", " ".join(first_cells)))
    assert named == {MetricKey(PROCESS, phase).metric_name for phase in PHASES}


def test_docs_scripts_list_the_units_that_make_a_cost():
    """docs/scripts.md's list of the words that name a number for a unit of what it costs is
    ``COST_UNITS``, in its order."""
    from harness.metric_names import COST_UNITS
    from tests.conftest import REPO

    text = " ".join((REPO / "docs" / "scripts.md").read_text().split())
    listed = re.search(r"named for a unit of what it costs \(its last word[^)]*\): ([^.]+)\.", text)
    assert listed is not None
    assert re.findall(r"`(\w+)`", listed.group(1)) == list(COST_UNITS)


@pytest.mark.parametrize(
    ("name", "unit"),
    [
        ("json.temp_mb", True),
        ("json.temp_bytes", True),
        ("json.compile_ms", True),
        ("json.flops", True),
        ("json.bytes_per_step", True),
        ("json.n_ops", True),
        ("json.items_per_s", False),  # a rate: higher is better, given so
        ("json.loss", False),
        ("json.bytesize", False),
    ],
)
def test_a_number_is_named_for_a_unit_by_its_last_word(name, unit):
    assert parse_metric_name(name).named_for_unit is unit
