"""What a request keeps of a strategy's candidates: filters, levels of detail, a trim before packing.

The whole assembly (request → strategy → these → privacy → pack) is :mod:`acms.service.assembly`.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import replace

from pyoxigraph import NamedNode

from acms.assembly.copies import collapse_copies
from acms.assembly.model import Candidate
from acms.assembly.protocol import RenderRequest
from acms.errors import UsageError
from acms.index.tokenize import search_terms
from acms.ingest.walker import language_for
from acms.retrieval.search import Searcher
from acms.sparql import catalog
from acms.tokens import count_many, estimate
from acms.vocab import PREFIXES

ATOMIC_CONTEXT = 3  # lines either side of the best keyword line


def _class_iri(name: str, prefixes: Mapping[str, str] = PREFIXES) -> str:
    """``uko:Function``, ``Function``, an extension's ``api:Endpoint`` (prefixes of loaded extensions) or an IRI."""
    if name.startswith(("http://", "https://")):
        return name
    prefix, sep, local = name.partition(":")
    if sep and prefix in prefixes:
        return prefixes[prefix] + local
    if sep:
        raise UsageError(f"unknown prefix in class {name!r}; known: {', '.join(sorted(prefixes))}")
    return PREFIXES["uko"] + name


def _class_members(searcher: Searcher, classes: tuple[str, ...], cands: list[Candidate]) -> set[str]:
    """The candidates' entities that are instances of the classes or their subclasses (extension classes
    too: a handler typed ``api:Endpoint`` by a rule is still a ``uko:Function`` candidate)."""
    from acms.ontology.service import store_prefixes

    prefixes = store_prefixes(searcher.store)
    iris = [NamedNode(_class_iri(c, prefixes)) for c in classes]
    entities = sorted({c.entity for c in cands if c.entity.startswith(("http://", "https://"))})
    if not entities:
        return set()
    rows = searcher.store.select(catalog.text("ontology/entities-of-class"),
                                 {"entity": [NamedNode(e) for e in entities], "class": iris})
    return {r["entity"].value for r in rows}


def _allowed_kinds(searcher: Searcher, classes: tuple[str, ...]) -> set[str]:
    iris = [NamedNode(_class_iri(c)) for c in classes]
    rows = searcher.store.select(catalog.text("strategies/subclasses"), {"class": iris})
    return {r["sub"].value.rsplit("#", 1)[-1].rsplit("/", 1)[-1] for r in rows} | {
        i.value.rsplit("#", 1)[-1] for i in iris
    }


def apply_filters(cands: list[Candidate], request: RenderRequest, searcher: Searcher) -> list[Candidate]:
    f = request.filters
    out = collapse_copies(cands, searcher.store)  # one copy of the code, marked files after source
    if f.paths:
        out = [c for c in out if any(fnmatch.fnmatch(c.path, g) for g in f.paths)]
    if f.languages:
        out = [c for c in out if language_for(c.path) in f.languages]
    if f.classes:
        uko_classes = tuple(c for c in f.classes if c.startswith(("uko:", PREFIXES["uko"])) or ":" not in c)
        kinds = _allowed_kinds(searcher, uko_classes) if uko_classes else set()
        members = _class_members(searcher, f.classes, out)
        out = [c for c in out if c.kind in kinds or c.entity in members]
    if f.tiers:
        out = [c for c in out if c.tier in f.tiers]
    if f.min_score is not None:
        out = [c for c in out if c.score >= f.min_score]
    out = sorted(out, key=lambda c: (-c.score, c.fragment))
    if f.k:
        out = out[: f.k]
    return out


def atomic(c: Candidate, terms: set[str]) -> Candidate:
    """A few lines around the line with the most query-term hits."""
    lines = c.text.splitlines()
    if len(lines) <= 2 * ATOMIC_CONTEXT + 1:
        return replace(c, lod="atomic", fragment=c.fragment + "#atomic")
    hits = [sum(t in terms for t in search_terms(line)) for line in lines]
    best = max(range(len(lines)), key=lambda i: (hits[i], -i))
    lo, hi = max(0, best - ATOMIC_CONTEXT), min(len(lines), best + ATOMIC_CONTEXT + 1)
    return replace(c, lod="atomic", text="\n".join(lines[lo:hi]), start_line=c.start_line + lo,
                   end_line=c.start_line + hi - 1, fragment=f"{c.fragment}#atomic-{lo}")


