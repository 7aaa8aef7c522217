"""A command's terminal answer fits one screen: at most ``LINES`` lines of ``WIDTH`` columns, then
the full report's path.  The helpers the renderers share: tables shrunk to the width, text wrapped
or shortened to it, a list cut to a budget with a line counting what was left out."""

from __future__ import annotations

import itertools
import textwrap
import unicodedata
from collections.abc import Sequence

from harness.findings import Finding, FollowUp
from harness.render.text import one_line, terminal

LINES = 40
WIDTH = 100
ELLIPSIS = "…"
CONTINUED = " \\"


def columns(text: str) -> int:
    """Columns ``text`` takes on a terminal: wide (East Asian) characters two, combining none."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def shorten(text: str, width: int = WIDTH) -> str:
    text = one_line(text).rstrip()
    if columns(text) <= width:
        return text
    while text and columns(text) > width - 1:
        text = text[:-1]
    return text.rstrip() + ELLIPSIS


def wrap(text: str, width: int = WIDTH, indent: str = "", lines: int | None = None) -> list[str]:
    flowed = " ".join(terminal(text).split())
    wrapped = textwrap.wrap(
        flowed, width, subsequent_indent=indent, break_long_words=True, break_on_hyphens=False
    ) or [""]
    wrapped = by_columns(wrapped, flowed, width, indent)
    if lines is not None and len(wrapped) > lines:
        wrapped = [*wrapped[: lines - 1], shorten(" ".join(wrapped[lines - 1 :]), width)]
    return wrapped


def by_columns(wrapped: list[str], text: str, width: int, indent: str = "") -> list[str]:
    """``wrapped`` (textwrap's, which counts characters) where each line fits ``width`` columns;
    else ``text`` wrapped again by columns: a wide character takes two (a head line naming a
    metric in CJK reached 102)."""
    if all(columns(line) <= width for line in wrapped):
        return wrapped
    out: list[str] = []
    line = ""
    for word in text.split():
        joined = f"{line} {word}" if line else (indent if out else "") + word
        if columns(joined) <= width:
            line = joined
            continue
        if line:
            out.append(line)
        line = indent if out else ""
        for char in word:  # a word wider than a line: cut, as textwrap cuts one
            if columns(line + char) > width and line.strip():
                out.append(line)
                line = indent
            line += char
    return [*out, line] if line else out or [""]


def table(
    rows: Sequence[Sequence[str]],
    headers: Sequence[str],
    *,
    width: int = WIDTH,
    shrink: int = 0,
    indent: str = "",
) -> list[str]:
    """A table that fits ``width``: the widest columns narrowed (``shrink`` first), cells continued
    on their row's next lines (a word, so a number, never cut); else turned, a row's cells one a
    line under its first."""
    cells = [[" ".join(terminal(c).split()) for c in row] for row in [headers, *rows]]
    widths = _fitted(cells, width - len(indent) - 2 * (len(headers) - 1), shrink)
    if widths is None:
        return _turned(cells, indent, width)
    lines = []
    for row in cells:
        parts = [
            by_columns(textwrap.wrap(c, widths[i]), c, widths[i]) or [""] for i, c in enumerate(row)
        ]
        for shown in itertools.zip_longest(*parts, fillvalue=""):
            padded = [p + " " * (widths[i] - columns(p)) for i, p in enumerate(shown)]
            lines.append((indent + "  ".join(padded)).rstrip())
    return lines


def _fitted(cells: Sequence[Sequence[str]], room: int, shrink: int) -> list[int] | None:
    """Widths within ``room`` columns, none narrower than its longest word; None where none fit."""
    count = len(cells[0])
    widths = [max(columns(row[i]) for row in cells) for i in range(count)]
    words = [
        max((columns(w) for row in cells for w in row[i].split()), default=1) for i in range(count)
    ]
    over = sum(widths) - room
    while over > 0:
        giving = [i for i in range(count) if widths[i] > words[i]]
        if not giving:
            return None
        top = max(widths[i] for i in giving)
        widest = [i for i in giving if widths[i] == top]
        widths[shrink if shrink in widest else widest[0]] -= 1
        over -= 1
    return widths


def _turned(cells: Sequence[Sequence[str]], indent: str, width: int) -> list[str]:
    headers, *rows = cells
    inner = indent + "  "
    lines = []
    for row in rows:
        lines += [indent + line for line in wrap(row[0], width - len(indent), indent="  ")]
        for header, cell in zip(headers[1:], row[1:], strict=True):
            if cell:
                said = wrap(f"{header}: {cell}", width - len(inner), indent="  ")
                lines += [inner + line for line in said]
    return lines


def budgeted(lines: Sequence[str], budget: int, more: str) -> list[str]:
    """``lines`` cut to ``budget``, the last line ``more`` with the count left out as ``{n}``."""
    if len(lines) <= budget:
        return list(lines)
    kept = max(0, budget - 1)
    return [*lines[:kept], more.format(n=len(lines) - kept)]


def fits(text: str) -> bool:
    """Whether ``text`` fits one screen: the checks the tests of every command's first screen do."""
    shown = text.splitlines()
    return len(shown) <= LINES and all(columns(line) <= WIDTH for line in shown)


def finding_lines(finding: Finding, width: int = WIDTH) -> list[str]:
    said = finding.text + (":" if finding.follow_ups and not finding.text.endswith("?") else "")
    lines = wrap(said, width, indent="  ") if finding.text else []
    return [*lines, *(line for each in finding.follow_ups for line in follow_up_lines(each, ""))]


def follow_up_lines(follow_up: FollowUp, lead: str, width: int = WIDTH) -> list[str]:
    """``lead`` and what it is for, then the command to paste whole two columns further in."""
    purpose = follow_up.purpose
    label = purpose + ("" if purpose.endswith("?") else ":") if purpose else ""
    inner = " " * (len(lead) - len(lead.lstrip()) + 2)
    lines = labelled(lead, label, width) if label else [lead.rstrip()] if lead.strip() else []
    if follow_up.shell:
        return [*lines, *command_lines(follow_up.command, indent=inner, width=width)]
    return [*lines, *(inner + line for line in wrap(follow_up.command, width - len(inner)))]


def labelled(lead: str, text: str, width: int = WIDTH) -> list[str]:
    pad = " " * len(lead)
    wrapped = wrap(text, width - len(lead))
    return [lead + wrapped[0], *(pad + line for line in wrapped[1:])]


def command_lines(command: str, indent: str = "  ", width: int = WIDTH) -> list[str]:
    """A command line broken between words with a shell's continuation, so that it pastes whole."""
    words = _units(terminal(command).split())
    lines: list[str] = []
    line = indent
    for word in words:
        joined = f"{line} {word}" if line.strip() else line + word
        if line.strip() and columns(joined) + len(CONTINUED) > width:
            lines.append(line + CONTINUED)
            line = indent + "  " + word
        else:
            line = joined
    lines.append(line)
    return [shorten(each, width) for each in lines]


def _units(words: list[str]) -> list[str]:
    """An option and its value kept together (``--profile cpu``): a break falls between options."""
    units: list[str] = []
    for word in words:
        option = units and units[-1].startswith("--") and " " not in units[-1]
        if option and not word.startswith("-"):
            units[-1] += f" {word}"
        else:
            units.append(word)
    return units
