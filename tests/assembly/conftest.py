"""Shared fixtures for assembly tests; ``--update-golden`` rewrites the golden files.

The option is registered here, so pass it with this folder as the target:
``pytest tests/assembly --update-golden``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).parent / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden", action="store_true", default=False,
        help="rewrite tests/assembly/golden/* from the current output instead of comparing",
    )


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, Any], None]:
    """Compare a JSON-able value with ``golden/<name>`` (or rewrite it with --update-golden)."""
    update = bool(request.config.getoption("--update-golden", default=False))

    def check(name: str, value: Any) -> None:
        path = GOLDEN / name
        text = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
        if update or not path.exists():
            if not update:
                pytest.fail(f"golden file {path} is missing; run with --update-golden to create it")
            path.write_text(text, encoding="utf-8")
            return
        assert json.loads(path.read_text(encoding="utf-8")) == value

    return check
