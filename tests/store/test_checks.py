"""The checks records are parsed with: a wrong value is named by its field's path."""

import pytest

from harness.store.checks import (
    Fields,
    SchemaError,
    integer,
    list_of,
    map_of,
    size_map,
    window,
)


def test_a_wrong_value_is_named_by_its_path():
    with pytest.raises(SchemaError, match=r"^a\.b\[1\]: expected int, got str$"):
        map_of(list_of(integer))({"b": [1, "2"]}, "a")
    with pytest.raises(SchemaError, match="expected int, got bool"):
        integer(True, "flag")
    with pytest.raises(SchemaError, match=r"expected \[start, end\], got 3 values"):
        window([1, 2, 3], "window_unix_ns")
    with pytest.raises(SchemaError, match="size '1N' is not a name"):
        size_map({"1N": 3}, "sizes")


def test_an_absent_or_null_field_reads_as_its_default_and_a_required_one_as_missing():
    fields = Fields({"n": None, "m": 2}, "record")
    assert fields.optional("n", integer, 7) == 7 and fields.optional("absent", integer, 7) == 7
    assert fields.required("m", integer) == 2
    with pytest.raises(SchemaError, match=r"^record\.absent: missing$"):
        fields.required("absent", integer)
