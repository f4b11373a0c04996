"""One copy of the code in a context: copies give way to their originals, marked files to source.

Ingest records each near-identical copy of a file as ``copy uko:copyOf original`` and the files that
``.gitattributes`` marks generated or vendored (:mod:`acms.ingest.copies`). This module is the one place
retrieval uses that: every strategy's candidates pass through it before the request's filters
(``apply_filters``), and ``acms search``'s hits after the Searcher (``Assembler.search``), so no engine
(first stage, keyword, vectors, the graph walk) needs to know.

- A copy's candidate is replaced by the same entity in the original (same short name, class and level of
  detail; the one nearest the copy's lines), with the copy's score when that is higher; a copy whose
  original has no such entity drops out. The original's best candidate names the copies in one line
  (``Candidate.copies``, rendered under its header).
- Candidates from files marked generated or vendored come after every other candidate (their order among
  themselves kept): they are in the index, but they never outrank the project's own source.
"""

from __future__ import annotations

from dataclasses import replace
from posixpath import basename

from pyoxigraph import Literal, NamedNode

from acms.assembly.model import Candidate
from acms.retrieval.search import Hit, SearchResult
from acms.sparql import catalog
from acms.store.protocol import GraphStore
from acms.vocab import UKO, XSD

__all__ = ["MARKED_SHARE", "collapse_copies", "collapse_search"]

MARKED_SHARE = 0.5  # a marked file's best candidate scores this share of the lowest unmarked one
_UNNAMED_KINDS = frozenset({"File"})  # its uko:name is the file's own name, not the copy's


def _short(c: Candidate, original: str) -> str:
    if c.kind in _UNNAMED_KINDS:
        return basename(original)
    if c.kind == "DocSection":
        return c.name
    return c.name.rsplit(".", 1)[-1]


def collapse_copies(cands: list[Candidate], store: GraphStore, stood_for: dict[str, str] | None = None
                    ) -> list[Candidate]:
    """``cands`` with copies replaced by their originals and marked files after source (see above);
    ``stood_for`` is given the original fragment each copy's fragment gave way to, when it is new."""
    paths = sorted({c.path for c in cands})
    if not paths or not store.ask(catalog.text("copies/any")):  # most projects: one look at an index
        return cands
    original_of: dict[str, str] = {}
    copies_of: dict[str, list[str]] = {}
    marked: set[str] = set()
    for r in store.select(catalog.text("copies/among"), {"path": [Literal(p) for p in paths]}):
        path, role = r["path"].value, r["role"].value
        if role == "original":
            original_of[path] = r["other"].value
        elif role == "copy":
            copies_of.setdefault(path, []).append(r["other"].value)
        else:
            marked.add(path)
    if not original_of and not copies_of and not marked:
        return cands
    out = _to_originals(cands, original_of, store, stood_for) if original_of else list(cands)
    out = _name_copies(out, copies_of)
    return _after_source(out, marked) if marked else out


def _to_originals(cands: list[Candidate], original_of: dict[str, str], store: GraphStore,
                  stood_for: dict[str, str] | None) -> list[Candidate]:
    keep = [c for c in cands if c.path not in original_of]
    copies = [c for c in cands if c.path in original_of]
    keys = sorted({(original_of[c.path], _short(c, original_of[c.path]), c.kind, c.lod, c.start_line) for c in copies})
    rows = store.select(catalog.text("copies/counterparts"), {"path short class lod near": [
        (Literal(p), Literal(s), NamedNode(UKO[k].value), Literal(lod), Literal(str(n), datatype=XSD.integer))
        for p, s, k, lod, n in keys]})
    found: dict[tuple[str, str, str, str, int], Candidate] = {}
    for r in rows:
        key = (r["path"].value, r["short"].value, r["class"].value.rsplit("#", 1)[-1], r["lod"].value,
               int(r["near"].value))
        if key in found:  # ordered nearest first
            continue
        found[key] = Candidate(
            fragment=r["frag"].value, entity=r["entity"].value, name=r["name"].value,
            kind=r["kind"].value.rsplit("#", 1)[-1], lod=r["lod"].value, text=r["text"].value, path=key[0],
            start_line=int(r["start"].value), end_line=int(r["end"].value), score=0.0, strategy="",
            reason="", tier=r["tier"].value.rsplit("/", 1)[-1])
    index = {c.fragment: i for i, c in enumerate(keep)}
    for c in copies:
        original = original_of[c.path]
        twin = found.get((original, _short(c, original), c.kind, c.lod, c.start_line))
        if twin is None:
            continue  # nothing in the original stands for it: the copy does not take a place
        at = index.get(twin.fragment)
        if at is None:
            if stood_for is not None:
                stood_for[twin.fragment] = c.fragment
            index[twin.fragment] = len(keep)
            keep.append(replace(twin, score=c.score, strategy=c.strategy,
                                reason=f"{c.reason}; in place of its copy {c.path}".lstrip("; ")))
        elif keep[at].score < c.score:
            keep[at] = replace(keep[at], score=c.score)
    return keep


def _name_copies(cands: list[Candidate], copies_of: dict[str, list[str]]) -> list[Candidate]:
    """The best candidate of each original names its copies (once a file, not on every entry)."""
    best: dict[str, int] = {}
    for i, c in enumerate(cands):
        if c.path in copies_of and (c.path not in best or (-c.score, c.fragment) < (-cands[best[c.path]].score,
                                                                                  cands[best[c.path]].fragment)):
            best[c.path] = i
    out = list(cands)
    for path, i in best.items():
        names = tuple(sorted(copies_of[path]))
        out[i] = replace(out[i], copies=names, reason=f"{out[i].reason}; copies: {', '.join(names)}".lstrip("; "))
    return out


def _after_source(cands: list[Candidate], marked: set[str]) -> list[Candidate]:
    source = [c.score for c in cands if c.path not in marked]
    top = max((c.score for c in cands if c.path in marked), default=0.0)
    if not source or top <= 0:
        return cands
    floor = min(source)
    if top < floor:
        return cands
    scale = MARKED_SHARE * floor / top if floor > 0 else 0.0
    return [replace(c, score=c.score * scale, reason=f"{c.reason}; marked generated or vendored".lstrip("; "))
            if c.path in marked else c for c in cands]


def collapse_search(result: SearchResult, store: GraphStore) -> SearchResult:
    """``acms search``'s hits by the same rule: a copy's hit gives way to the original's same entity (with
    the copy's scores when that is new), marked files come last."""
    if not result.hits:
        return result
    hits = {h.fragment: h for h in result.hits}
    cands = [Candidate(fragment=h.fragment, entity=h.entity, name=h.name, kind=h.kind, lod=h.lod, text=h.text,
                       path=h.path, start_line=h.start_line, end_line=h.end_line, score=h.score, strategy="search",
                       reason="", tier=h.tier) for h in result.hits]
    stood_for: dict[str, str] = {}
    out = collapse_copies(cands, store, stood_for)
    if out is cands:
        return result
    collapsed = []
    for c in sorted(out, key=lambda c: (-c.score, c.fragment)):
        was = hits.get(c.fragment) or hits[stood_for[c.fragment]]
        collapsed.append(Hit(fragment=c.fragment, entity=c.entity, kind=c.kind, name=c.name, lod=c.lod, path=c.path,
                             start_line=c.start_line, end_line=c.end_line, text=c.text, tier=c.tier,
                             keyword=was.keyword, vector=was.vector, score=c.score))
    return replace(result, hits=collapsed)
