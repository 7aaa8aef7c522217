from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parent.parent


@pytest.fixture
def fixture_cases() -> Path:
    return FIXTURES / "cases"


@pytest.fixture
def fixture_result() -> dict:
    """A real stored result (async_dispatch on jax 0.12.0.1), as loaded JSON."""
    return json.loads((FIXTURES / "results" / "async_dispatch-0.12.0.1.json").read_text())
