"""The one bound of a stored document, shared by the writer and the reader: values generated just
below, at and just above every bound are either written and read back, or refused (or left out with
a note) by the writer."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.measure import figures
from harness.store import bounds
from harness.store.files import DocumentProblem, parse_document
from harness.store.results import UnreadableResult, read_result, readable, write_result
from harness.store.schema import parse
from tests.conftest import FIXTURES, REPO, real_result

BASE = real_result("async_dispatch-0.12.0.1")
LIMIT = 10**bounds.MAX_INTEGER_DIGITS
NUMBERS = st.one_of(
    st.sampled_from([LIMIT - 1, LIMIT, LIMIT + 1, -(LIMIT - 1), -LIMIT, 10**4500, 0]),
    st.integers(min_value=LIMIT - 1000, max_value=LIMIT + 1000),
    st.sampled_from(
        [bounds.MAX_MAGNITUDE, math.nextafter(bounds.MAX_MAGNITUDE, math.inf), 1e25, -1e19, 1e308]
    ),
    st.floats(min_value=9.99e18, max_value=1.001e19),
    st.sampled_from([math.nan, math.inf, -math.inf]),
)
STRINGS = st.text(alphabet=st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010), max_size=4)
DEPTHS = st.integers(min_value=bounds.MAX_DEPTH - 8, max_value=bounds.MAX_DEPTH + 2)


def nested(depth: int) -> object:
    value: object = []
    for _ in range(depth - 1):
        value = [value]
    return value


def document_with(fact: object) -> dict:
    document = json.loads(json.dumps(BASE))
    document["processes"][0]["facts"] = {"x": fact}
    document["processes"][0]["figures"] = {"json.x": 1.0}
    return document


def written_and_read(tmp_path, document: dict) -> None:
    """Written as a run stores it (what no reader reads left out) and read back as every reader
    reads it."""
    try:
        path = write_result(tmp_path, readable(parse(document)))
    except UnreadableResult:
        return  # refused, never written
    read_result(path)


@settings(max_examples=150, deadline=None)
@given(NUMBERS)
def test_every_number_written_is_read_back(tmp_path_factory, value):
    tmp = tmp_path_factory.mktemp("n")
    written_and_read(tmp, document_with(value))
    figured = document_with(1)
    figured["processes"][0]["figures"] = {"json.x": value}
    written_and_read(tmp / "figures", figured)
    assert (bounds.number_problem(value) is None) == _reader_takes(value)


def _reader_takes(value: float) -> bool:
    try:
        parse_document(json.dumps({"x": value}).encode())
    except (DocumentProblem, ValueError):  # ValueError: more digits than Python turns into text
        return False
    return True


@settings(max_examples=80, deadline=None)
@given(STRINGS)
def test_every_string_written_is_read_back(tmp_path_factory, text):
    written_and_read(tmp_path_factory.mktemp("s"), document_with(text))


@settings(max_examples=30, deadline=None)
@given(DEPTHS)
def test_every_depth_written_is_read_back(tmp_path_factory, depth):
    written_and_read(tmp_path_factory.mktemp("d"), document_with(nested(depth)))


def test_the_writer_refuses_what_the_reader_refuses(tmp_path):
    for bad in (1e25, 10**20, math.nan, "\ud800", nested(100)):
        with pytest.raises(UnreadableResult, match="no reader would read"):
            write_result(tmp_path, document_with(bad))


def test_a_result_over_the_readers_size_is_refused_not_written(tmp_path, monkeypatch):
    monkeypatch.setattr("harness.store.results.MAX_DOCUMENT_BYTES", 1000)
    with pytest.raises(UnreadableResult, match="readers read at most"):
        write_result(tmp_path, document_with(1))
    assert not list(tmp_path.rglob("*.json"))


def test_the_figure_lines_bound_is_the_stores():
    assert figures.FIGURE_DIGITS == bounds.MAX_INTEGER_DIGITS


def test_the_published_schema_states_the_bounds():
    said = json.loads((REPO / "docs" / "result.schema.json").read_text())["description"]
    assert (
        f"{bounds.MAX_DOCUMENT_BYTES // 2**20} MiB" in said and f"{bounds.MAX_DEPTH} levels" in said
    )
    assert (
        f"{bounds.MAX_MAGNITUDE:g}".replace("+", "") in said
        and f"{bounds.MAX_INTEGER_DIGITS} digits" in said
    )
    assert "surrogate" in said and FIXTURES.is_dir()
