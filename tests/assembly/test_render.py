"""Rendering: provenance headers in both formats; a document is its preamble plus its blocks."""

from __future__ import annotations

import pytest

from acms.assembly.model import Candidate
from acms.assembly.render import fence_language, parse_format, preamble, render, render_block
from acms.errors import UsageError

C = Candidate("urn:f:1", "urn:e:parse_header", "pkg.mod.Parser.parse_header", "Method", "micro",
              "def parse_header(self):\n    return self._h\n", "pkg/mod.py", 20, 21, 0.8123,
              "arce", "keyword + graph")


def test_markdown_block_has_the_documented_header() -> None:
    assert render_block(C.text, C, "markdown", False) == (
        "\n### pkg/mod.py:20-21 · pkg.mod.Parser.parse_header (Method)\n"
        "<!-- score=0.812 lod=micro strategy=arce tier=warm -->\n"
        "```python\ndef parse_header(self):\n    return self._h\n```\n"
    )


def test_text_block_and_truncated_marks() -> None:
    block = render_block("def parse_header(self):", C, "text", True, end_line=20)
    assert block == (
        "\n=== pkg/mod.py:20-20 | pkg.mod.Parser.parse_header | Method | score=0.812 | lod=micro"
        " | strategy=arce | tier=warm | truncated ===\ndef parse_header(self):\n"
    )
    md = render_block("def parse_header(self):", C, "markdown", True, end_line=20)
    assert md.startswith("\n### pkg/mod.py:20-20 · pkg.mod.Parser.parse_header (Method) (truncated)\n")


def test_fence_is_longer_than_any_backtick_run() -> None:
    text = 'doc = """\n````\nnested\n````\n"""'
    block = render_block(text, C, "markdown", False)
    assert "\n`````python\n" in block and block.endswith("\n`````\n")


def test_fence_language_from_extension() -> None:
    assert fence_language("a/b.py") == "python"
    assert fence_language("README.md") == "markdown"
    assert fence_language("x.unknown") == ""
    assert fence_language("Makefile") == "make"


def test_document_is_preamble_plus_blocks() -> None:
    blocks = [render_block(C.text, C, "markdown", False), render_block("", C, "markdown", False)]
    doc = render(blocks, "markdown", "fix\nthe   parser")
    assert doc == "# Context for: fix the parser\n" + "".join(blocks)
    assert preamble("t", "text") == "Context for: t\n"
    assert len(preamble("x" * 1000, "text")) < 250


def test_unknown_format_lists_the_valid_ones() -> None:
    with pytest.raises(UsageError, match="markdown, text"):
        parse_format("html")
