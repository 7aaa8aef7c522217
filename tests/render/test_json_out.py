"""Machine-readable output: the same models the pages show, as JSON any reader takes."""

import json
import math

from harness.analysis.set_comparison import ResultSet, compare_sets
from harness.analysis.significance import Thresholds
from harness.main import main
from harness.render.json_out import comparison_json, dumps, set_comparison_json
from harness.stats import summarize
from tests.conftest import derive, real_result, write_results

BASE = real_result("scan_sync-0.12.0.1")


def test_a_number_that_is_not_one_is_null_and_every_document_names_itself(tmp_path):
    from harness.analysis.significance import Comparison, CostDetail, Verdict

    summary = summarize([1.0, 2.0])
    empty = Comparison(
        summary,
        summary,
        math.nan,
        Verdict.UNDECIDED,
        ("A: zero median",),
        cost=CostDetail(math.nan),
    )
    data = comparison_json(empty)
    assert data["ratio"] is None and data["p_value"] is None and data["verdict"] == "undecided"
    json.loads(dumps({"x": data}))  # allow_nan=False: it would raise on a NaN left in


def test_compare_writes_every_metric_of_every_pair_with_its_interval_and_verdict(tmp_path):
    results = write_results(
        tmp_path / "r", [derive(BASE, release="0.4.26", id="old"), derive(BASE, scale=3)]
    )
    out = tmp_path / "comparison.json"
    code = main(
        [
            "compare",
            str(results),
            "--a-release",
            "0.4.26",
            "--b-release",
            "0.12.0.1",
            "--json",
            str(out),
        ]
    )
    data = json.loads(out.read_text())
    assert code == 1 and data["schema"] == "jax-repro-harness/comparison" and data["worse"]
    [pair] = data["pairs"]
    assert (
        pair["case"] == "scan_sync"
        and pair["a"]["release"] == "0.4.26"
        and pair["b"]["release"] == "0.12.0.1"
    )
    walls = [m for m in pair["metrics"] if m["metric"].endswith("wall_ns")]
    assert walls and all(
        m["verdict"] == "slower" and m["ci_low"] <= m["ratio"] <= m["ci_high"] for m in walls
    )
    model = compare_sets(
        ResultSet("A", results, "0.4.26"), ResultSet("B", results, "0.12.0.1"), [], Thresholds()
    )
    assert set_comparison_json(model)["verdicts"] == data["verdicts"]


def test_report_writes_its_claims_and_every_timing_comparison(tmp_path):
    quoted = "test2(100, 10_000) on the poster's GPU: t1 = 0.273s, t2 = 0.512s, t3 = 0.536s"
    newest = derive(BASE, scale=3, source_figure=quoted)
    results = write_results(tmp_path / "r", [derive(BASE, release="0.4.26", id="old"), newest])
    out = tmp_path / "report.json"
    assert (
        main(
            [
                "report",
                "--results",
                str(results),
                "--out",
                str(tmp_path / "pages"),
                "--json",
                str(out),
            ]
        )
        == 0
    )
    data = json.loads(out.read_text())
    assert data["schema"] == "jax-repro-harness/report" and data["releases"] == [
        "0.4.26",
        "0.12.0.1",
    ]
    [claims] = data["claims"]
    assert claims["case"] == "scan_sync" and set(claims["by_release"]) == {"0.4.26", "0.12.0.1"}
    [figure] = data["source_figures"]
    named = (figure["case"], figure["theirs"], figure["release"])
    assert named == ("scan_sync", quoted, "0.12.0.1")
    assert figure["ours"].startswith("scan 1 returned at ")
    [timing] = data["timings"]
    assert timing["baseline"] == "0.4.26" and timing["comparisons"]
    assert data["changes"] and all(c["verdict"] in ("slower", "faster") for c in data["changes"])


def test_a_value_s_sides_are_written_as_printed():
    from harness.analysis.metrics import ProcessSamples, compare_metric
    from harness.analysis.significance import Thresholds
    from harness.metric_names import parse_metric_name

    sums = [ProcessSamples([[0.0]] * 2, printed=[(text,)] * 2) for text in ("2", str(2**70))]
    data = comparison_json(compare_metric(*sums, Thresholds(), parse_metric_name("json.sum")))
    assert data is not None and data["sides"] == ["2", str(2**70)]
    json.loads(dumps({"x": data}))
