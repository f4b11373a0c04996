"""The scrubber's result types and the marker a secret becomes."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass


__all__ = ["MARK", "Finding", "Scrubbed"]

MARK = "[REDACTED:{}]"
_MARK_HEAD = "[REDACTED:"
_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_LONG_LINE = 4000  # longer lines (minified code, data) skip detect-secrets (its keyword regexes
# are unbounded); acms's rules all have bounded repeats, so they stay linear on any line


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret: ``text[start:end]`` is the value, ``line`` is 1-based (counting ``\\n``)."""

    kind: str
    start: int
    end: int
    line: int


@dataclass(frozen=True, slots=True)
class Scrubbed:
    """Text with every finding replaced by ``[REDACTED:kind]``; offsets refer to the input text."""

    text: str
    findings: tuple[Finding, ...]

    @property
    def kinds(self) -> dict[str, int]:
        """How many secrets of each kind were removed (for warnings and ingest reports)."""
        return dict(Counter(f.kind for f in self.findings))


@dataclass(frozen=True, slots=True)
class _Rule:
    """A secret shape: ``group`` is the replaced part; ``accept`` vetoes a match (decoys)."""

    kind: str
    pattern: re.Pattern[str]
    group: int | str = 0
    accept: Callable[[re.Match[str], str], bool] | None = None
    kind_of: Callable[[re.Match[str]], str] | None = None
    classes: frozenset[str] | None = None  # None: every file class
    generic: bool = False
    needles: tuple[str, ...] | None = None  # the lower-cased line must hold one (None: always)
    gate: re.Pattern[str] | None = None  # the needles as one regex (set by _line_rules)
    needle_set: frozenset[str] | None = None  # the needles as a set (set by _line_rules)
    # a cheap search that every accepted match implies: a line without it is not matched at all
    # (the slow rules run on most lines that hold their needles, yet fire on few)
    prefilter: re.Pattern[str] | None = None


@dataclass(frozen=True, slots=True)
class _Hit:
    start: int
    end: int
    kind: str
    generic: bool
