"""Checks that what acms returns points at the files as they are on disk now.

Every answer acms gives carries ``path:start-end`` provenance; an agent opens those lines to edit them,
so after any edit they must still be the lines the answer shows. These helpers read the files fresh
on every call (never a cached copy) and fail with what was returned beside what is on disk.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Block", "blocks_of_markdown", "blocks_of_reply", "check_blocks", "check_described", "check_markdown",
           "check_ref", "check_reply", "parse_ref"]

_HEADER = re.compile(r"^### (?P<path>.+?):(?P<start>\d+)-(?P<end>\d+) · (?P<name>.*) \((?P<kind>[^()]*)\)"
                     r"(?P<truncated> \(truncated\))?$")
_META = re.compile(r"^<!-- .*\blod=(?P<lod>\S+)\b.* -->$")
_FENCE = re.compile(r"^(?P<fence>`{3,})[^`]*$")
_REF = re.compile(r"(?P<path>[^\s:]+):(?P<start>\d+)-(?P<end>\d+)")
# Lines a definition's range may open with before the line that names it: blank lines, comments and
# doc comments, decorators, annotations and attributes.
_PREAMBLE = ("//", "/*", "*", "#", "@", "[", "///")
_SKIPPED_OUTLINE = re.compile(r'^(""".*"""|\.\.\.|# … and \d+ more.*)$')


@dataclass(frozen=True)
class Block:
    """One fragment of an answer: where it says it comes from, and the text it shows."""

    path: str
    start: int
    end: int
    name: str
    kind: str
    lod: str
    text: str
    truncated: bool = False

    @property
    def ref(self) -> str:
        return f"{self.path}:{self.start}-{self.end}"


def file_lines(root: Path, path: str) -> list[str] | None:
    """The file's lines as on disk now; None when it is gone or is not text (what acms must not cite)."""
    target = root / path
    try:
        data = target.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return None


def _norm(line: str) -> str:
    return " ".join(line.split())


def blocks_of_markdown(markdown: str) -> list[Block]:
    """Every ``### path:start-end`` block of a markdown context, with its lod and the body of its fence
    (a ``###`` line inside a fence is the fragment's text, not a header). Fails on a header it cannot
    parse or one without its comment and fence: a document that cannot be checked is a failure."""
    lines = markdown.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        head = _HEADER.match(lines[i])
        if lines[i].startswith("### ") and head is None and _REF.search(lines[i].split(" · ")[0]):
            raise AssertionError(f"unparsable block header: {lines[i]!r}")
        if head is None:
            i += 1
            continue
        meta = _META.match(lines[i + 1]) if i + 1 < len(lines) else None
        fence = _FENCE.match(lines[i + 2]) if i + 2 < len(lines) else None
        assert meta and fence, f"block without its comment and fence: {lines[i:i + 3]!r}"
        close = fence.group("fence")
        j = i + 3
        while j < len(lines) and lines[j] != close:
            j += 1
        assert j < len(lines), f"unclosed fence after {lines[i]!r}"
        blocks.append(Block(head.group("path"), int(head.group("start")), int(head.group("end")), head.group("name"),
                            head.group("kind"), meta.group("lod"), "\n".join(lines[i + 3:j]),
                            head.group("truncated") is not None))
        i = j + 1
    return blocks


def blocks_of_reply(reply: Mapping[str, Any]) -> list[Block]:
    """The fragments of a ``render_context_reply.v0`` as blocks (``source_ref``, ``lod``, ``text``)."""
    out = []
    for f in reply["fragments"]:
        path, start, end = parse_ref(f["source_ref"])
        name = f["entities"][0] if f.get("entities") else ""
        out.append(Block(path, start, end, name, f["kind"], f["lod"], f["text"].rstrip("\n"), bool(f["truncated"])))
    return out


def parse_ref(ref: str) -> tuple[str, int, int]:
    m = re.fullmatch(r"(?P<path>.+):(?P<start>\d+)-(?P<end>\d+)", ref.strip())
    assert m, f"not a path:start-end reference: {ref!r}"
    return m.group("path"), int(m.group("start")), int(m.group("end"))


def _lines_in_range(root: Path, path: str, start: int, end: int, what: str) -> list[str]:
    lines = file_lines(root, path)
    assert lines is not None, f"{what}: {path} is not a text file on disk (deleted, or binary)"
    assert 1 <= start <= end <= max(len(lines), 1), (
        f"{what}: lines {start}-{end} are outside {path}, which has {len(lines)} lines now")
    return lines


def _short(name: str) -> str:
    """The name a definition's own line carries: the last part of its qualified name."""
    return name.rsplit(".", 1)[-1].strip()


def _head_index(window: list[str]) -> int:
    """The first line of a definition's range that is not a blank, comment, decorator or attribute."""
    for i, line in enumerate(window):
        s = line.strip()
        if s and not s.startswith(_PREAMBLE):
            return i
    return 0


