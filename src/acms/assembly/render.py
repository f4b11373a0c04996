"""Render packed fragments as one document, with provenance headers, in markdown or plain text.

A document is exactly ``preamble + "".join(blocks)``: every block starts with its own separator
(a blank line), so the packer can price a block on its own and the document is the sum of its parts
(token counts are not additive across the joins, which is why the packer re-counts the result).

markdown::

    # Context for: <task>

    ### pkg/mod.py:20-23 · pkg.mod.Parser.parse_header (Method)
    <!-- score=0.812 lod=micro strategy=arce tier=warm -->
    ```python
    ...
    ```

text::

    Context for: <task>

    === pkg/mod.py:20-23 | pkg.mod.Parser.parse_header | Method | score=0.812 | lod=micro | strategy=arce | tier=warm ===
    ...

A truncated block says so in its header (`` (truncated)`` / `` | truncated``) and its line range ends
at the last line shown.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from enum import Enum
from pathlib import PurePosixPath

from acms.assembly.model import Candidate, Packed
from acms.errors import UsageError

TASK_MAX_CHARS = 200

_FENCE_LANGS = {
    ".py": "python", ".pyi": "python", ".md": "markdown", ".rst": "rst", ".txt": "text",
    ".toml": "toml", ".json": "json", ".yaml": "yaml", ".yml": "yaml", ".ini": "ini", ".cfg": "ini",
    ".js": "javascript", ".mjs": "javascript", ".ts": "typescript", ".tsx": "tsx", ".jsx": "jsx",
    ".sh": "bash", ".bash": "bash", ".rq": "sparql", ".ru": "sparql", ".ttl": "turtle",
    ".html": "html", ".css": "css", ".sql": "sql", ".java": "java", ".go": "go", ".rs": "rust",
    ".c": "c", ".h": "c", ".cpp": "cpp", ".hpp": "cpp", ".rb": "ruby", ".xml": "xml",
}
_BACKTICKS = re.compile(r"`+")


class Format(str, Enum):
    MARKDOWN = "markdown"
    TEXT = "text"


def parse_format(fmt: Format | str) -> Format:
    """Coerce a format name; the error lists the valid ones."""
    try:
        return Format(fmt)
    except ValueError:
        valid = ", ".join(f.value for f in Format)
        raise UsageError(f"unknown format {fmt!r} (valid: {valid})") from None


@functools.lru_cache(maxsize=4096)
def fence_language(path: str) -> str:
    """The info string of a code fence, from the file extension ("" when unknown); kept per path, as
    every candidate's block is rendered to be counted and a context's few hundred share few files."""
    name = PurePosixPath(path).name
    if name in {"Makefile", "makefile"}:
        return "make"
    return _FENCE_LANGS.get(PurePosixPath(path).suffix.lower(), "")


def _fence(body: str) -> str:
    """Three backticks, or one more than the longest run in the body so it cannot close early."""
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(body)), default=0)
    return "`" * max(3, longest + 1)


def _one_line(value: str) -> str:
    return " ".join(value.split())


def preamble(task: str, fmt: Format | str, notice: str = "") -> str:
    """The document's first line; the task is folded to one line and cut at ``TASK_MAX_CHARS``. Each
    line of a ``notice`` (files changed on disk since they were indexed, why a context is empty)
    follows it on a line of its own."""
    task = _one_line(task)
    if len(task) > TASK_MAX_CHARS:
        task = task[: TASK_MAX_CHARS - 1] + "…"
    markdown = parse_format(fmt) is Format.MARKDOWN
    head = f"{'# ' if markdown else ''}Context for: {task}\n"
    lines = [_one_line(line) for line in notice.splitlines() if line.strip()]
    return head + "".join(f"{'> ' if markdown else ''}{line}\n" for line in lines)


def render_block(
    text: str, cand: Candidate, fmt: Format | str, truncated: bool, end_line: int | None = None
) -> str:
    """One fragment with its provenance header, starting with the blank line that separates it."""
    return "".join(block_parts(text, cand, fmt, truncated, end_line))


def block_parts(
    text: str, cand: Candidate, fmt: Format | str, truncated: bool, end_line: int | None = None
) -> tuple[str, str, str]:
    """``render_block``'s text as (header, body, closing): the body is the fragment's text whatever the
    score and header, so its token count is taken once (:func:`acms.tokens.count_parts`)."""
    fmt = parse_format(fmt)
    end = cand.end_line if end_line is None else end_line
    ref = _one_line(f"{cand.path}:{cand.start_line}-{end}")
    name, kind = _one_line(cand.name), _one_line(cand.kind)
    meta = [
        f"score={cand.score:.3f}", f"lod={_one_line(cand.lod)}",
        f"strategy={_one_line(cand.strategy)}", f"tier={_one_line(cand.tier)}",
    ]
    body = text.rstrip("\n")
    body_lines = f"{body}\n" if body else ""
    copies = _one_line(f"copies, not shown: {', '.join(cand.copies)}") if cand.copies else ""
    if fmt is Format.MARKDOWN:
        fence = _fence(body)
        mark = " (truncated)" if truncated else ""
        head = (f"\n### {ref} · {name} ({kind}){mark}\n<!-- {' '.join(meta).replace('--', '- -')} -->\n"
                + (f"> {copies}\n" if copies else "") + f"{fence}{fence_language(cand.path)}\n")
        return head, body_lines, f"{fence}\n"
    mark = " | truncated" if truncated else ""
    return f"\n=== {ref} | {name} | {kind} | {' | '.join(meta)}{mark} ===\n" + (f"{copies}\n" if copies else ""), \
        body_lines, ""


def render_packed(item: Packed, fmt: Format | str) -> str:
    return render_block(item.text, item.candidate, fmt, item.truncated, item.end_line)


def packed_parts(item: Packed, fmt: Format | str) -> tuple[str, str, str]:
    return block_parts(item.text, item.candidate, fmt, item.truncated, item.end_line)


def render(blocks: Iterable[str], fmt: Format | str, task: str, notice: str = "") -> str:
    """The whole document: exactly the preamble followed by the blocks."""
    return preamble(task, fmt, notice) + "".join(blocks)
