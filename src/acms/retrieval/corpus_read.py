"""The rows of ``search/corpus.rq`` (bar the vectors), streamed, unordered, without its OPTIONALs.

Why: the derived caches read every searchable fragment with its owner's names and its
place. As one query, the OPTIONALs and ORDER BY took ~13 s on a standard library's index and Oxigraph
held the optional parts' solutions (memory growing with the project); as three queries joined in
Python (fragments, owners' names, places), dicts of every name and place were held (~90 MB a standard
library, ~0.35 GB at four) and built at ~20 µs a row. Here:

1. ``search/corpus-full.rq``: the rows whose owner has a name and a qualified name and whose fragment
   has a place (all but a few: 71,160 of 73,185 on a standard library), joined by Oxigraph, streamed;
2. ``search/corpus-keys.rq``: one row per (fragment, owner, graph) solution of the required part; a
   fragment that (1) did not give is read with ``search/corpus-some.rq`` bound to it (the OPTIONALs
   over a few fragments). A fragment with several such solutions of which (1) may have given only some
   is read again whole the same way, and its rows from (1) are to be ignored (``CorpusReader.dropped``).

``tests/retrieval/test_corpus_rows.py`` checks that the rows are the query's, these cases included.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from pyoxigraph import NamedNode

from acms.sparql import catalog
from acms.store.protocol import GraphStore, SupportsStreamingSelect

__all__ = ["BOUND_AT_ONCE", "CorpusReader", "CorpusRow", "saved_count"]

BOUND_AT_ONCE = 500  # solutions bound into one search/corpus-some.rq query


class CorpusRow(NamedTuple):
    """One row of ``search/corpus.rq`` (bar the vector): None where the query leaves a variable unbound."""

    frag: str
    text: str
    name: str | None
    qn: str | None
    start: int | None
    end: int | None
    file: str | None


class CorpusReader:
    """Iterate ``rows()`` once; then the first ``full`` rows whose fragment is in ``dropped`` are to be
    ignored (the fragment's every row came again after them)."""

    def __init__(self, store: GraphStore, then: Callable[[], object] | None = None,
                 full: Iterable[CorpusRow] | None = None, ask: Iterable[str] | None = None) -> None:
        """``then()`` is called once the rows of ``search/corpus-full.rq`` are given (a progress step).
        ``full``: rows known otherwise (a first index's spill, :mod:`acms.retrieval.corpus_spill`), each
        its fragment's only row, read in place of that query; the fragments it lacks come as ever, or,
        with ``ask`` (the spill is known to hold every other fragment's row), only those it names."""
        self.store = store
        self._then = then or (lambda: None)
        self._full = full
        self._ask = ask
        self.full = 0
        self.dropped: set[str] = set()

    def rows(self) -> Iterator[CorpusRow]:
        seen: dict[str, bool] = {}  # fragment given by corpus-full -> one corpus-keys solution of it met
        files: dict[str, str] = {}  # one string per file IRI, shared by its fragments' rows
        for row in self._full_rows():
            if self._ask is None:
                seen[row.frag] = False
            self.full += 1
            yield row._replace(file=files.setdefault(row.file, row.file))
        self._then()
        if self._ask is not None:  # no search/corpus-keys.rq: ~2-5 s a standard library
            named = [NamedNode(frag) for frag in self._ask]
            for start in range(0, len(named), BOUND_AT_ONCE):
                yield from self._some({"frag": named[start : start + BOUND_AT_ONCE]}, files)
            return
        rest: dict[str, Any] = {}  # fragments corpus-full did not give (every solution of them missing)
        for r in self._solutions("search/corpus-keys"):
            frag = r["frag"].value
            met = seen.get(frag)
            if met is None:
                rest.setdefault(frag, r["frag"])
            elif met:
                self.dropped.add(frag)  # several solutions, some of them given: read it again, whole
            else:
                seen[frag] = True
        del seen
        # bound by fragment only: Oxigraph seeds the join with a one-variable VALUES block (500 fragments:
        # 0.07 s), not with one of (fragment, owner, graph) rows (3.8 s)
        again = [*rest.values(), *(NamedNode(frag) for frag in sorted(self.dropped))]
        for start in range(0, len(again), BOUND_AT_ONCE):
            yield from self._some({"frag": again[start : start + BOUND_AT_ONCE]}, files)

    def rows_of(self, frags: Iterable[str]) -> Iterator[CorpusRow]:
        """Every row of these fragments (``search/corpus-some.rq`` bound to them), whether or not
        ``search/corpus-full.rq`` would give it: what an update of the caches reads again."""
        named = [NamedNode(frag) for frag in frags]
        files: dict[str, str] = {}
        for start in range(0, len(named), BOUND_AT_ONCE):
            yield from self._some({"frag": named[start : start + BOUND_AT_ONCE]}, files)

    def _full_rows(self) -> Iterator[CorpusRow]:
        if self._full is not None:
            yield from self._full
            return
        for r in self._solutions("search/corpus-full"):
            yield CorpusRow(r["frag"].value, r["text"].value, r["name"].value, r["qn"].value, int(r["start"].value),
                            int(r["end"].value), r["file"].value)

    def _some(self, bindings: dict[str, Any], files: dict[str, str]) -> Iterator[CorpusRow]:
        for r in self._solutions("search/corpus-some", bindings):
            file = _value(r, "file")
            start, end = _value(r, "start"), _value(r, "end")
            yield CorpusRow(r["frag"].value, r["text"].value, _value(r, "name"), _value(r, "qn"),
                            None if start is None else int(start), None if end is None else int(end),
                            None if file is None else files.setdefault(file, file))

    def _solutions(self, name: str, bindings: dict[str, Any] | None = None) -> Iterable[Any]:
        """A saved SELECT's rows as a stream from a store that streams (no list of dicts of terms held),
        as ``select`` rows from any other."""
        if isinstance(self.store, SupportsStreamingSelect):
            return self.store.select_stream(catalog.text(name), bindings)
        return self.store.select(catalog.text(name), bindings)


def _value(row: Any, name: str) -> str | None:
    """A variable's value in a ``select`` row (dict, unbound: absent) or a pyoxigraph solution (unbound: None)."""
    term = row.get(name) if isinstance(row, dict) else row[name]
    return None if term is None else term.value


def saved_count(store: GraphStore, name: str) -> int:
    """The ``?n`` of a saved ``COUNT`` query (``embeddings/count-*.rq``)."""
    return int(store.select(catalog.text(name))[0]["n"].value)


class CountOnce:
    """A saved ``COUNT`` query's answer for one state of the store, asked once whichever thread wants it
    first (the others wait for it): the caches' update and the embedding beside it both need how many
    searchable fragments there are, a scan of ~20 ms a standard library."""

    def __init__(self, store: GraphStore, name: str) -> None:
        self.store, self.name = store, name
        self._lock = threading.Lock()
        self._n: int | None = None

    def __call__(self) -> int:
        with self._lock:
            if self._n is None:
                self._n = saved_count(self.store, self.name)
            return self._n
