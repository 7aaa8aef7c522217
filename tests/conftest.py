from __future__ import annotations

import re
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parent.parent


@pytest.fixture
def fixture_cases() -> Path:
    return FIXTURES / "cases"


def tables(markdown: str) -> list[list[str]]:
    """The markdown tables in a text, each as its lines."""
    found, current = [], []
    for line in markdown.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            found.append(current)
            current = []
    if current:
        found.append(current)
    return found


def assert_valid_tables(markdown: str) -> None:
    """Every table has a separator row and the same number of (unescaped) columns in each row."""
    found = tables(markdown)
    for table in found:
        header, separator, *rows = table
        columns = _columns(header)
        assert re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", separator.replace(" ", "")), separator
        assert _columns(separator) == columns
        assert all(_columns(row) == columns for row in rows), table


def _columns(row: str) -> int:
    return len(re.findall(r"(?<!\\)\|", row))
