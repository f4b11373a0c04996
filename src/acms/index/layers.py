"""A keyword index as a base on disk plus a small delta, scored at query time from the term counts.

Why: an update that recomputed every BM25 score (the corpus's size, average length and the changed
terms' document frequencies move with any edit) rewrote every postings file of the four keyword
indexes (a standard library's: ~70 MB) after a one-line edit. Here an update leaves the index it
started from as the *base* (its files are hard-linked into the new directory, never written again) and
writes a *delta*: which base document each current document is (``source`` >= 0) or which delta
document (``-1 - j``), the delta documents' (term, document, count) pairs and lengths, and the terms
first seen in them. A dead base document is one no ``source`` names; it still holds its pairs in the
base, which a query drops.

A query's scores are made for its terms only, from the counts: each term's live documents (its base
pairs of live documents, then its delta pairs), so its document frequency is a full build's, and every
pair's score is :func:`acms.index.postings.scores` of the term's :func:`~acms.index.postings.idfs` over
the live documents and their :func:`~acms.index.postings.norms`, taken over the live documents' lengths
in the current order (the array a full build takes its mean of). Each term's scores are added in query
order, each document once per term, in float32, as ``Postings.get_scores_from_ids`` adds a full
build's: the same bits (``tests/index/test_layers.py``).

When the delta and the dead documents pass ``MERGE_SHARE`` of the live documents, an update writes a
full base instead (:func:`acms.index.splice.spliced`), as the vector matrix compacts its tail.
"""

from __future__ import annotations

import json
import operator
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from acms.index.postings import idfs, norms, scores
from acms.index.string_column import StringColumn

if TYPE_CHECKING:
    from acms.index.keyword import Counts, Postings

__all__ = ["BASE_FILES", "MERGE_SHARE", "BaseFiles", "Delta", "GatheredIds", "Layered", "Positions", "positional"]

# Dead base documents and delta documents allowed, as a share of the live documents, before an update
# merges them into a new base: the share the vector matrix and the tokenised corpus allow. A query pays
# for the dead pairs it skips and the delta's scoring; a merge costs about one full write, which then
# comes only after changes worth a quarter of the corpus, so an update's amortised cost stays
# proportional to its size.
MERGE_SHARE = 0.25

# A base's files, relative to its index directory: linked, never written, by the updates layered on it.
BASE_FILES = ("ids.json", "ids.txt", "ids.positions", "ids.blob.npy", "ids.offsets.npy", "bm25/data.csc.index.npy",
              "bm25/indices.csc.index.npy", "bm25/indptr.csc.index.npy", "bm25/vocab.index.json", "bm25/params.index.json",
              "bm25/vocab.terms.blob.npy", "bm25/vocab.terms.offsets.npy", "bm25/vocab.terms.hashes.npy",
              "bm25/vocab.terms.order.npy", "counts/tf.npy",
              "counts/lengths.npy", "counts/numbers.npy", "counts/numbering.txt")


@dataclass(frozen=True)
class BaseFiles:
    """Where a base was loaded from, with each file's identity (device, inode) as it was before loading:
    a file is linked into a new directory only when the link is still that file (another process may have
    swapped a newer index into the directory meanwhile); otherwise the base is written from memory."""

    directory: Path
    stats: dict[str, tuple[int, int]]

    @classmethod
    def before_loading(cls, directory: Path) -> BaseFiles:
        stats = {}
        for name in BASE_FILES:
            try:
                st = os.stat(directory / name)
            except FileNotFoundError:
                continue
            stats[name] = (st.st_dev, st.st_ino)
        return cls(directory, stats)

    def link_into(self, target: Path) -> bool:
        """Every file linked into ``target`` (the same relative names), each still the file loaded; False
        (and nothing left in ``target``) when one cannot be."""
        made: list[Path] = []
        try:
            for name, identity in self.stats.items():
                path = target / name
                path.parent.mkdir(parents=True, exist_ok=True)
                os.link(self.directory / name, path)
                made.append(path)
                st = os.stat(path)
                if (st.st_dev, st.st_ino) != identity:
                    raise OSError(f"{self.directory / name} was replaced since it was loaded")
        except OSError:
            for path in made:
                path.unlink(missing_ok=True)
            return False
        return True


