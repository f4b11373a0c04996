"""Anchors in a task's text: the places a bug report or an agent's paste points at.

An issue text often carries more exact pointers than words: a stack trace's frames (``File "x.py",
line 12, in parse``; ``at parse (src/x.ts:12:5)``; ``x.go:12``), and error messages that the code
raises verbatim. The frames whose file is indexed name the innermost class, function or method around
their line (``anchor-lines.rq``), the last frame first (Python prints the most recent call last); an
error message's text is searched with the keyword index and kept where a fragment holds it verbatim.
The default pipeline starts from the anchors as from a focus, ahead of the first stage's seeds.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from pyoxigraph import Literal

from acms.vocab import XSD

# ``File "pkg/mod.py", line 12`` (Python) or ``path/to/file.ext:12`` (most others: JS/TS, Go, Rust,
# Java's ``(File.java:12)``, compilers and linters).
_PY_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)')
_PATH_LINE = re.compile(r"([\w./\\@+-]+\.[A-Za-z]{1,6}):(\d+)")
# ``SomeError: message`` / ``error: message`` lines of a log or a trace.
_ERROR_LINE = re.compile(r"^\s*(?:[\w.]*(?:Error|Exception|Warning)|error|panic|fatal)\b[:\s]\s*(.{12,200})$", re.M)
MAX_FRAMES = 24
MAX_MESSAGES = 4


@dataclass(frozen=True)
class Frame:
    path: str  # as indexed
    line: int


def frames(text: str, indexed: Collection[str]) -> list[Frame]:
    """The task's file:line pointers whose file is indexed (the one indexed path the pointer ends with, or
    that ends with the pointer's), most recent first, without repeats."""
    found: list[tuple[str, int]] = [(m.group(1), int(m.group(2))) for m in _PY_FRAME.finditer(text)]
    found += [(m.group(1), int(m.group(2))) for m in _PATH_LINE.finditer(text)]
    if not found:
        return []
    by_tail: dict[str, list[str]] = {}
    for p in indexed:
        by_tail.setdefault(p.rsplit("/", 1)[-1], []).append(p)
    out: list[Frame] = []
    for raw, line in reversed(found):
        norm = raw.replace("\\", "/")
        matches = [p for p in by_tail.get(norm.rsplit("/", 1)[-1], ()) if norm.endswith(p) or p.endswith(norm.lstrip("./"))]
        if len(matches) != 1:
            continue
        frame = Frame(matches[0], line)
        if frame not in out:
            out.append(frame)
        if len(out) >= MAX_FRAMES:
            break
    return out


def frame_bindings(found: list[Frame]) -> list[tuple[Literal, Literal]]:
    return [(Literal(f.path), Literal(str(f.line), datatype=XSD.integer)) for f in found]


def messages(text: str) -> list[str]:
    """Error messages quoted in the task, as the code would hold them (variable parts left in place)."""
    out = []
    for m in _ERROR_LINE.finditer(text):
        msg = m.group(1).strip().strip("'\"")
        if msg and msg not in out:
            out.append(msg)
        if len(out) >= MAX_MESSAGES:
            break
    return out


_VARIABLE = re.compile(r"""['"`<(\[{]|\d""")


def literal_part(message: str) -> str:
    """The start of a message up to its first variable-looking part (a quote, a bracket, a digit): what
    the code that raises it holds verbatim ("invalid literal for int() with base 10: 'x'" is formatted
    from "invalid literal for int() with base"); empty when that start is too short to be telling."""
    m = _VARIABLE.search(message)
    head = (message[: m.start()] if m else message).strip().rstrip(":,;- ")
    return head if len(head) >= 12 else ""
