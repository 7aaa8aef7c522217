"""A script's own numbers keep the script's unit on every page: a unitless number gets no time unit,
a ``_ms`` number is shown as the duration it is (issue 37, item 2); a run without JAX says so rather
than "None"."""

from __future__ import annotations

import json
import re

from harness.analysis.set_comparison import devices_text
from harness.main import main
from harness.metric_names import parse_metric_name
from harness.render.release_answers import median_cell
from harness.store.results import load_results, write_result
from tests.conftest import derive, real_result

TIME_UNIT = re.compile(r"(?<![\d.])(7|1\.36e\+09|1\.36e\+18) (ns|µs|ms|s)\b")
FIGURES = {"json.const": 7.0, "json.big": 1.36e18, "json.loop_ms": 30.0}


def script_results(folder, release):
    document = derive(real_result("async_dispatch-0.12.0.1"), release=release, case="script-u")
    for process in document["processes"]:
        process["figures"] = dict(FIGURES)
    write_result(folder, document)
    return folder


def test_the_key_formats_a_script_number_in_its_own_unit():
    assert parse_metric_name("json.const").format(7) == "7"
    assert parse_metric_name("json.big").format(1.36e18) == "1.36e+18"
    assert parse_metric_name("json.loop_ms").format(30) == "30 ms"


def test_compare_and_the_report_give_no_time_unit_to_a_printed_number(tmp_path, capsys):
    a, b = script_results(tmp_path / "a", "0.4.26"), script_results(tmp_path / "b", "0.4.26")
    assert main(["compare", str(a), str(b), "--markdown", str(tmp_path / "c.md")]) in (0, 1)
    text = capsys.readouterr().out
    markdown = (tmp_path / "c.md").read_text()
    assert main(["report", "--results", str(a), "--out", str(tmp_path / "out")]) == 0
    page = (tmp_path / "out" / "script-u.md").read_text()
    for shown in (text, markdown, page):
        assert not TIME_UNIT.search(shown), TIME_UNIT.search(shown)
        assert "30 ms" in shown


def test_the_bisect_table_cell_formats_through_the_key(tmp_path):
    [stored], _ = load_results(script_results(tmp_path / "a", "0.4.26"))
    assert median_cell(stored, parse_metric_name("json.const")) == "7"
    assert median_cell(stored, parse_metric_name("json.loop_ms")) == "30 ms"


def test_a_run_without_jax_says_so():
    assert devices_text(None) == "no JAX devices" and devices_text(2) == "2"
    assert json.dumps(devices_text(None)) != "null"
