"""Markdown and reStructuredText files to nested sections.

A section runs from its heading to just before the next heading of the same or a higher level, so
it contains its subsections; anchors are slug paths of the heading chain ("install/from-source"),
which stay stable when unrelated sections move and are unique within a file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from acms.ingest.model import DocSection, Extraction

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+$")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)$")
_THEMATIC = re.compile(r" {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_LIST_OR_QUOTE = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)| {0,3}>")
_HTML_COMMENT = re.compile(r" {0,3}<!--")
_FRONT_MATTER = {"---": ("---", "..."), "+++": ("+++",)}
# reST adornment: one ASCII punctuation character repeated, from column 0.
_ADORNMENT = re.compile(r"([!-/:-@\[-`{-~])\1*[ \t]*$")


@dataclass
class _Heading:
    title: str
    level: int
    line: int  # 1-based first line (the overline for over-and-underlined reST titles)


def slug(title: str) -> str:
    """Lower-case, runs of non-alphanumerics to one "-"; "section" when nothing is left."""
    return re.sub(r"[\W_]+", "-", title.lower()).strip("-") or "section"


def extract_markdown(path: str, text: str) -> Extraction:
    """Sections of a Markdown (CommonMark-style) file: ATX and setext headings outside code."""
    lines = text.splitlines()
    return Extraction(language="markdown", sections=_sections(_markdown_headings(lines), len(lines)))


def extract_rst(path: str, text: str) -> Extraction:
    """Sections of a reST file; levels follow first appearance of each adornment style, as in docutils."""
    lines = text.splitlines()
    return Extraction(language="rst", sections=_sections(_rst_headings(lines), len(lines)))


def _markdown_headings(lines: list[str]) -> list[_Heading]:
    out: list[_Heading] = []
    para: list[tuple[int, str]] = []  # the open paragraph: a setext underline turns it into a heading
    lazy = False  # inside a list item or quote: an underline there is a thematic break, not a heading
    fence: tuple[str, int] | None = None
    comment = False
    i = _front_matter_end(lines)
    while i < len(lines):
        line = lines[i]
        i += 1
        if fence is not None:
            char, size = fence
            if re.fullmatch(rf" {{0,3}}{re.escape(char)}{{{size},}}[ \t]*", line):
                fence = None
            continue
        if comment:
            comment = "-->" not in line
            continue
        if not line.strip():
            para, lazy = [], False
            continue
        if (m := _FENCE.match(line)) and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence, para = (m.group(1)[0], len(m.group(1))), []
            continue
        if _HTML_COMMENT.match(line):
            comment, para = "-->" not in line.split("<!--", 1)[1], []
            continue
        if m := _ATX.match(line):
            title = _ATX_CLOSING.sub("", (m.group(2) or "").strip()).strip()
            out.append(_Heading(title, len(m.group(1)), i))
            para, lazy = [], False
            continue
        if (m := _SETEXT.match(line)) and para:
            title = " ".join(part.strip() for _, part in para)
            out.append(_Heading(title, 1 if m.group(1)[0] == "=" else 2, para[0][0]))
            para = []
            continue
        if _THEMATIC.match(line):
            para = []
            continue
        if _LIST_OR_QUOTE.match(line):
            para, lazy = [], True
            continue
        if lazy or (not para and (line.startswith("    ") or line.startswith("\t"))):
            continue  # list continuation or indented code
        para.append((i, line))
    return out


def _front_matter_end(lines: list[str]) -> int:
    """Index of the first line after YAML/TOML front matter, whose closing "---" is no heading."""
    if not lines or lines[0].strip() not in _FRONT_MATTER:
        return 0
    closers = _FRONT_MATTER[lines[0].strip()]
    for i in range(1, len(lines)):
        if lines[i].strip() in closers:
            return i + 1
    return 0


def _rst_headings(lines: list[str]) -> list[_Heading]:
    out: list[_Heading] = []
    styles: list[tuple[bool, str]] = []

    def level(style: tuple[bool, str]) -> int:
        if style not in styles:
            styles.append(style)
        return styles.index(style) + 1

    # A title starts a block: after a blank line, the start, another title or explicit markup.
    block_start = True
    explicit = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            block_start, explicit = True, False
            i += 1
            continue
        if explicit and line[0].isspace():
            i += 1
            continue
        if block_start or explicit:
            over = _ADORNMENT.match(line)
            if over and i + 2 < len(lines):
                title, under = lines[i + 1].strip(), _ADORNMENT.match(lines[i + 2])
                if title and under and under.group(1) == over.group(1) and len(line.rstrip()) >= len(title):
                    out.append(_Heading(title, level((True, over.group(1))), i + 1))
                    i, block_start, explicit = i + 3, True, False
                    continue
            under = _ADORNMENT.match(lines[i + 1]) if i + 1 < len(lines) else None
            if under and not line[0].isspace() and not over:
                title, width = line.strip(), len(lines[i + 1].rstrip())
                if width >= len(title) or width >= 4:  # docutils: shorter underlines of 4+ only warn
                    out.append(_Heading(title, level((False, under.group(1))), i + 1))
                    i, block_start, explicit = i + 2, True, False
                    continue
        explicit = line.startswith("..") and (len(line) == 2 or line[2] in " \t")
        block_start = False
        i += 1
    return out


def _sections(headings: list[_Heading], line_count: int) -> list[DocSection]:
    out: list[DocSection] = []
    used: set[str] = set()
    stack: list[tuple[int, str]] = []  # (level, anchor) of the open enclosing sections
    for n, heading in enumerate(headings):
        end = line_count
        for later in headings[n + 1 :]:
            if later.level <= heading.level:
                end = later.line - 1
                break
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        parent = stack[-1][1] if stack else None
        base = f"{parent}/{slug(heading.title)}" if parent else slug(heading.title)
        anchor, k = base, 1
        while anchor in used:
            k += 1
            anchor = f"{base}-{k}"
        used.add(anchor)
        stack.append((heading.level, anchor))
        out.append(DocSection(heading.title, anchor, heading.level, heading.line, max(end, heading.line), parent))
    return out
