"""Stored strings as literal text in markdown, in code that they cannot close, and on a terminal."""

import pytest

from harness.render.text import Markdown, code_span, fenced, inline, listed, one_line, terminal


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("scan_sync", "scan_sync"),  # a name looks as it did
        ("0.12.0.1", "0.12.0.1"),
        ("M=500 N=100", "M=500 N=100"),
        ("x\n# heading", "x # heading"),
        ("# heading", "\\# heading"),
        ("- item", "\\- item"),
        ("12. item", "12\\. item"),
        ("---", "--\\-"),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("![i](http://evil/x.png)", "!\\[i\\](http://evil/x.png)"),
        ("[link](http://evil)", "\\[link\\](http://evil)"),
        ("a `code` b", "a \\`code\\` b"),
        ("**bold** and _it_ and ~~gone~~", "\\*\\*bold\\*\\* and \\_it\\_ and \\~\\~gone\\~\\~"),
        ("$x^2$", "\\$x^2\\$"),
        ("a\\b", "a\\\\b"),
        ("&amp;", "&amp;amp;"),
        ("a\r\nb\u2028c", "a b c"),
        ("bell\x07 esc\x1b[31m", "bell\ufffd esc\ufffd\\[31m"),
    ],
)
def test_inline_text_has_no_markup(value, shown):
    assert inline(value) == shown


def test_a_code_span_cannot_be_closed_by_what_it_holds():
    assert code_span("plain") == "`plain`"
    assert code_span("a`b") == "``a`b``"
    assert code_span("`x`") == "`` `x` ``"
    assert code_span("a ``` b\n# c") == "````a ``` b # c````"


def test_a_fence_is_longer_than_any_backtick_run_inside():
    assert fenced("x") == "```\nx\n```"
    assert fenced("```\n# broken out\n```") == "````\n```\n# broken out\n```\n````"
    assert fenced("a ````` b", "text") == "``````text\na ````` b\n``````"


def test_composed_markdown_is_marked_and_terminal_text_loses_escape_sequences():
    assert isinstance(Markdown("**x**"), str)
    assert one_line("a\nb\x00") == "a b\ufffd"
    assert terminal("cpu\x1b[2J\x1b]0;title\x07") == "cpu\ufffd[2J\ufffd]0;title\ufffd"
    assert terminal("tab\tnew\nline") == "tab\tnew\nline"


def test_a_fenced_block_keeps_its_lines_but_no_escape_or_reordering_mark():
    block = fenced("a\x1b]0;title\x07\r\nb\u202ec\tTAB", "text")
    assert block == "```text\na\ufffd]0;title\ufffd\nb\ufffdc\tTAB\n```"
    assert inline("x\u2066y") == "x\ufffdy" and terminal("\u200fz") == "\ufffdz"


def test_parts_of_a_sentence_are_listed_with_and_before_the_last():
    assert listed(["tracing"]) == "tracing"
    assert listed(["tracing", "compiling"]) == "tracing and compiling"
    assert listed(["a", "b", "c"]) == "a, b and c"
