"""One screen: tables shrunk to the width, text wrapped and shortened, lists cut to a budget."""

from harness.render.screen import WIDTH, budgeted, columns, fits, shorten, table, wrap


def test_a_table_too_wide_shrinks_the_column_it_may():
    rows = [["x" * 150, "1.5 ms", "slower"], ["short", "2 ms", "faster"]]
    lines = table(rows, ["metric", "A", "verdict"], shrink=0)
    assert all(columns(line) <= WIDTH for line in lines)
    assert lines[1].startswith("x" * 10) and "…" in lines[1] and lines[1].endswith("slower")
    assert lines[2].split() == ["short", "2", "ms", "faster"]


def test_wrap_shorten_and_budget_keep_to_the_screen():
    text = "word " * 100
    assert len(wrap(text, lines=2)) == 2 and all(columns(line) <= WIDTH for line in wrap(text))
    assert shorten(text).endswith("…") and columns(shorten(text)) <= WIDTH
    assert shorten("a\x1b[31m b") == "a\ufffd[31m b", "an escape sequence is shown, not obeyed"
    assert budgeted(list("abc"), 3, "{n} more") == list("abc")
    assert budgeted(list("abcde"), 3, "{n} more") == ["a", "b", "3 more"]
    assert fits("\n".join(["x" * WIDTH] * 40)) and not fits("\n".join(["x"] * 41))
    assert not fits("x" * (WIDTH + 1))
