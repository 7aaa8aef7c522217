import re

import pytest

from harness.analysis.groups import comparison_groups, latest_runs
from harness.analysis.report_model import case_claims, fact_rows
from harness.render.report import (
    claim_table,
    figures_table,
    format_fact,
    hlo_table,
    source_text,
)
from harness.store.results import load_results
from tests.conftest import (
    assert_valid_tables,
    derive,
    in_processes,
    real_result,
    set_claim,
    write_results,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "unknown"),
        ([None, 100], "unknown, 100"),
        ([], "none"),
        (2.0e6, "2,000,000"),
        (1234.5678, "1234.57"),
        (7, "7"),
        (True, "True"),
    ],
)
def test_exact_facts_are_shown_exactly(value, text):
    assert format_fact(value) == text


def runs_of(tmp_path, records):
    [group] = comparison_groups(
        latest_runs(load_results(write_results(tmp_path / "r", records))[0])
    )
    return group.runs


def with_hlo(release, **facts):
    """The real result posing as ``release``, every process's HLO facts replaced (none: not
    recorded)."""
    data = derive(real_result("async_dispatch-0.12.0.1"), release=release)
    for process in data["processes"]:
        if facts:
            process["compiled"]["jit"]["hlo"] = facts
        else:
            del process["compiled"]["jit"]["hlo"]
    return data


def test_bold_marks_a_change_from_the_previous_release_that_has_the_fact(tmp_path):
    records = [
        with_hlo("0.4.26", fusions=3, flops=None),
        with_hlo("0.4.30"),  # no HLO facts recorded: shown as –, and skipped when comparing
        with_hlo("0.4.31", fusions=3, flops=1.0),
        with_hlo("0.5.3", fusions=2, flops=1.0),
    ]
    runs = runs_of(tmp_path, records)
    table = re.sub(r" +", " ", hlo_table(fact_rows(runs), [run.result.release for run in runs]))
    assert "| jit · fusions | 3 | – | 3 | **2** |" in table
    assert "| jit · flops | unknown | – | **1** | 1 |" in table


def test_a_stored_cost_sentinel_is_shown_as_unknown_never_as_a_number(tmp_path):
    # Results stored before the harness knew XLA's sentinel hold it: -1 per custom call, added up.
    runs = runs_of(tmp_path, [with_hlo("0.4.26", flops=-4.0, bytes_accessed=-4.0, fusions=0)])
    table = re.sub(r" +", " ", hlo_table(fact_rows(runs), ["0.4.26"]))
    assert "| jit · flops | unknown |" in table and "| jit · bytes accessed | unknown |" in table
    assert "-4" not in table


def test_no_hlo_facts_no_table(tmp_path):
    runs = runs_of(tmp_path, [with_hlo("0.4.26"), with_hlo("0.5.3")])
    assert hlo_table(fact_rows(runs), [run.result.release for run in runs]) == ""


def on_backend(data, backend):
    """The result with every process reporting ``backend`` (a test-only change); returns it."""
    for process in data["processes"]:
        process["jax"]["backend"] = backend
    return data


def test_claim_table_rows_are_profile_backend_and_sizes(tmp_path):
    base = real_result("async_dispatch-0.12.0.1")  # the claim holds in 5 of 5 processes
    failing = set_claim(derive(base, release="0.4.26"), False)
    on_gpu = set_claim(on_backend(derive(base, profile="cuda12"), "gpu"), False)
    # 3 of 5 processes agreeing is under 80 %: unsettled, shown as ?, never ✓ or ✗
    split = in_processes(
        derive(base, profile="cpu2"), ["ok"] * 5, holds=[True, True, True, False, False]
    )
    records = [base, failing, derive(base, profile="cpu8"), on_gpu, split]
    runs = latest_runs(load_results(write_results(tmp_path / "r", records))[0])
    table = re.sub(
        r" +", " ", claim_table(case_claims([r for r, _ in runs], ["0.4.26", "0.12.0.1"]))
    )
    assert "| cpu | cpu | N=1000 | ✗ | ✓ | holds on 0.12.0.1; does not hold on 0.4.26 |" in table
    assert "| cpu8 | cpu | N=1000 | – | ✓ | holds on 0.12.0.1 |" in table
    assert "| cuda12 | gpu | N=1000 | – | ✗ | does not hold on 0.12.0.1 |" in table
    assert "| cpu2 | cpu | N=1000 | – | ? | unsettled on 0.12.0.1 |" in table


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        (
            "https://github.com/jax-ml/jax/discussions/21411",
            "<https://github.com/jax-ml/jax/discussions/21411>",
        ),
        (
            '"A title" (someone); its URL was not found',
            '`"A title" (someone); its URL was not found`',
        ),
        ("https://x.org/a b", "`https://x.org/a b`"),
        ("`code` <b>", "`` `code` <b> ``"),  # as stored, in a span its backticks cannot close
    ],
)
def test_a_source_is_a_link_only_when_it_is_a_plain_https_url(source, shown):
    """A result file may hold anything: only a plain URL becomes a link, the rest is a code span."""
    assert source_text(source) == shown


def test_the_discussions_figure_is_quoted_beside_ours_at_its_sizes_only(tmp_path):
    base = real_result("async_dispatch-0.12.0.1")
    quoted = "test1(10_000) on the poster's GPU: t1 = 0.001s, t2 = 0.137s"
    records = [
        derive(base, release="0.4.26", source_figure=quoted),
        derive(base, source_figure=quoted),  # the newest release that ran there speaks
        derive(base, sizes={"N": 16}, scale=2),  # sizes the discussion did not run: no figure
    ]
    results = load_results(write_results(tmp_path / "r", records))[0]
    claims = case_claims(results, ["0.4.26", "0.12.0.1"])
    [figure] = claims.figures
    assert (figure.theirs, figure.release, figure.sizes) == (quoted, "0.12.0.1", "N=1000")
    assert figure.ours.startswith("eager: dispatch"), "ours is the case's own evidence, measured"
    table = figures_table(claims)
    assert quoted in table and "jax 0.12.0.1 on cpu: eager: dispatch" in table
    assert_valid_tables(table)
    assert figures_table(case_claims([], [])) == ""
