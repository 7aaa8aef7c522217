"""A ``run``'s last words, on one screen: how many cells ran, each cell not ok with the first line
of why (the stored result keeps all of it), and how to make their report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.pins import session_words
from harness.render import screen

# Lines for the summary, the count of cells not ok and the report's command.
_FRAME_LINES = 6


@dataclass(frozen=True)
class NotOk:
    what: str
    status: str
    detail: str
    # where its first process that did not run ok died: how, its innermost frame, its error
    died: str = ""


def run_screen(summary: str, not_ok: Sequence[NotOk], results: str) -> list[str]:
    lines = screen.wrap(summary, lines=3)
    if not_ok:
        lines.append(f"{len(not_ok)} cell(s) did not run ok:")
        said = [f"  {c.what}: {c.status}: {(c.detail.splitlines() or [''])[0]}" for c in not_ok]
        each = [screen.shorten(line.rstrip(": ")) for line in said]
        if not_ok[0].died:  # the first one's death, in a line: the stored results keep every one
            each.insert(1, screen.shorten(f"    where it died: {not_ok[0].died}"))
        lines += screen.budgeted(
            each,
            screen.LINES - _FRAME_LINES,
            "  … and {n} more: each one's stored result keeps its status and why",
        )
    folder = [] if results == "results" else ["--results", str(results)]
    words = " ".join(session_words("report") + folder).removesuffix(" --")
    lines += screen.wrap(f"Their report: `{words}`", lines=2)
    return lines