class Positions(Sequence[str]):
    """The ids ``"0"``, ``"1"``, … of ``n`` documents named by their position (the ranking index's
    windows), without a string each: an update of the windows' index made and compared 100k of them
    (~20 ms a standard library), and every load of it made them again."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [str(j) for j in range(*i.indices(self.n))]
        if not -self.n <= i < self.n:
            raise IndexError("position out of range")
        return str(i % self.n)

    def __iter__(self) -> Iterator[str]:
        return map(str, range(self.n))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Positions):
            return self.n == other.n
        if isinstance(other, (list, tuple)):
            return len(other) == self.n and all(a == b for a, b in zip(other, self))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Positions({self.n})"


class GatheredIds(Sequence[str]):
    """A layered index's current ids, each read where it is when asked for: document ``i``'s is the base's
    at ``source[i]`` when that is >= 0, else delta document ``-1 - source[i]``'s. A query reads the ids of
    a few hundred documents, while gathering them all into a list at every load of a standard library's
    fragment index (73k ids, with reading the base's) cost ~40 ms of each command and of a server's first
    answer after a refresh."""

    def __init__(self, base: Sequence[str], delta: Sequence[str], source: np.ndarray) -> None:
        self._base, self._delta, self._source = base, delta, source

    def __len__(self) -> int:
        return int(self._source.size)

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return self.take(np.arange(len(self))[i])
        n = len(self)
        i = operator.index(i)
        if not -n <= i < n:
            raise IndexError("document out of range")
        at = int(self._source[i % n])
        return self._base[at] if at >= 0 else self._delta[-1 - at]

    def take(self, rows: Sequence[int] | np.ndarray) -> list[str]:
        """The ids of ``rows``, those of the base read together where it is a column."""
        at = np.asarray(self._source, dtype=np.int64)[np.asarray(rows, dtype=np.int64)]
        out: list[Any] = [None] * at.size
        in_base = np.flatnonzero(at >= 0)
        base = self._base
        found = base.take(at[in_base]) if isinstance(base, StringColumn) else [base[k] for k in at[in_base].tolist()]
        for k, value in zip(in_base.tolist(), found):
            out[k] = value
        for k in np.flatnonzero(at < 0).tolist():
            out[k] = self._delta[-1 - int(at[k])]
        return out

    def tolist(self) -> list[str]:
        """Every id, gathered in C (a standard library's 73k in a few milliseconds, once decoded)."""
        source = np.asarray(self._source, dtype=np.int64)
        base = self._base.tolist() if isinstance(self._base, StringColumn) else self._base
        out = np.empty(source.size, dtype=object)
        live = source >= 0
        out[live] = np.asarray(base, dtype=object)[source[live]]
        out[~live] = np.asarray(list(self._delta), dtype=object)
        return out.tolist()  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[str]:
        return iter(self.tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == len(self) and self.tolist() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"GatheredIds({len(self)})"


def positional(ids: Sequence[str]) -> bool:
    """Whether ``ids`` are ``"0"``, ``"1"``, … (the documents named by their positions)."""
    if isinstance(ids, Positions):
        return True
    n = len(ids)
    return bool(n) and ids[0] == "0" and ids[-1] == str(n - 1) and all(a == b for a, b in zip(ids, Positions(n)))


@dataclass(frozen=True)
class Delta:
    """What an update adds to a base. ``source``: per current document, its position in the base (>= 0)
    or ``-1 - j`` for delta document ``j``; delta documents are numbered in their current order.
    ``terms`` (sorted) are the terms with delta pairs, ``indptr`` their runs in ``docs`` (delta document
    numbers, ascending within a run) and ``tf`` (the counts); ``lengths`` each delta document's length;
    ``added`` the terms the base does not hold, numbered after its terms, and ``numbers`` their token
    numbers in the base's numbering (-1 for none). ``ids``: the delta documents' ids, or None when the
    current ids are not the base's at ``source`` (then ``all_ids`` lists them, or ``positional`` says
    they are ``"0"``, ``"1"``, ...)."""

    source: np.ndarray
    lengths: np.ndarray
    terms: np.ndarray
    indptr: np.ndarray
    docs: np.ndarray
    tf: np.ndarray
    added: dict[str, int]
    numbers: np.ndarray
    ids: list[str] | None = None
    all_ids: list[str] | None = None
    positional: bool = False

    _ARRAYS = ("source", "lengths", "terms", "indptr", "docs", "tf", "numbers")
    _TYPES = (np.int32, np.int64, np.int64, np.int64, np.int32, np.int32, np.int64)

    @property
    def size(self) -> int:
        return int(self.lengths.size)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True)
        for name, dtype in zip(self._ARRAYS, self._TYPES):
            np.save(directory / f"{name}.npy", np.asarray(getattr(self, name), dtype=dtype))
        ids = {"added": self.added, "ids": self.ids, "all_ids": self.all_ids, "positional": self.positional}
        (directory / "delta.json").write_text(json.dumps(ids, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path, *, mmap: bool = True) -> Delta:
        mode = "r" if mmap else None
        arrays = {name: np.load(directory / f"{name}.npy", mmap_mode=mode, allow_pickle=False) for name in cls._ARRAYS}
        meta = json.loads((directory / "delta.json").read_text(encoding="utf-8"))
        return cls(**arrays, added={str(k): int(v) for k, v in meta["added"].items()}, ids=meta["ids"],
                   all_ids=meta["all_ids"], positional=bool(meta["positional"]))


class Layered:
    """A base's postings and counts with a delta over them: answers ``token_ids`` and
    ``get_scores_from_ids`` as :class:`acms.index.keyword.Postings` does, for the current documents."""

    def __init__(self, base: Postings, counts: Counts, base_ids: Sequence[str], delta: Delta,
                 files: BaseFiles | None = None) -> None:
        self.base, self.counts, self.base_ids, self.delta, self.files = base, counts, base_ids, delta, files
        self.params = base.params
        self.n_base_terms = int(len(base.scores["indptr"]) - 1)  # type: ignore[arg-type]
        self.n_terms = self.n_base_terms + len(delta.added)
        self._found: dict[str, int | None] = {}

    # -- what the current documents are -------------------------------------------------------------------
    @property
    def num_docs(self) -> int:
        return int(self.delta.source.size)

    @property
    def numbering(self) -> str:
        return self.counts.numbering

    @cached_property
    def now(self) -> np.ndarray:
        """Each base document's current position, -1 when dead."""
        source = np.asarray(self.delta.source, dtype=np.int64)
        out = np.full(len(self.base_ids), -1, dtype=np.int64)
        live = np.flatnonzero(source >= 0)
        out[source[live]] = live
        return out

    @cached_property
    def delta_now(self) -> np.ndarray:
        """Each delta document's current position."""
        return np.flatnonzero(np.asarray(self.delta.source) < 0)

    @cached_property
    def lengths(self) -> np.ndarray:
        """The current documents' lengths, in their order (int64)."""
        source = np.asarray(self.delta.source, dtype=np.int64)
        out = np.empty(source.size, dtype=np.int64)
        live = source >= 0
        out[live] = np.asarray(self.counts.lengths, dtype=np.int64)[source[live]]
        out[~live] = np.asarray(self.delta.lengths, dtype=np.int64)
        return out

    @cached_property
    def _norm(self) -> np.ndarray:
        k1, b = float(self.params.get("k1", 1.5)), float(self.params.get("b", 0.75))
        return norms(self.lengths, k1, b)

    def ids(self) -> Sequence[str]:
        """The current documents' ids."""
        delta = self.delta
        if delta.positional:
            return Positions(self.num_docs)
        if delta.all_ids is not None:
            return list(delta.all_ids)
        return GatheredIds(self.base_ids, delta.ids or [], delta.source)

    # -- terms --------------------------------------------------------------------------------------------
    @property
    def vocab_dict(self) -> dict[str, int]:
        """Every term's number (base terms, then the added ones), terms without a live document included."""
        return {**self.base.vocab_dict, **self.delta.added}

    def token_ids(self, terms: Iterable[str]) -> list[int]:
        """The numbers of those ``terms`` the base or the delta holds, in order (the base's vocabulary
        looked up unparsed, as ``Postings.token_ids`` does)."""
        return [i for i in self.term_ids(terms) if i is not None]

    def term_ids(self, terms: Iterable[str]) -> list[int | None]:
        """Each of ``terms``' number, None for a term neither the base nor the delta holds."""
        terms = list(terms)
        added, found = self.delta.added, self._found
        missing = [t for t in dict.fromkeys(terms) if t not in found and t not in added]
        if missing:
            for term, got in zip(missing, self.base.term_ids(missing)):
                found[term] = got
        return [added[t] if t in added else found[t] for t in terms]

    def document_frequencies(self) -> np.ndarray:
        """Every term's number of live documents (a pass over every base pair: for inspection and tests)."""
        indptr = np.asarray(self.base.scores["indptr"], dtype=np.int64)  # type: ignore[arg-type]
        live = self.now[np.asarray(self.base.scores["indices"], dtype=np.int64)] >= 0  # type: ignore[arg-type]
        running = np.concatenate([[0], np.cumsum(live, dtype=np.int64)])
        df = np.zeros(self.n_terms, dtype=np.int64)
        df[: self.n_base_terms] = running[indptr[1:]] - running[indptr[:-1]]
        df[np.asarray(self.delta.terms, dtype=np.int64)] += np.diff(np.asarray(self.delta.indptr, dtype=np.int64))
        return df

    # -- scores -------------------------------------------------------------------------------------------
    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The base's indptr, documents and counts as plain arrays (slices of a memory map cost a Python
        object each)."""
        scores_ = self.base.scores
        return (np.asarray(scores_["indptr"], dtype=np.int64), np.asarray(scores_["indices"]),  # type: ignore[arg-type]
                np.asarray(self.counts.tf))

    def pairs(self, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The live pairs of ``terms`` (distinct term numbers), grouped by term in their order: each pair's
        term (an index into ``terms``), current document and count; a term's base pairs of live documents
        come first, then its delta pairs."""
        indptr, indices, tf = self._arrays
        terms = np.asarray(terms, dtype=np.int64)
        in_base = terms < self.n_base_terms
        starts = np.where(in_base, indptr[np.minimum(terms, self.n_base_terms)], 0)
        counts = np.where(in_base, indptr[np.minimum(terms, self.n_base_terms - 1) + 1] - starts, 0)
        at = _ranges(starts, counts)
        base_term = np.repeat(np.arange(terms.size, dtype=np.int64), counts)
        base_doc = self.now[indices[at]]
        live = base_doc >= 0
        delta = self.delta
        k = np.searchsorted(delta.terms, terms)
        found = k < delta.terms.size
        found[found] = np.asarray(delta.terms)[k[found]] == terms[found]
        d_indptr = np.asarray(delta.indptr, dtype=np.int64)
        d_starts = np.where(found, d_indptr[np.minimum(k, d_indptr.size - 1)], 0)
        d_counts = np.where(found, d_indptr[np.minimum(k + 1, d_indptr.size - 1)] - d_starts, 0)
        d_at = _ranges(d_starts, d_counts)
        term = np.concatenate([base_term[live], np.repeat(np.arange(terms.size, dtype=np.int64), d_counts)])
        doc = np.concatenate([base_doc[live], self.delta_now[np.asarray(delta.docs, dtype=np.int64)[d_at]]])
        count = np.concatenate([tf[at][live], np.asarray(delta.tf)[d_at]])
        order = np.argsort(term, kind="stable")
        return term[order], doc[order], count[order]

    def get_scores_from_ids(self, query_tokens_ids: Sequence[int]) -> np.ndarray:
        """Every current document's score for these term numbers, each term's scores made from the counts
        (every term of the query at once) and added in query order (a repeated term again), as a full
        build's index adds its stored ones."""
        ids = np.asarray(query_tokens_ids, dtype=np.int64)
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= self.n_terms):
            raise ValueError("a query token id is outside the index's vocabulary")
        terms, which = np.unique(ids, return_inverse=True)
        term, doc, count = self.pairs(terms)
        df = np.bincount(term, minlength=terms.size)
        values = scores(idfs(df, self.num_docs)[term], count, self._norm[doc])
        ends = np.cumsum(df)
        out = np.zeros(self.num_docs, dtype=np.float32)
        for t in which.tolist():
            start, end = int(ends[t] - df[t]), int(ends[t])
            out[doc[start:end]] += values[start:end]
        return out


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``starts[i]``, ..., ``starts[i] + counts[i] - 1`` for every ``i``, end to end."""
    total = int(counts.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    firsts = np.cumsum(counts) - counts  # where each run begins in the output
    return np.repeat(starts - firsts, counts) + np.arange(total, dtype=np.int64)
