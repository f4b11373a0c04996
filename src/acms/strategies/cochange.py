"""The walk's co-change edge: the files that change with the starts' files in history, and what to show of them.

Files that the same commits changed belong together in a way no call or import edge shows: a handler
and its schema, a function and its test, code and the documentation it must keep in step with. With
``acms index --history N`` the cold tier holds each commit (``uko:Change``) and what it touched
(``uko:touches``: files, and the classes, functions and methods whose lines its hunks hit). Over those
commits the edge is an association rule from a start's file F to another file G:

- **support**: the commits that changed both; a pair seen fewer than ``cochange_min_support`` times
  is chance;
- **confidence**: support / the commits that changed F, the share of F's changes that also changed G
  (P(G | F)); the edge scores ``start's score x cochange x decay x confidence``, a one-hop edge like
  the structural ones (``cochange.rq``);
- commits that changed more than ``cochange_max_files`` current files are left out of both counts
  (``cochange-commits.rq``): a formatting run, a vendored tree or a mass rename changes everything
  together and would tie every file to every other.

The ``cochange_files`` best files per start file are kept. What an agent needs from such a file is not
all of it but the part that moves with the start: the definitions of G that the shared commits touched,
the most often touched first (``cochange_definitions`` per file), each scored by its own confidence
(the commits that changed F and touched it / F's commits). That rule needs no knowledge of the
language or the project, only the per-definition touches history ingest records for every language
with symbols; a file whose shared commits touched no definition (a README, a config file) brings
nothing and does not take one of the ``cochange_files`` places (on acms's own history the files that
change most with the walk's code are its ``.rq`` queries and ``strategy.toml``). The walk shows what
this reaches as it shows one hop: signatures and one-line references.

Without history both queries find nothing (the first one returns no rows and the second is not run),
and the walk's result is what it is without the edge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode

from acms.store.protocol import GraphStore
from acms.vocab import XSD


@dataclass(frozen=True)
class CoChangeOptions:
    """The edge's data (``cochange*`` keys of the ``expand`` phase)."""

    weight: float
    max_files: int
    min_support: int
    files: int
    definitions: int


@dataclass(frozen=True)
class CoChanged:
    """A definition reached over the edge: its score and why (for the fragment's reason)."""

    entity: str
    score: float
    why: str


def _double(value: float) -> Literal:
    return Literal(repr(float(value)), datatype=XSD.double)


def _integer(value: int) -> Literal:
    return Literal(str(int(value)), datatype=XSD.integer)


@dataclass(frozen=True)
class _Pair:
    other: str
    support: int
    score: float
    touched: Counter[str]


def co_changed(store: GraphStore, query: Callable[[str], str], starts: Mapping[str, float], decay: float,
               opts: CoChangeOptions) -> list[CoChanged]:
    """The definitions the edge reaches from ``starts`` (entity -> the walk's score for it), best first."""
    if not starts or opts.weight <= 0 or opts.files <= 0:
        return []
    rows = store.select(query("cochange-commits.rq"), {
        "node": [NamedNode(e) for e in sorted(starts)], "maxFiles": _integer(opts.max_files)})
    if not rows:
        return []
    score_of: dict[str, float] = {}
    commits: dict[str, set[str]] = {}
    path_of: dict[str, str] = {}
    for r in rows:
        f = r["file"].value
        path_of[f] = r["path"].value
        score_of[f] = max(score_of.get(f, 0.0), starts[r["node"].value])
        commits.setdefault(f, set()).add(r["change"].value)
    files = sorted(commits)
    found = store.select(query("cochange.rq"), {
        "file fileScore total": [(NamedNode(f), _double(score_of[f]), _integer(len(commits[f]))) for f in files],
        "file change": [(NamedNode(f), NamedNode(c)) for f in files for c in sorted(commits[f])],
        "weight": _double(opts.weight), "decay": _double(decay), "minSupport": _integer(opts.min_support)})
    by_file: dict[str, list[_Pair]] = {}
    for r in found:
        by_file.setdefault(r["file"].value, []).append(_Pair(
            r["other"].value, int(r["support"].value), float(r["score"].value), Counter(r["touched"].value.split())))
    out: list[CoChanged] = []
    for f in files:
        # only files the shared commits touched a definition of: the walk shows definitions
        pairs = [p for p in by_file.get(f, []) if p.touched]
        for pair in sorted(pairs, key=lambda p: (-p.score, -p.support, p.other))[: opts.files]:
            why = f"changes with {path_of[f]} ({pair.support} of {len(commits[f])} commits)"
            for entity, n in sorted(pair.touched.items(), key=lambda kv: (-kv[1], kv[0]))[: opts.definitions]:
                # n / support of the pair's score: the definition's own confidence, P(entity | file)
                out.append(CoChanged(entity, pair.score * min(n, pair.support) / pair.support, why))
    return sorted(out, key=lambda c: (-c.score, c.entity))