def apply_lod(cands: list[Candidate], request: RenderRequest) -> list[Candidate]:
    wanted = set(request.lod)
    if not wanted:
        return cands
    terms = set(search_terms(request.intent))
    out = []
    for c in cands:
        if c.lod in wanted:
            out.append(c)
        elif "atomic" in wanted and c.lod == "micro":
            out.append(atomic(c, terms))
    return out


# One body may take at most this share of the budget (the best-ranked one ``FIRST_SHARE``); a longer
# one is shown as its excerpt: the contiguous lines with the most task words that fit that share.
# A 4,200-token function (attrs' ``attrs()``, mostly docstring) took half of an 8,000-token context
# and left room for eight other entities; its excerpt points at the same place.
BODY_SHARE = 0.25
FIRST_SHARE = 0.5
MIN_EXCERPT = 200  # tokens: a smaller share is no excerpt (tiny budgets are the packer's truncation's job)


def _best_span(costs: list[int], hits: list[int], limit: int) -> tuple[int, int]:
    """``[lo, hi)``: the run of lines costing at most ``limit`` with the most hits (earliest on a tie)."""
    best, lo, total, cost = (-1, 0, 0), 0, 0, 0
    for hi in range(len(costs)):
        total, cost = total + hits[hi], cost + costs[hi]
        while cost > limit and lo < hi:
            total, cost, lo = total - hits[lo], cost - costs[lo], lo + 1
        if cost <= limit and total > best[0]:
            best = (total, lo, hi + 1)
    return (best[1], best[2]) if best[0] >= 0 else (0, 1)


def excerpt(c: Candidate, terms: set[str], max_tokens: int) -> Candidate:
    """``c`` whole if it costs at most ``max_tokens``, else its lines with the most task words that do."""
    if max_tokens < MIN_EXCERPT or len(c.text) <= 2 * max_tokens:  # ≥ 2 characters a token: it fits
        return c
    lines = c.text.split("\n")
    costs = [n + 1 for n in count_many(lines)]  # one lookup of the encoder for a body's ~100 lines
    if sum(costs) <= max_tokens:
        return c
    hits = [sum(t in terms for t in search_terms(line)) for line in lines]
    lo, hi = _best_span(costs, hits, max_tokens)
    start, end = c.start_line + lo, c.start_line + hi - 1
    return replace(c, text="\n".join(lines[lo:hi]), start_line=start, end_line=end,
                   fragment=f"{c.fragment}#lines-{lo}-{hi}",
                   reason=f"{c.reason}; excerpt, lines {start}-{end} of {c.start_line}-{c.end_line}".lstrip("; "))


def excerpts(cands: list[Candidate], request: RenderRequest) -> list[Candidate]:
    """Bodies longer than their share of the budget as excerpts (see ``BODY_SHARE``)."""
    terms = set(search_terms(request.intent))
    order = sorted(range(len(cands)), key=lambda i: (-cands[i].score, cands[i].fragment))
    first = order[0] if order else -1
    return [excerpt(c, terms, int(request.tokens_max * (FIRST_SHARE if i == first else BODY_SHARE)))
            if c.lod == "micro" else c for i, c in enumerate(cands)]


TRIM_FACTOR = 3  # candidates kept before privacy and packing: about this many budgets of text


def trim(cands: list[Candidate], budget: int) -> list[Candidate]:
    """Best candidates up to ~3 budgets of text (≈4 chars a token): redaction and packing cost per
    candidate, and the packer could never use the tail anyway."""
    out, total = [], 0.0
    for c in sorted(cands, key=lambda c: (-c.score, c.fragment)):
        if total > TRIM_FACTOR * budget and len(out) >= 10:
            break
        out.append(c)
        total += estimate(c.text, 20)
    return out
