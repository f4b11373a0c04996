"""Regular expressions compiled on first use (the scanner's rules and block patterns)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import Any, cast

__all__ = ["Lazy", "lazy"]


class Lazy:
    """A pattern compiled when a text first needs it: a process that scrubs a file or two (a refresh, an
    answer's fragments) uses a few of the ~100 rules and block patterns, which took ~45 ms to compile.
    Once compiled, the pattern's own methods stand in this object's place (no call in between)."""

    def __init__(self, pattern: str) -> None:
        self._source = pattern
        self._compiled: re.Pattern[str] | None = None

    def _re(self) -> re.Pattern[str]:
        if self._compiled is None:
            compiled = self._compiled = re.compile(self._source)
            self.search, self.match, self.finditer = compiled.search, compiled.match, compiled.finditer  # type: ignore[method-assign]
        return self._compiled

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self._re().search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self._re().match(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self._re().finditer(string, pos, endpos)

    def __getattr__(self, name: str) -> Any:  # pattern, groupindex, fullmatch...
        return getattr(self._re(), name)


def lazy(pattern: str) -> re.Pattern[str]:
    """``re.compile(pattern)``, compiled when first searched."""
    return cast(re.Pattern[str], Lazy(pattern))
