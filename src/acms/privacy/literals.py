"""Tokens split across adjacent or concatenated string literals."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from itertools import accumulate

from acms.privacy.accept import _NAME, _SEP, _name_ok
from acms.privacy.decoys import _placeholder
from acms.privacy.model import _Hit, _MARK_HEAD


_LIT = r"\"(?:[^\"\\\n]|\\.){0,300}\"|'(?:[^'\\\n]|\\.){0,300}'"
_CHAIN = re.compile(
    r"(?:" + _LIT + r")(?:[ \t]*(?:\+|\.\.?|\\)?[ \t]*(?:\r?\n[ \t]*(?:\+|\.\.?)?[ \t]*)?(?:"
    + _LIT + r"))+")
_LIT_IN = re.compile(_LIT)
# a closing quote, what may join two literals (a superset of _CHAIN's), an opening quote: one
# pattern per quote, as ``re`` skips ahead to one literal character ~4x faster than to a class
_JUNCTIONS = (re.compile(r"\"[ \t+.\\\r\n]*[\"']"), re.compile(r"'[ \t+.\\\r\n]*[\"']"))
_OPEN_CALL = re.compile(r"\([ \t]*$")
_ASSIGN_BEFORE = re.compile(
    r"(?i)(?<![\w.\-])[\"'\[]?(?P<n>" + _NAME + r")[\"'\]]?" + _SEP + r"\(?[ \t]*$")


def _chains(text: str) -> Iterator[re.Match[str]]:
    """``_CHAIN.finditer(text)``, without running _CHAIN (slow: it reads every literal of the file,
    ~1 us each) over lines where no chain can start. A chain's first literal is on one line and
    its closing quote starts a junction (quote, joiners, quote) on that line: only lines where a
    junction was found are searched, each with the next line (where a chain's second literal may
    be), and a chain found there is matched again on the whole text for its full length.

    A junction that a found one overlaps is not reported, but then it starts where the found one
    ends, after a line break and joiners only: no literal opens before it on its line."""
    starts = sorted(j.start() for junction in _JUNCTIONS for j in junction.finditer(text))
    pos = 0
    line_end = -1
    for at in starts:
        if at < pos or at <= line_end:
            continue  # inside the last chain, or on a line already searched
        line_start = text.rfind("\n", 0, at) + 1
        line_end = text.find("\n", at)
        if line_end < 0:
            line_end = len(text)
        next_end = text.find("\n", line_end + 1)
        window_end = len(text) if next_end < 0 else next_end
        while True:
            m = _CHAIN.search(text, max(pos, line_start), window_end)
            if m is None or m.start() > line_end:
                break
            # its first two literals matched, so the whole text matches there too (never None)
            chain = _CHAIN.match(text, m.start()) or m
            yield chain
            pos = chain.end()
            if pos > line_end:
                break


LineScan = Callable[[str], list[_Hit]]  # every line rule's and plugin's hits on one line


def _split_literal_hits(text: str, scan_line: LineScan) -> Iterator[_Hit]:
    """Secrets split across adjacent or concatenated literals (``"ghp_ab" "cd..."``, ``'x' + 'y'``,
    Go's and Java's ``+`` across lines): the literals are joined into one, the line as it would read
    then (what precedes the chain on its line, the joined literal) is scanned by every line rule,
    and each hit inside the joined literal is mapped back onto every piece it covers. A chain
    assigned to a secret-looking name is redacted whole."""
    for chain in _chains(text):
        parts: list[tuple[int, int]] = []  # content spans in text
        for lit in _LIT_IN.finditer(text, chain.start(), chain.end()):
            parts.append((lit.start() + 1, lit.end() - 1))
        if len(parts) < 2:
            continue
        joined = "".join(text[a:b] for a, b in parts)
        if _MARK_HEAD in joined:
            continue
        offsets = list(accumulate(b - a for a, b in parts))
        # what the line holds before the chain, if under 400 characters (looked for no further
        # back: on a one-line file a search to the line's start made the scan quadratic)
        lo = max(0, chain.start() - 400)
        nl = text.rfind("\n", lo, chain.start())
        before = text[nl + 1:chain.start()] if nl >= 0 or lo == 0 else ""
        # _ASSIGN_BEFORE ends in _SEP's last sign, "(" or blanks: test that before searching
        assign = _ASSIGN_BEFORE.search(before) if before and before.rstrip(" \t")[
            -1:] in ("=", ":", ">", "(") else None
        if assign and _name_ok(assign.group("n")) and not _placeholder(joined):
            kind = "password" if re.search(r"(?i)pass|pwd", assign.group("n")) else "credential"
            for a, b in parts:
                if b > a:
                    yield _Hit(a, b, kind, True)
        quote = next((q for q in "\"'`" if q not in joined), None)
        if quote is None or len(joined) < 6:
            continue
        before = _OPEN_CALL.sub("", before)  # key = ("a" "b"): read as key = "ab"
        head = len(before) + 1
        for hit in scan_line(before + quote + joined + quote):
            m_start, m_end = max(hit.start, head) - head, min(hit.end, head + len(joined)) - head
            if m_end <= m_start:
                continue  # outside the joined literal: the text's own line scan sees it
            first = bisect.bisect_right(offsets, m_start)
            last = bisect.bisect_left(offsets, m_end)
            for i in range(first, min(last, len(parts) - 1) + 1):
                a, b = parts[i]
                base = offsets[i - 1] if i else 0
                lo = max(a, a + m_start - base)
                hi = min(b, a + m_end - base)
                if hi > lo:
                    yield _Hit(lo, hi, hit.kind, hit.generic)
