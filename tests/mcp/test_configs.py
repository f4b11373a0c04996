"""The agents guide's MCP configuration snippets are the files under examples/mcp/ that the tests start
``acms mcp`` from (tests/mcp/test_mcp_server.py), character for character."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_guide_snippets_are_the_tested_example_files() -> None:
    guide = (ROOT / "docs" / "AGENTS.md").read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- example: (examples/mcp/\S+) -->\n```\w+\n(.*?)```", guide, re.S)
    files = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "examples" / "mcp").iterdir())
    assert sorted(path for path, _ in blocks) == files
    for path, body in blocks:
        assert body == (ROOT / path).read_text(encoding="utf-8"), path


def test_agents_guide_is_linked_and_names_every_tool() -> None:
    guide = (ROOT / "docs" / "AGENTS.md").read_text(encoding="utf-8")
    assert "docs/AGENTS.md" in (ROOT / "README.md").read_text(encoding="utf-8")
    for tool in ("assemble", "search", "sparql", "describe", "history", "explore", "index"):
        assert f"`{tool}`" in guide, tool
