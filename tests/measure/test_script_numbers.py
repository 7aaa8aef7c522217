from harness.measure.script_numbers import script_numbers


def test_numbers_are_figures_strings_values_and_nested_objects_facts():
    out = script_numbers(
        'warming up\n{"reg_ms": 12.5, "jax": "0.5.1", "n": 3, "cfg": {"k": 1}}\n'
        '{"reg_ms": 13.5}\n{"reg_ms": 20}\n'
    )
    assert out.values == {"reg_ms": 13.5, "n": 3}  # several lines: their median
    # several values in one process, and a string, are kept as written; one number needs not be
    assert out.printed == {"reg_ms": ("12.5", "13.5", "20"), "jax": ('"0.5.1"',)}
    assert out.facts == {"cfg": '{"k": 1}'}


def test_an_integer_is_kept_exactly_and_what_no_figure_holds_as_written():
    out = script_numbers(
        '{"sum": 12345678901234567, "big": 1180591620717411303425, "over": 1e400, "ok": true,'
        ' "nan": NaN, "inf": -Infinity, "none": null, "half": 0.5, "neg0": -0.0}'
    )
    assert out.values == {"sum": 12345678901234567, "half": 0.5, "neg0": -0.0}
    assert type(out.values["sum"]) is int  # never a float: …567 and …568 differ
    assert out.printed == {
        "big": ("1180591620717411303425",),
        "over": ("1e400",),
        "ok": ("true",),
        "nan": ("NaN",),
        "inf": ("-Infinity",),
        "none": ("null",),
    }
    assert out.skipped == []


def test_two_values_in_one_process_are_both_kept_never_only_their_median():
    out = script_numbers('{"x": 1}\n{"x": 3}\n' + "".join(f'{{"t": {i}}}\n' for i in range(20)))
    assert out.printed["x"] == ("1", "3") and out.values["x"] == 2.0
    assert out.printed["t"][:8] == tuple(map(str, range(8)))  # at most 8 kept, then the rest's
    assert out.printed["t"][8].startswith("… 20 values, sha256 ")  # count and digest
    other = script_numbers("".join(f'{{"t": {i}}}\n' for i in [*range(19), 99])).printed["t"]
    assert other[:8] == out.printed["t"][:8] and other != out.printed["t"]


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
    assert out.values == {"fine": 1}
    assert out.printed["ok"] == ("true",) and out.printed["nan"] == ("NaN",)
    assert out.facts["nested"] == '{"k": [1, 2]}'
    assert out.printed["long"][0].startswith('"' + "x" * 200 + "… (1,000 characters, sha256 ")
    assert any("huge: a number of 400 characters" in s for s in out.skipped)
    assert any("../x" in s for s in out.skipped)


def test_a_line_nested_past_the_recursion_limit_is_left_out_with_a_note():
    out = script_numbers('{"a": ' + "[" * 20_000 + "]" * 20_000 + '}\n{"fine": 1}')
    assert out.values == {"fine": 1.0}
    assert out.skipped == ["line 1: nested deeper than a JSON line may be read"]


def test_a_credential_nested_in_a_printed_object_is_redacted_in_its_fact():
    out = script_numbers('{"cfg": {"api_token": "abcd1234efgh5678", "size": 3, "key_bits": 128}}')
    assert out.facts["cfg"] == '{"api_token": "<redacted>", "size": 3, "key_bits": 128}'


def test_two_long_strings_that_differ_past_the_cut_still_differ():
    a, b = (script_numbers(f'{{"s": "{"x" * 300}{end}"}}').printed["s"] for end in "ab")
    assert a != b and len(a[0]) < 300


def test_a_field_named_like_a_credential_is_no_metric():
    token = "ghp_" + "A1b2C3d4E5f6" * 3
    out = script_numbers(f'{{"{token}": 1, "fine": 2}}')
    assert out.values == {"fine": 2} and token not in repr(out)


def test_a_number_below_a_float_s_range_is_kept_as_written_never_zero():
    out = script_numbers('{"tiny": 1e-400, "TINY": 1E-400, "zero": 0e5}')
    assert out.printed == {"tiny": ("1e-400",), "TINY": ("1E-400",)}
    assert out.values == {"zero": 0.0}
