"""A keyword index updated for the documents that changed, from the term counts saved with it.

Why: every BM25 score depends on the corpus's size and average document length (and its term's
document frequency), so one changed document changes every stored score. The index keeps what its
scores are made of (:class:`acms.index.keyword.Counts`: each pair's term count, each document's
length), so an update never reads the unchanged documents' tokens. It counts the new documents' terms
(the only tokens it touches; found by token number when the caller's numbering extends the index's,
else by name) and then either

- leaves the index it started from as a base and writes a small delta beside it
  (:mod:`acms.index.layers`: which base or delta document each current one is, the delta documents'
  pairs and lengths, the terms they add), scored at query time from the counts; the base's files are
  linked into the new directory, not written (a one-file edit of a standard library wrote ~70 MB of
  postings over its four keyword indexes before); or
- once the delta and the dead base documents pass ``MERGE_SHARE`` of the live documents (or the caller's
  numbering is another, or it asks, :func:`spliced_whole`), merges everything into a full base: drops the
  dead documents' pairs, inserts the new ones where they sort and makes every score again from the counts
  in one vectorised pass (~20 ms per million pairs), with the expression a full build uses
  (:func:`acms.index.postings.scores`).

Either way every term's and every query's scores are a full build's of the new documents, bit for bit
(``tests/index/test_splice.py``, ``tests/index/test_layers.py``). Two things differ from a full build,
neither seen in an answer: a term first seen in an update is numbered after the others (a full build
numbers terms by first sight), and a term whose documents all went keeps its number with no live pairs
(it scores nothing, as an unknown term does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from acms.arrays import distinct
from acms.index.keyword import Counts, KeywordIndex, Postings
from acms.index.layers import (
    MERGE_SHARE,
    BaseFiles,
    Delta,
    Layered,
    Positions,
    positional,
)
from acms.index.postings import idfs, norms, scores
from acms.index.string_column import taken

__all__ = ["spliced", "spliced_whole"]


def spliced(index: KeywordIndex, ids: Sequence[str], source: np.ndarray, flat: np.ndarray, lengths: np.ndarray,
            tokens: Sequence[str], numbering: str = "",
            renumbered: tuple[str, np.ndarray] | None = None) -> KeywordIndex | None:
    """``index`` with documents replaced: ``ids`` are the new index's documents, ``source[i]`` the position
    in ``index`` of document ``i`` kept as it was, or -1 for a new one; the new documents' terms are
    ``flat`` (numbers into ``tokens``) end to end, ``lengths`` each, in the order of the -1s.
    ``numbering``: the name of the numbering of ``tokens`` (it extends the one the index was built from
    when the names match: its terms are then found by number, the vocabulary is not parsed).
    ``renumbered``: (a numbering, each of its numbers in ``numbering``'s or -1), when ``tokens`` are a
    compaction of that one: an index of it has its terms' numbers translated and is updated as any other.

    The result is layered on ``index``'s base (:mod:`acms.index.layers`) until the change passes
    ``MERGE_SHARE``, then a full index. None when the index cannot be updated so (not loaded from disk,
    saved without counts, or kept documents that would change order): the caller builds it in full."""
    return _spliced(index, ids, source, flat, lengths, tokens, numbering, renumbered, whole=False)


def spliced_whole(index: KeywordIndex, ids: Sequence[str], source: np.ndarray, flat: np.ndarray,
                  lengths: np.ndarray, tokens: Sequence[str], numbering: str = "") -> KeywordIndex | None:
    """``spliced``, always merged into a full index (every score made again and stored)."""
    return _spliced(index, ids, source, flat, lengths, tokens, numbering, None, whole=True)


@dataclass(frozen=True)
class _Start:
    """The index an update starts from, as a base and a delta (an empty one for a full index)."""

    base: Postings
    counts: Counts
    base_ids: Sequence[str]
    delta: Delta
    files: BaseFiles | None
    layered: Layered

    @classmethod
    def of(cls, index: KeywordIndex) -> _Start | None:
        retriever = index.retriever
        if isinstance(retriever, Layered):
            return cls(retriever.base, retriever.counts, retriever.base_ids, retriever.delta, retriever.files,
                       retriever)
        if index.counts is None or not isinstance(retriever, Postings):
            return None
        empty = np.zeros(0, dtype=np.int64)
        delta = Delta(np.arange(len(index), dtype=np.int64), empty, empty, np.zeros(1, dtype=np.int64), empty,
                      empty, {}, empty, ids=[])
        return cls(retriever, index.counts, index.ids, delta, index.files,
                   Layered(retriever, index.counts, index.ids, delta, index.files))

    def renumbered(self, renumber: np.ndarray, numbering: str) -> _Start:
        """This start with its terms' token numbers translated into ``numbering`` (``renumber``: each old
        number's new one, -1 for a token dropped: its term is then found by name, as after a merge)."""
        def translated(numbers: np.ndarray | None) -> np.ndarray:
            old = np.asarray(numbers if numbers is not None else (), dtype=np.int64)
            out = np.full(old.size, -1, dtype=np.int64)
            ok = (old >= 0) & (old < renumber.size)
            out[ok] = renumber[old[ok]]
            return out

        counts = Counts(self.counts.tf, self.counts.lengths, translated(self.counts.numbers), numbering)
        delta = self.delta
        if len(delta.numbers) == len(delta.added):
            delta = replace(delta, numbers=translated(delta.numbers))
        return _Start(self.base, counts, self.base_ids, delta, self.files,
                      Layered(self.base, counts, self.base_ids, delta, self.files))


def _spliced(index: KeywordIndex, ids: Sequence[str], source: np.ndarray, flat: np.ndarray, lengths: np.ndarray,
             tokens: Sequence[str], numbering: str, renumbered: tuple[str, np.ndarray] | None, *,
             whole: bool) -> KeywordIndex | None:
    start = _Start.of(index)
    if start is not None and renumbered is not None and numbering and start.counts.numbering == renumbered[0]:
        start = start.renumbered(renumbered[1], numbering)
    source = np.asarray(source, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    fresh = np.flatnonzero(source < 0)
    if start is None or len(ids) != source.size or fresh.size != lengths.size:
        return None
    kept_at = np.flatnonzero(source >= 0)
    old_of_kept = source[kept_at]
    if old_of_kept.size and (np.any(np.diff(old_of_kept) <= 0) or old_of_kept[-1] >= len(index)):
        return None
    layered, n_docs = start.layered, len(ids)
    # where each base document and each old delta document is now (-1: gone); kept documents keep their
    # order, so both maps are increasing over the documents they keep
    was = np.asarray(start.delta.source, dtype=np.int64)[old_of_kept]
    base_now = np.full(len(start.base_ids), -1, dtype=np.int64)
    base_now[was[was >= 0]] = kept_at[was >= 0]
    delta_now = np.full(start.delta.size, -1, dtype=np.int64)
    delta_now[-1 - was[was < 0]] = kept_at[was < 0]
    doc_lengths = np.empty(n_docs, dtype=np.int64)
    doc_lengths[kept_at] = layered.lengths[old_of_kept]
    doc_lengths[fresh] = lengths
    # the new documents' pairs, their terms numbered in the index's vocabulary (new ones after it)
    flat = np.asarray(flat, dtype=np.int64)
    numbers = distinct(flat)
    other_numbering = numbering != start.counts.numbering  # the base's numbers would not be the caller's
    terms, numbered, added = _terms(start, numbers, tokens, by_number=bool(numbering) and not other_numbering)
    new_term, new_doc, new_tf = _pairs(flat, numbers, terms, lengths, fresh)
    # the old delta's kept pairs with them, sorted by (term, document)
    old_term = np.repeat(np.asarray(start.delta.terms, dtype=np.int64),
                         np.diff(np.asarray(start.delta.indptr, dtype=np.int64)))
    old_doc = delta_now[np.asarray(start.delta.docs, dtype=np.int64)]
    keep = old_doc >= 0
    # both runs are sorted (kept documents keep their order): the new pairs go where they sort, which a
    # sort of the whole delta's pairs (~5 ms each of an update's four splices, growing with the delta) did
    term, doc, tf = _merged_runs(old_term[keep], old_doc[keep], np.asarray(start.delta.tf, dtype=np.int32)[keep],
                                 new_term, new_doc, new_tf, n_docs)
    if not int(doc_lengths.sum()):
        return KeywordIndex(ids, None)
    not_base = np.ones(n_docs, dtype=bool)
    not_base[kept_at[was >= 0]] = False
    in_delta = np.flatnonzero(not_base)
    live_base = n_docs - in_delta.size
    garbage = (len(start.base_ids) - live_base + in_delta.size) / max(n_docs, 1)
    if whole or garbage > MERGE_SHARE or other_numbering:
        vocab = None
        if numbering and other_numbering:  # kept, so that the next update finds terms by number
            vocab = {**layered.vocab_dict, **added}
            number_of = {token: n for n, token in enumerate(tokens)}
            # sized by the greatest term, not the count: an index an older acms updated may hold a word
            # twice (a term with no pairs left under its first number)
            numbered = np.full(max(vocab.values(), default=-1) + 1, -1, dtype=np.int64)
            for word, t in vocab.items():
                numbered[t] = number_of.get(word, -1)
        return _merged(start, ids, base_now, term, doc, tf, doc_lengths, vocab, added, numbered, numbering)
    # layered: the base as it was, a delta of the documents not in it, numbered in their current order
    new_source = np.empty(n_docs, dtype=np.int64)
    new_source[kept_at[was >= 0]] = was[was >= 0]
    new_source[in_delta] = -1 - np.arange(in_delta.size, dtype=np.int64)
    position = np.full(n_docs, -1, dtype=np.int64)
    position[in_delta] = np.arange(in_delta.size, dtype=np.int64)
    firsts = np.flatnonzero(np.diff(term, prepend=-1)) if term.size else np.zeros(0, dtype=np.int64)  # sorted
    delta_terms = term[firsts]
    indptr = np.append(firsts, term.size).astype(np.int64)
    delta = Delta(new_source, doc_lengths[in_delta], delta_terms, indptr, position[doc].astype(np.int32),
                  tf.astype(np.int32), {**start.delta.added, **added}, numbered[layered.n_base_terms:],
                  **_ids_of(ids, start.base_ids, new_source, in_delta))  # type: ignore[arg-type]
    return KeywordIndex(ids, Layered(start.base, start.counts, start.base_ids, delta, start.files))


def _terms(start: _Start, numbers: np.ndarray, tokens: Sequence[str],
           *, by_number: bool) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """The terms of token ``numbers`` (sorted) in the index's vocabulary, those it lacks numbered after it:
    (their terms, every term's token number, the added terms by name). By number when the caller's
    numbering is the index's, else by name, the vocabulary looked up unparsed for a few terms (a file's
    path and names) as a query's are."""
    layered, old_numbers = start.layered, _numbers(start)
    if by_number:
        terms, numbered, added = _by_number(numbers, old_numbers, layered.n_terms, tokens)
        if not added or all(t is None for t in layered.term_ids(list(added))):
            return terms, numbered, added
        # a token this numbering gave after a compaction dropped the word (no document held it; the
        # term stayed, with no number) is still that term: found by name, or the word would be two terms
        unknown = np.flatnonzero(terms >= layered.n_terms)
        numbers, terms = numbers[unknown], terms.copy()
        known, fresh, added = _by_name([tokens[n] for n in numbers.tolist()], layered)
        terms[unknown] = known
        numbered = np.concatenate([old_numbers, numbers[fresh]])
        return terms, numbered, added
    terms, _, added = _by_name([tokens[n] for n in numbers.tolist()], layered)
    return terms, np.concatenate([old_numbers, np.full(len(added), -1, dtype=np.int64)]), added


def _by_name(words: Sequence[str], layered: Layered) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """``words``' terms in ``layered``'s vocabulary, those it lacks numbered after its terms in order:
    (their terms, a mask of the new ones, the new ones by name)."""
    added: dict[str, int] = {}
    terms = np.empty(len(words), dtype=np.int64)
    for k, (word, t) in enumerate(zip(words, layered.term_ids(list(words)))):
        terms[k] = t if t is not None else added.setdefault(word, layered.n_terms + len(added))
    return terms, terms >= layered.n_terms, added


def _numbers(start: _Start) -> np.ndarray:
    """Every term's token number in the index's numbering (-1: none): the base's, then its delta's."""
    base = start.counts.numbers
    n_base = start.layered.n_base_terms
    base = np.full(n_base, -1, dtype=np.int64) if base is None else np.asarray(base, dtype=np.int64)
    added = np.asarray(start.delta.numbers, dtype=np.int64)
    if added.size != len(start.delta.added):
        added = np.full(len(start.delta.added), -1, dtype=np.int64)
    return np.concatenate([base, added])


def _ids_of(ids: Sequence[str], base_ids: Sequence[str], source: np.ndarray,
            in_delta: np.ndarray) -> dict[str, object]:
    """How a delta names the current documents: the base's ids at ``source`` and the delta documents'
    own, or ``"0"``, ``"1"``, ... (the ranking index's windows), or every id listed."""
    if isinstance(ids, Positions):
        return {"positional": True}
    kept = np.flatnonzero(source >= 0)
    if _alike_at_run_ends(ids, base_ids, kept, source[kept]):
        return {"ids": taken(ids, in_delta)}
    if positional(ids):
        return {"positional": True}
    return {"all_ids": list(ids)}


def _alike_at_run_ends(ids: Sequence[str], base_ids: Sequence[str], at: np.ndarray, was: np.ndarray) -> bool:
    """Whether the kept documents ``at`` have the base's ids at ``was``, compared at both ends of every run
    of them that is a stretch of the base (documents keep their order, so the rest of a run is the
    base's as it was): every one of a standard library's 73k took ~7 ms a refresh."""
    if not at.size:
        return True
    breaks = np.flatnonzero((np.diff(at) != 1) | (np.diff(was) != 1))
    ends = distinct(np.concatenate([[0, at.size - 1], breaks, breaks + 1]))
    return taken(ids, at[ends]) == taken(base_ids, was[ends])


def _merged(start: _Start, ids: Sequence[str], base_now: np.ndarray, new_term: np.ndarray, new_doc: np.ndarray,
            new_tf: np.ndarray, doc_lengths: np.ndarray, vocab: dict[str, int] | None, added: dict[str, int],
            numbered: np.ndarray, numbering: str) -> KeywordIndex:
    """A full index: the base's pairs of the documents it keeps (``base_now``) and the other pairs
    (sorted by term, then document), every score made from the counts."""
    retriever, counts = start.base, start.counts
    params = retriever.params
    k1, b = float(params.get("k1", 1.5)), float(params.get("b", 0.75))
    old_indptr = np.asarray(retriever.scores["indptr"], dtype=np.int64)
    old_docs = np.asarray(retriever.scores["indices"], dtype=np.int64)
    n_terms, n_docs = max(old_indptr.size - 1, numbered.size), len(ids)
    doc = base_now[old_docs]
    keep = doc >= 0
    term = np.repeat(np.arange(old_indptr.size - 1, dtype=np.int64), np.diff(old_indptr))[keep]
    doc, tf = doc[keep], np.asarray(counts.tf, dtype=np.int32)[keep]
    # merged in (term, document) order: each run is sorted, the new pairs go where they sort
    term, doc, tf = _merged_runs(term, doc, tf, new_term, new_doc, new_tf, n_docs)
    df = np.bincount(term, minlength=n_terms)
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    data = scores(idfs(df, n_docs)[term], tf, norms(doc_lengths, k1, b)[doc])
    scored = {"data": data, "indices": doc.astype(np.int32), "indptr": indptr, "num_docs": n_docs}
    params = {**params, "num_docs": n_docs}
    postings = (Postings(scored, vocab, params) if vocab is not None
                else retriever.extended(scored, params, {**start.delta.added, **added}))
    return KeywordIndex(ids, postings, counts=Counts(tf, doc_lengths, numbered, numbering))


def _merged_runs(term: np.ndarray, doc: np.ndarray, tf: np.ndarray, new_term: np.ndarray, new_doc: np.ndarray,
                 new_tf: np.ndarray, n_docs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two runs of (term, document, count) pairs, each sorted by term then document and with no pair in
    both, merged in that order (sorted whole should the first run not be: a delta saved out of order)."""
    key = term * n_docs + doc
    if key.size > 1 and not bool(np.all(key[1:] > key[:-1])):
        order = np.lexsort((np.concatenate([doc, new_doc]), np.concatenate([term, new_term])))
        return (np.concatenate([term, new_term])[order], np.concatenate([doc, new_doc])[order],
                np.concatenate([tf, new_tf])[order])
    at = np.searchsorted(key, new_term * n_docs + new_doc)
    return np.insert(term, at, new_term), np.insert(doc, at, new_doc), np.insert(tf, at, new_tf)


def _by_number(numbers: np.ndarray, numbered: np.ndarray, n_terms: int,
               tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """The terms of token ``numbers`` (sorted) in an index whose terms have the token numbers ``numbered``
    (-1: a term of no token now), those not in it numbered after its ``n_terms``: (their terms, every
    term's token number, the added terms by name)."""
    term_of = np.full(max(int(numbered.max(initial=-1)), int(numbers.max(initial=-1))) + 1, -1, dtype=np.int64)
    known = numbered >= 0
    term_of[numbered[known]] = np.flatnonzero(known)
    terms = term_of[numbers]
    unknown = np.flatnonzero(terms < 0)
    terms[unknown] = n_terms + np.arange(unknown.size, dtype=np.int64)
    added = {tokens[int(n)]: int(t) for n, t in zip(numbers[unknown], terms[unknown])}
    return terms, np.concatenate([numbered, numbers[unknown]]), added


def _pairs(flat: np.ndarray, numbers: np.ndarray, terms: np.ndarray, lengths: np.ndarray,
           fresh: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (term, document) pairs of the new documents with their counts, sorted by term then
    document: ``numbers`` are ``flat``'s distinct token numbers, sorted, and ``terms`` their terms."""
    if not flat.size:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0, dtype=np.int32)
    inverse = np.searchsorted(numbers, flat)
    local = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    key, tf = np.unique(terms[inverse] * lengths.size + local, return_counts=True)
    return key // lengths.size, fresh[key % lengths.size], tf.astype(np.int32)
