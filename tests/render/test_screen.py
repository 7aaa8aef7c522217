"""One screen: tables shrunk to the width, text wrapped and shortened, lists cut to a budget."""

from harness.render.screen import WIDTH, budgeted, columns, fits, shorten, table, wrap


def test_a_table_too_wide_continues_a_row_on_its_next_lines_and_never_cuts_a_number():
    rows = [["the metric " * 12, "1.2345 ms → 2.3456 ms", "slower"], ["short", "2 ms", "faster"]]
    lines = table(rows, ["metric", "A → B", "verdict"], shrink=0)
    assert all(columns(line) <= WIDTH for line in lines)
    assert "…" not in "".join(lines)
    assert "1.2345 ms → 2.3456 ms" in lines[1] and lines[1].endswith("slower")
    assert lines[2].strip().startswith("the metric"), "the row continues on the next line"
    assert lines[-1].split() == ["short", "2", "ms", "faster"]


def test_a_table_no_narrowing_fits_is_turned_a_cell_a_line():
    rows = [["m", "1" * 60, "", "2" * 60]]
    lines = table(rows, ["metric", "A", "caveats", "B"], shrink=0)
    assert all(columns(line) <= WIDTH for line in lines) and "…" not in "".join(lines)
    assert lines == ["m", "  A: " + "1" * 60, "  B: " + "2" * 60], "an empty cell says nothing"


def test_wrap_shorten_and_budget_keep_to_the_screen():
    text = "word " * 100
    assert len(wrap(text, lines=2)) == 2 and all(columns(line) <= WIDTH for line in wrap(text))
    assert shorten(text).endswith("…") and columns(shorten(text)) <= WIDTH
    assert shorten("a\x1b[31m b") == "a\ufffd[31m b", "an escape sequence is shown, not obeyed"
    assert budgeted(list("abc"), 3, "{n} more") == list("abc")
    assert budgeted(list("abcde"), 3, "{n} more") == ["a", "b", "3 more"]
    assert fits("\n".join(["x" * WIDTH] * 40)) and not fits("\n".join(["x"] * 41))
    assert not fits("x" * (WIDTH + 1))


def test_a_head_line_of_wide_characters_wraps_at_100_columns_not_100_characters():
    """Issue 74: a header reached 102 columns: textwrap counts characters, and a metric or case
    named in CJK takes two columns a character."""
    head = "Triage: script-bench · profile cpu · jax 0.10.1 → 0.10.2 · by json." + "収束時間" * 12
    lines = wrap(head, indent="  ")
    assert all(columns(line) <= WIDTH for line in lines), [columns(line) for line in lines]
    assert "".join(lines).replace(" ", "") == head.replace(" ", ""), "nothing lost"
    assert wrap("word " * 30) == wrap("word " * 30, WIDTH), "plain text wraps as before"
    rows = [["json." + "収束" * 30, "1 → 2", "slower"]]
    assert all(columns(line) <= WIDTH for line in table(rows, ["metric", "A → B", "verdict"]))


def test_a_finding_is_said_whole_and_its_commands_on_lines_of_their_own():
    from harness.findings import Finding, FollowUp
    from harness.render.screen import finding_lines

    command = "nox -s triage -- --from a --to b --hold x==1"
    text = (
        "the script's libraries changed along with jax ("
        + "x 1 → 2; " * 20
        + "): the library or JAX?"
    )
    lines = finding_lines(Finding(text, (FollowUp("one side held", command),)))
    assert all(columns(line) <= WIDTH for line in lines) and "…" not in "".join(lines)
    assert " ".join(" ".join(lines).split()).startswith(" ".join(text.split())), "never cut"
    assert lines[-2:] == ["one side held:", f"  {command}"]
    [flag] = finding_lines(Finding("", (FollowUp("", "XLA_FLAGS=--x=false", shell=False),)))
    assert flag == "  XLA_FLAGS=--x=false"


def test_a_long_command_breaks_between_options_and_pastes_whole():
    from harness.render.screen import WIDTH, command_lines

    command = "nox -s bisect -- --script loop_json.py --commits " + " ".join(
        f"--size N{i}=100000" for i in range(20)
    )
    lines = command_lines(command, indent="    ")
    assert len(lines) > 3 and all(len(line) <= WIDTH for line in lines)
    assert all(line.endswith(" \\") for line in lines[:-1]) and not lines[-1].endswith("\\")
    assert all(not line.rstrip(" \\").endswith("--size") for line in lines), (
        "an option with its value"
    )
    assert " ".join(" ".join(lines).replace(" \\", " ").split()) == command
