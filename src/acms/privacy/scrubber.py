"""Scan and scrub: every detector's spans merged, replaced by ``[REDACTED:kind]`` line for line."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from functools import cache, lru_cache
from pathlib import PurePosixPath

from acms.privacy.adapter import _DS_GATES, _DsPlugin, _ds_hits, _ds_plugins
from acms.privacy.blocks import (
    _csv_hits,
    _k8s_hits,
    _name_value_hits,
    _pem_hits,
    _table_hits,
    _terraform_hits,
)
from acms.privacy.files import _LOCK_FILES, _file_class
from acms.privacy.literals import _split_literal_hits
from acms.privacy.model import Finding, MARK, Scrubbed, _BREAKS, _Hit, _LONG_LINE, _MARK_HEAD, _Rule
from acms.privacy.rules import _line_rules
from acms.privacy.trigger import _ASCII_LOWER, _candidate_lines, _trie, _trigger_spots

__all__ = ["scan", "scrub"]


@cache
def _needle_index() -> tuple[re.Pattern[str], dict[str, frozenset[str]]]:
    """Every rule's and plugin's needles in one trie regex, found at every position of a line at
    once (a zero-width lookahead, so overlapping needles are all seen), and for each needle the
    needles that are its prefixes (found with it at the same position)."""
    needles = {n for r in _line_rules() for n in r.needles or ()}
    needles |= {n for g in _DS_GATES.values() if isinstance(g, tuple) for n in g}
    pattern = re.compile("(?=(" + _trie([(n, "") for n in sorted(needles)]) + "))")
    # a needle's prefixes among the needles: its own prefixes looked up (each needle against every other was ~7 ms)
    return pattern, {n: frozenset(n[:k] for k in range(len(n) + 1) if n[:k] in needles) for n in needles}


def _needles_in(low_line: str) -> frozenset[str]:
    pattern, prefixes = _needle_index()
    found: set[str] = set()
    for n in pattern.findall(low_line):
        found |= prefixes[n]
    return frozenset(found)


@lru_cache(maxsize=4096)
def _line_plan(fclass: str, found: frozenset[str]
               ) -> tuple[tuple[_Rule, ...], tuple[_DsPlugin, ...]]:
    """The line rules and detect-secrets plugins that can fire on a line of a ``fclass`` file
    holding the needles ``found``, in their order: the same for every such line, so the ~90 needle
    tests are made once per needle set, not once per line. Regex gates still run per line."""
    rules = tuple(r for r in _line_rules() if (r.classes is None or fclass in r.classes)
                  and (r.needle_set is None or not found.isdisjoint(r.needle_set)))
    plugins = tuple(ds for ds in _ds_plugins()
                    if ds.needles is None or not found.isdisjoint(ds.needles))
    return rules, plugins


def _line_hits(line: str, low_line: str, start: int, fclass: str, path: str, lock_file: bool,
               lo: int = 0, hi: int | None = None, joined: bool = False) -> list[_Hit]:
    """Every line rule's and detect-secrets plugin's spans on one line, offset by ``start``;
    ``lo``/``hi``: only in this window of the line (its context still the whole line: a match
    that reaches the window's end is matched again on the line, so a cut never makes one up).
    ``joined``: a line made by joining literals: no entropy plugin (two unrelated strings joined,
    ``"i-1234567890abcdef0" "InstanceType"`` in a JSON example, read as random)."""
    hi = len(line) if hi is None else hi
    cut = hi < len(line)
    hits: list[_Hit] = []
    rules, plugins = _line_plan(fclass, _needles_in(low_line[lo:hi] if lo or cut else low_line))
    if joined:
        plugins = tuple(p for p in plugins if "Entropy" not in p.secret_type)
    for rule in rules:
        if rule.prefilter is not None and not rule.prefilter.search(line, lo, hi):
            continue
        for m in _matches(rule, line, low_line, lo, hi):
            if rule.accept is not None and not rule.accept(m, line):
                continue
            a, b = m.span(rule.group)
            if b <= a:
                continue
            kind = rule.kind_of(m) if rule.kind_of is not None else rule.kind
            hits.append(_Hit(start + a, start + b, kind, rule.generic))
    if hi - lo <= _LONG_LINE:
        window = line[lo:hi] if lo or cut else line
        hits.extend(_ds_hits(window, low_line[lo:hi] if lo or cut else low_line, plugins, start + lo, path,
                             lock_file, fclass == "code"))
    return hits


_REACH = 2000  # a long line is scanned this far around each trigger: every rule's match is shorter
_NEEDLE_BEFORE, _NEEDLE_AFTER = 400, 800  # where a rule's match can start and end around its needle


def _matches(rule: _Rule, line: str, low_line: str, lo: int, hi: int) -> Iterator[re.Match[str]]:
    """``rule``'s matches in ``line[lo:hi]``. In a large window (a long line full of secret words)
    only around the rule's needles: each match holds one within its first few hundred characters,
    and the rules that start with a name (up to 40 characters before ``password``) are tried at
    every position, ~0.5 s a MB each. A match that reaches a stretch's end is matched again on the
    whole line."""
    stretches = [(lo, hi)]
    if hi - lo > 4 * _REACH and rule.gate is not None:
        stretches = []
        for n in rule.gate.finditer(low_line, lo, hi):
            a, b = max(lo, n.start() - _NEEDLE_BEFORE), min(hi, n.end() + _NEEDLE_AFTER)
            if stretches and a <= stretches[-1][1]:
                stretches[-1] = (stretches[-1][0], max(stretches[-1][1], b))
            else:
                stretches.append((a, b))
    for a, b in stretches:
        if rule.prefilter is not None and len(stretches) > 1 and not rule.prefilter.search(line, a, b):
            continue
        for m in rule.pattern.finditer(line, a, b):
            if b < len(line) and m.end() == b:
                again = rule.pattern.match(line, m.start())
                if again is None:
                    continue
                m = again
            yield m


def _windows(line: str, low_line: str) -> list[tuple[int, int]]:
    """The stretches of a long line (minified code, data on one line) worth scanning: around each
    place a trigger fires, merged. Every rule scanned the whole line before, for each line: a 5 MB
    line cost 30 s."""
    spots = [t.start() for t in _trigger_spots(line, low_line)]
    out: list[tuple[int, int]] = []
    for at in spots:
        a, b = max(0, at - _REACH), min(len(line), at + _REACH)
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _raw_hits(text: str, path: str, only: set[int] | None = None) -> list[_Hit]:
    """Every rule's spans, overlapping; ``only``: the line rules look at just the lines starting
    at these offsets (a rescan after scrubbing: other lines did not change)."""
    fclass = _file_class(path)
    lock_file = PurePosixPath(path.replace("\\", "/")).name.lower() in _LOCK_FILES
    low = text.lower()
    if len(low) != len(text):  # a few non-ASCII letters change length when lower-cased
        low = text.translate(_ASCII_LOWER)
    hits: list[_Hit] = []
    for start, end in _candidate_lines(text, low):
        if only is not None and start not in only:
            continue
        line, low_line = text[start:end], low[start:end]
        if end - start <= 2 * _REACH:
            hits.extend(_line_hits(line, low_line, start, fclass, path, lock_file))
            continue
        for lo, hi in _windows(line, low_line):
            hits.extend(_line_hits(line, low_line, start, fclass, path, lock_file, lo, hi))
    hits.extend(_pem_hits(text))
    hits.extend(_k8s_hits(text))
    hits.extend(_terraform_hits(text))
    hits.extend(_table_hits(text))
    hits.extend(_name_value_hits(text))
    if path.lower().endswith((".csv", ".tsv")):
        hits.extend(_csv_hits(text))
    if only is None:  # not on a rescan: the chains were joined and scanned the first time
        hits.extend(_split_literal_hits(text, lambda line: _line_hits(
            line, line.lower() if line.isascii() else line.translate(_ASCII_LOWER), 0, fclass, path,
            lock_file, joined=True)))
    return hits


def _trim(text: str, hit: _Hit) -> _Hit | None:
    """Spans never start or end on whitespace, so a replacement can not join two line breaks."""
    a, b = hit.start, hit.end
    while a < b and text[a].isspace():
        a += 1
    while b > a and (text[b - 1].isspace()
                     or text[b - 1] == "\\" and b < len(text) and text[b] in "\"'`"):
        b -= 1  # and not on the backslash of an escaped closing quote (code inside JSON)
    if b <= a or _MARK_HEAD in text[a:b]:
        return None
    return _Hit(a, b, hit.kind, hit.generic)


_RANK = {"high_entropy": 1, "url_credentials": 2, "credential": 3, "password": 4}


def _merge(hits: list[_Hit]) -> list[_Hit]:
    """Overlapping spans become one; it is named after its widest specific (provider) hit."""
    merged: list[tuple[int, int, list[_Hit]]] = []
    for h in sorted(hits, key=lambda h: (h.start, -h.end)):
        if merged and h.start < merged[-1][1]:
            a, b, group = merged[-1]
            group.append(h)
            merged[-1] = (a, max(b, h.end), group)
        else:
            merged.append((h.start, h.end, [h]))
    out = []
    for a, b, group in merged:
        best = max(group, key=lambda h: (not h.generic, h.end - h.start, _RANK.get(h.kind, 0)))
        out.append(_Hit(a, b, best.kind, best.generic))
    return out


def _hits(text: str, path: str, only: set[int] | None = None) -> list[_Hit]:
    if not text:
        return []
    return _merge([t for t in (_trim(text, h) for h in _raw_hits(text, path, only))
                   if t is not None])


def _findings(text: str, hits: list[_Hit]) -> tuple[Finding, ...]:
    out: list[Finding] = []
    line, pos = 1, 0
    for h in hits:  # in order: count line breaks between consecutive findings only
        line += text.count("\n", pos, h.start)
        pos = h.start
        out.append(Finding(h.kind, h.start, h.end, line))
    return tuple(out)


def scan(text: str, path: str = "") -> list[Finding]:
    """Where the secrets in ``text`` are (non-overlapping, in order). ``path`` picks the rules
    that fit the file (``.py``: no unquoted ``password = x``; ``.env``/yaml/ini: yes)."""
    return list(_findings(text, _hits(text, path)))


def _replacement(span: str, kind: str, line_goes_on: bool) -> str:
    """``[REDACTED:kind]`` that keeps every line break of the span (a PEM block stays as many
    lines). A line body is only dropped where that changes nothing else: never right after a lone
    ``\r`` (``\r`` and ``\n`` would fuse), nor on the span's last line when the text goes on there
    or ends there (the line would vanish, or its rest would start a line and read differently)."""
    mark = MARK.format(kind)
    if not any(ch in _BREAKS for ch in span):
        return mark
    pieces = span.splitlines(keepends=True)
    out: list[str] = []
    prev_end = ""
    for i, piece in enumerate(pieces):
        body = piece.rstrip("".join(_BREAKS))
        ending = piece[len(body):]  # "\r\n" is one break to splitlines: keep it as it was
        last_line = line_goes_on and i == len(pieces) - 1 and not ending
        keep = i == 0 or bool(body) and (prev_end.endswith("\r") or last_line)
        out.append((mark if keep else "") + ending)
        prev_end = ending
    return "".join(out)


def _render(text: str, hits: list[_Hit]) -> tuple[str, list[tuple[int, int, int, int]]]:
    """The scrubbed text, and where each replacement landed: (new start, new end, old start,
    old end), to map spans found in the output back onto the input."""
    parts: list[str] = []
    layout: list[tuple[int, int, int, int]] = []
    pos = size = 0
    for h in hits:
        parts.append(text[pos:h.start])
        size += h.start - pos
        goes_on = h.end == len(text) or text[h.end] not in _BREAKS
        rep = _replacement(text[h.start:h.end], h.kind, goes_on)
        parts.append(rep)
        layout.append((size, size + len(rep), h.start, h.end))
        size += len(rep)
        pos = h.end
    parts.append(text[pos:])
    return "".join(parts), layout


def _to_input(pos: int, layout: list[tuple[int, int, int, int]], starts: list[int], end: bool) -> int:
    """An offset in the scrubbed text as an offset in the input (inside a marker: its span);
    ``starts``: the layout's new starts, made once per layout (once per offset was quadratic)."""
    i = (bisect.bisect_left(starts, pos) if end else bisect.bisect_right(starts, pos)) - 1
    if i < 0:
        return pos
    _, new_end, old_start, old_end = layout[i]
    if pos < new_end:
        return old_end if end else old_start
    return old_end + (pos - new_end)


def _line_starts(text: str, positions: list[int]) -> set[int]:
    """The starts of the lines holding ``positions`` (ascending): each stretch of text between two
    positions is searched once (a search back to the line's start for each was quadratic on a long
    line with many secrets)."""
    starts: set[int] = set()
    start = prev = 0
    for at in positions:
        nl = text.rfind("\n", prev, at)
        if nl >= 0:
            start = nl + 1
        starts.add(start)
        prev = max(prev, at)
    return starts


def scrub(text: str, path: str = "") -> Scrubbed:
    """``text`` with each secret value replaced by ``[REDACTED:kind]``, same number of lines.

    A replacement can give a neighbour new context (``Bearer abc==ghp_...``: once the token is a
    marker, ``abc==`` reads as a bearer token), so the output is scanned again and anything new is
    added, until nothing is: scrubbing the result again changes nothing."""
    hits = _hits(text, path)
    if not hits:
        return Scrubbed(text, ())
    out, layout = _render(text, hits)
    for _ in range(4):
        # only lines holding a marker changed (others are as they were, or emptied): rescan those
        marked = _line_starts(out, [at for row in layout for at in (row[0], row[1])])
        extra = _hits(out, path, marked)
        if not extra:
            break
        starts = [row[0] for row in layout]
        hits = _merge(hits + [_Hit(_to_input(h.start, layout, starts, False), _to_input(h.end, layout, starts, True),
                                   h.kind, h.generic) for h in extra])
        out, layout = _render(text, hits)
    return Scrubbed(out, _findings(text, hits))