def check_ref(root: Path, ref: str, name: str = "", kind: str = "", what: str = "") -> None:
    """A reference is to lines that exist now and, for a named definition, the line that names it is
    its first line after comments and decorators (a shifted range would start elsewhere)."""
    path, start, end = parse_ref(ref)
    what = what or f"{ref} ({name})"
    lines = _lines_in_range(root, path, start, end, what)
    window = lines[start - 1:end]
    if not name or kind in ("File", "Module", "") or name == path:
        return
    if kind == "DocSection":
        assert name in window[0], f"{what}: heading {name!r} is not at line {start} of {path}: {window[0]!r}"
        return
    head = window[_head_index(window)]
    assert _short(name) in head, (f"{what}: the definition of {_short(name)!r} does not open {path}:{start}-{end}; "
                                  f"on disk that range opens with {window[:3]!r}")


def _check_outline(block: Block, lines: list[str]) -> None:
    """A macro fragment is an outline (signatures, member lines), not the file's text: each of its
    lines must be found in the range, in order, the first one opening it after comments and decorators."""
    window = lines[block.start - 1:block.end]
    outline = block.text.splitlines()
    if block.kind == "File":  # "<path>", "# module <name>...", then the top-level signatures
        assert outline and outline[0] == block.path, f"{block.ref}: file outline of another path: {outline[:1]!r}"
        assert (block.start, block.end) == (1, len(lines)), (
            f"{block.ref}: a file outline must span the file, which has {len(lines)} lines now")
        outline = [o for o in outline[1:] if not o.startswith("# module ")]
    at = 0
    first = True
    for raw in outline:
        want = _norm(raw.split("  # ", 1)[0])
        if block.kind == "File" and want.startswith("- "):  # a document's outline: its headings, nested
            want = want[2:]
        if not want or _SKIPPED_OUTLINE.match(want):
            continue
        found = next((i for i in range(at, len(window)) if want in _norm(window[i])), None)
        assert found is not None, (f"{block.ref} ({block.name}): outline line {raw!r} is not in lines "
                                   f"{block.start + at}-{block.end} of {block.path} on disk: {window[at:]!r}")
        if first and block.kind != "File":
            assert found <= _head_index(window), (
                f"{block.ref} ({block.name}): outline opens with {raw!r}, found at line {block.start + found}, "
                f"after {window[:found]!r}")
        first = False
        at = found + 1


def check_blocks(root: Path, blocks: Iterable[Block], *, where: str = "") -> list[Block]:
    """Each block's lines are the file's lines now: the text of a micro or atomic fragment (a
    truncated one: its first lines, up to the end it names) is exactly those lines; a macro outline's
    lines are found in its range, in order."""
    checked = list(blocks)
    for b in checked:
        what = f"{where}{b.ref} ({b.name}, {b.lod})"
        lines = _lines_in_range(root, b.path, b.start, b.end, what)
        if b.lod == "macro":
            _check_outline(b, lines)
            continue
        on_disk = "\n".join(lines[b.start - 1:b.end]).rstrip("\n")
        assert b.text.rstrip("\n") == on_disk, (
            f"{what}: the answer shows\n{b.text}\n--- but {b.path}:{b.start}-{b.end} on disk is\n{on_disk}")
    return checked


def check_markdown(root: Path, markdown: str, *, where: str = "", at_least: int = 1) -> list[Block]:
    """Every block of a markdown context against the files on disk; returns the blocks."""
    blocks = blocks_of_markdown(markdown)
    assert len(blocks) >= at_least, f"{where}expected at least {at_least} block(s) in:\n{markdown}"
    return check_blocks(root, blocks, where=where)


def check_reply(root: Path, reply: Mapping[str, Any], *, where: str = "", at_least: int = 1) -> list[Block]:
    """The fragments of a ``render_context_reply.v0`` against the files on disk."""
    assert "error" not in reply, f"{where}error reply: {reply}"
    blocks = blocks_of_reply(reply)
    assert len(blocks) >= at_least, f"{where}expected at least {at_least} fragment(s) in {reply}"
    return check_blocks(root, blocks, where=where)


def check_described(root: Path, about: Mapping[str, Any], *, where: str = "") -> None:
    """A ``describe`` answer: its location opens with its signature, and every caller, callee and
    member it lists (``name (Kind)  path:start-end``) opens with that name."""
    assert about.get("location"), f"{where}{about.get('name')}: no location in {about}"
    check_ref(root, about["location"], about["name"], about["kind"], what=f"{where}location of {about['name']}")
    path, start, end = parse_ref(about["location"])
    window = file_lines(root, path)[start - 1:end]  # type: ignore[index]
    if about.get("signature") and about["kind"] not in ("Module", "File"):  # a module's is "module <name>"
        sig_lines = about["signature"].splitlines()
        sig = _norm(sig_lines[_head_index(sig_lines)])  # past the decorators a signature may start with
        head = _norm(window[_head_index(window)])
        assert sig.rstrip("{:").strip() in head or head in sig, (
            f"{where}{about['name']}: signature {about['signature']!r} is not line "
            f"{start + _head_index(window)} of {path}: {window[:3]!r}")
    for listed in [*about.get("callers", []), *about.get("callees", []), *about.get("members", [])]:
        name, _, ref = listed.rpartition("  ")
        kind = ""
        if name.endswith(")") and " (" in name:
            name, kind = name[:-1].rsplit(" (", 1)
        # callers and callees come without their kind: any named definition opens with its name
        check_ref(root, ref, name, kind or "Function", what=f"{where}{about['name']} lists {listed!r}")
