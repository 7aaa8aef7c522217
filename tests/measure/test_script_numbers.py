from harness.measure.script_numbers import script_numbers


def test_numeric_fields_become_figures_and_the_rest_facts():
    out = script_numbers(
        'warming up\n{"reg_ms": 12.5, "jax": "0.5.1", "n": 3}\n{"reg_ms": 13.5}\n{"reg_ms": 20}\n'
    )
    assert out.values == {"reg_ms": 13.5, "n": 3.0}  # several lines: their median
    assert out.facts == {"jax": "0.5.1"}


def test_hostile_lines_are_left_out_without_an_error():
    lines = [
        '{"ok": true, "nan": NaN, "inf": Infinity, "huge": ' + "9" * 400 + "}",
        '{"digits": ' + "1" * 5000 + "}",  # over Python's digit limit: the line is skipped
        "{" * 10000 + "}" * 10000,  # too deep
        '{"../x": 1, "a b": 2, "nested": {"k": [1, 2]}}',
        '{"long": "' + "x" * 1000 + '"}',
        "[1, 2, 3]",
        '{"fine": 1}',
    ]
    out = script_numbers("\n".join(lines))
    assert out.values == {"ok": 1.0, "fine": 1.0}, "a boolean is a number: 1 for true"
    assert out.facts["nested"] == '{"k": [1, 2]}'
    assert len(out.facts["long"]) == 201
    assert any("nan" in s for s in out.skipped) and any("../x" in s for s in out.skipped)


def test_a_line_nested_past_the_recursion_limit_is_left_out_with_a_note():
    out = script_numbers('{"a": ' + "[" * 20_000 + "]" * 20_000 + '}\n{"fine": 1}')
    assert out.values == {"fine": 1.0}
    assert out.skipped == ["line 1: nested deeper than a JSON line may be read"]


def test_a_credential_nested_in_a_printed_object_is_redacted_in_its_fact():
    out = script_numbers('{"cfg": {"api_token": "abcd1234efgh5678", "size": 3, "key_bits": 128}}')
    assert out.facts["cfg"] == '{"api_token": "<redacted>", "size": 3, "key_bits": 128}'
