"""A case's programs, jitted functions and verdict form, read from its source without importing
it."""

import pytest

from harness.catalogue.discovery import outline
from harness.errors import UsageError

from ..conftest import FIXTURES

DICT_FILLED_IN_LOOPS = """
import jax

def programs(N):
    found = {"base": []}
    shardings = {"named": 1, "other": 2}  # a dict that is not returned
    for method in shardings:
        for n in (1, 2):
            found[f"{method}_d{n}"] = []
    found["last"] = []
    return found

def compiled(N):
    def nested():
        return {"not_this": 1}
    return {"jit": (jax.jit(nested), ()), **{}}

def verdict(m, **sizes):
    return True, ""
"""


def test_names_come_from_the_returned_dict_and_patterns_stand_for_computed_parts(tmp_path):
    path = tmp_path / "case.py"
    path.write_text(DICT_FILLED_IN_LOOPS)
    shape = outline(path)
    assert shape.programs == ["base", "<method>_d<n>", "last"]
    assert shape.compiled == ["jit", "<…>"], "a nested function's return is not the case's"
    assert shape.verdict_takes_sizes and not shape.has_facts and shape.patterned


def test_a_one_parameter_verdict_takes_no_sizes():
    shape = outline(FIXTURES / "cases" / "steady.py")
    assert not shape.verdict_takes_sizes and shape.programs and not shape.patterned


def test_a_file_that_does_not_parse_is_a_usage_error(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("def programs(:\n")
    with pytest.raises(UsageError, match=r"broken\.py does not parse"):
        outline(path)


def test_a_byte_order_mark_is_read_as_python_reads_it_and_a_too_deep_file_is_one_line(tmp_path):
    marked = tmp_path / "marked.py"
    marked.write_bytes(b"\xef\xbb\xbf" + (FIXTURES / "cases" / "steady.py").read_bytes())
    assert outline(marked).programs == ["sum"]
    deep = tmp_path / "deep.py"
    deep.write_text("X = " + "-" * 100_000 + "1\n")
    with pytest.raises(UsageError, match=r"deep\.py is too deeply nested to parse"):
        outline(deep)
