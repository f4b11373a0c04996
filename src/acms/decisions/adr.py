"""Architecture decision records: a pure parser from (path, text) to decision data, no RDF.

Recognised places: ``docs/adr/``, ``doc/adr/``, ``adr/``, ``docs/decisions/`` (at the project root or
under any folder), ``*.md`` files that are not an index, README or template. Formats:

- Nygard / adr-tools: ``# 1. Title``, a ``## Status`` section (``Accepted``, ``Superseded by [3. …](0003-….md)``),
  ``## Context``, ``## Decision``, ``## Consequences``;
- MADR: ``status:`` in YAML front matter or a ``* Status: accepted`` line, ``## Decision Outcome``.

``Supersedes …`` lines give links, by markdown link target (a file name relative to the ADR) or by
ADR number; the indexer keeps those that name an ADR file of the project. ``Superseded by …`` only sets
the status: the link is stated by the newer ADR, so each file owns the triples it gives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from posixpath import basename, dirname, join, normpath

ADR_DIRS = ("docs/adr/", "doc/adr/", "adr/", "docs/decisions/")
_NOT_ADRS = re.compile(r"^(readme|index|toc|template)\.md$|template", re.IGNORECASE)
MAX_STATEMENT = 4000
MAX_FRAGMENT_LINES = 200
MAX_FRAGMENT_CHARS = 12_000

_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_STATUS_LINE = re.compile(r"^\s*(?:[*\-+]\s*)?\**status\**\s*:\s*(.+)$", re.IGNORECASE)
_SUPERSEDES = re.compile(r"^\s*(?:[*\-+]\s*)?\**supersedes\**\b\s*:?\s*(.*)$", re.IGNORECASE)
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>#]+)")
_WHOLE_LINK = re.compile(r"\[[^\]]*\]\([^)]*\)")
_NUMBER = re.compile(r"\b(?:adr[\s-]*)?0*(\d{1,5})\b", re.IGNORECASE)
_TITLE_NUMBER = re.compile(r"^(?:adr[\s-]*)?\d+[.:)]?\s+(?=\S)", re.IGNORECASE)
_FILE_NUMBER = re.compile(r"^(?:adr[-_]?)?0*(\d+)")


@dataclass(frozen=True)
class AdrRecord:
    path: str
    title: str
    status: str  # one of model.STATUSES
    raw_status: str  # as written, for people
    statement: str
    supersedes: tuple[str, ...]  # link targets resolved to paths, or "#<n>" for a bare ADR number
    fragment_text: str  # the file's lines 1..N (bounded), so its sourceRef is exact


def is_adr_path(path: str) -> bool:
    if not path.lower().endswith(".md") or _NOT_ADRS.search(basename(path)):
        return False
    folder = dirname(path) + "/"
    return any(folder == d or folder.endswith("/" + d) for d in ADR_DIRS)


def adr_number(path: str) -> int | None:
    m = _FILE_NUMBER.match(basename(path).lower())
    return int(m.group(1)) if m else None


def map_status(raw: str) -> str:
    """A status as written ("Accepted", "Superseded by [3](…)", "Draft") mapped to the allowed ones."""
    s = raw.strip().lower()
    if "superseded" in s or "replaced by" in s:
        return "superseded"
    for status, words in (
        ("deprecated", ("deprecated", "obsolete")),
        ("rejected", ("rejected", "declined", "withdrawn")),
        ("retired", ("retired",)),
        ("accepted", ("accepted", "approved", "adopted", "decided", "done", "implemented")),
        ("proposed", ("proposed", "draft", "open", "pending", "in review", "under review")),
    ):
        if any(re.search(rf"\b{w}\b", s) for w in words):
            return status
    return "proposed"


def _sections(lines: list[str]) -> tuple[str, list[tuple[str, list[str]]]]:
    """The first level-1 heading (the title) and the level-2+ sections as (lower-case heading, lines)."""
    title = ""
    sections: list[tuple[str, list[str]]] = []
    in_code = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            in_code = not in_code
        m = None if in_code else _HEADING.match(line)
        if m and len(m.group(1)) == 1 and not title:
            title = m.group(2)
            continue
        if m and len(m.group(1)) >= 2:
            sections.append((m.group(2).strip().lower(), []))
            continue
        if sections:
            sections[-1][1].append(line)
    return title, sections


def _section(sections: list[tuple[str, list[str]]], *names: str) -> str | None:
    for wanted in names:
        for heading, body in sections:
            if heading == wanted or heading.startswith(wanted + " "):
                text = "\n".join(body).strip()
                if text:
                    return text
    return None


def _bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit("\n", 1)[0] if "\n" in text[:limit] else text[:limit]
    return cut.rstrip() + "\n…"


def _targets(text: str, path: str) -> list[str]:
    """What a ``Supersedes`` line points at: link targets resolved against the ADR's folder, else numbers."""
    links = [normpath(join(dirname(path), t)) for t in _LINK.findall(text) if "://" not in t]
    rest = _WHOLE_LINK.sub(" ", text)  # numbers inside a link's text belong to the link
    return links + [f"#{int(n)}" for n in _NUMBER.findall(rest)]


def _stem_title(path: str) -> str:
    stem = basename(path).rsplit(".", 1)[0]
    return re.sub(r"[-_]+", " ", _FILE_NUMBER.sub("", stem)).strip() or stem


def parse_adr(path: str, text: str) -> AdrRecord:
    """Decision data of one ADR file (every file at an ADR path is one, so links to it always resolve)."""
    front: dict[str, str] = {}
    body = text
    m = _FRONT.match(text)
    if m:
        for line in m.group(1).splitlines():
            key, sep, value = line.partition(":")
            if sep:
                front[key.strip().lower()] = value.strip().strip("'\"")
        body = text[m.end():]
    lines = body.splitlines()
    title, sections = _sections(lines)
    title = _TITLE_NUMBER.sub("", title).strip() or front.get("title", "") or _stem_title(path)
    raw_status = front.get("status", "")
    status_text = _section(sections, "status") or ""
    if not raw_status:
        raw_status = next((s.group(1).strip() for s in map(_STATUS_LINE.match, lines) if s), "")
    if not raw_status and status_text:
        raw_status = next((line.strip() for line in status_text.splitlines() if line.strip()), "")
    status = map_status(raw_status)
    if re.search(r"superseded\s+by", status_text + "\n" + raw_status, re.IGNORECASE):
        status = "superseded"
    supersedes: list[str] = []
    for line in [*lines, *(f"supersedes: {v}" for k, v in front.items() if k == "supersedes")]:
        s = _SUPERSEDES.match(line)
        if s:
            supersedes += _targets(s.group(1), path)
    statement = _section(sections, "decision", "decision outcome") or body.strip()
    kept = text.splitlines()[:MAX_FRAGMENT_LINES] or [title]
    while len(kept) > 1 and sum(len(x) + 1 for x in kept) > MAX_FRAGMENT_CHARS:
        kept.pop()  # whole lines only: the fragment's lines are the file's lines 1..N
    return AdrRecord(
        path=path, title=title, status=status, raw_status=raw_status or "(none)",
        statement=_bounded(statement, MAX_STATEMENT),
        supersedes=tuple(dict.fromkeys(t for t in supersedes if t != path)),
        fragment_text="\n".join(kept)[:MAX_FRAGMENT_CHARS],
    )
