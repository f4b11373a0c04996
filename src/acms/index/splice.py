"""A keyword index updated for the documents that changed, from the term counts saved with it.

Why: every stored BM25 score depends on the corpus's size and average document length (and its term's
document frequency), so one changed document changes every score, and the caches' builders ran over the
whole corpus's tokens after a one-line edit (a standard library: ~1.5 s of a 5.3 s refresh). The index
now keeps what its scores are made of (:class:`acms.index.keyword.Counts`: each pair's term count, each
document's length). An update drops the pairs of the documents it replaces, counts the new documents'
terms (the only tokens it touches), inserts their pairs where they sort, and makes every score again from
the counts in one vectorised pass over the pairs (~20 ms per million), with the expression a full build
uses (:func:`acms.index.postings.scores`): the same score for every (term, document), bit for bit.

Scoring stays in bm25s' CSC layout, so a query reads precomputed scores as before (no query-time cost).
Query-time scoring from the counts was the other way (no scores rewritten per update); the pass over
the pairs is a small share of an update and keeps the read path unchanged.

Two things differ from a full build, neither seen in an answer: a term first seen in an update is
numbered after the others (a full build numbers terms by first sight), and a term whose documents all
went keeps its number with no pairs (it scores nothing, as an unknown term does).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from acms.index.keyword import Counts, KeywordIndex, Postings
from acms.index.postings import idfs, norms, scores

__all__ = ["spliced"]


def spliced(index: KeywordIndex, ids: Sequence[str], source: np.ndarray, flat: np.ndarray, lengths: np.ndarray,
            tokens: Sequence[str], numbering: str = "") -> KeywordIndex | None:
    """``index`` with documents replaced: ``ids`` are the new index's documents, ``source[i]`` the position
    in ``index`` of document ``i`` kept as it was, or -1 for a new one; the new documents' terms are
    ``flat`` (numbers into ``tokens``) end to end, ``lengths`` each, in the order of the -1s.
    ``numbering``: the name of the numbering of ``tokens`` (it extends the one the index was built from
    when the names match: its terms are then found by number, the vocabulary is not parsed).

    None when the index cannot be updated so (not loaded from disk, saved without counts, or kept
    documents that would change order): the caller builds it in full."""
    retriever, counts = index.retriever, index.counts
    source = np.asarray(source, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    fresh = np.flatnonzero(source < 0)
    if counts is None or not isinstance(retriever, Postings) or len(ids) != source.size or fresh.size != lengths.size:
        return None
    kept_at = np.flatnonzero(source >= 0)
    old_of_kept = source[kept_at]
    if old_of_kept.size and (np.any(np.diff(old_of_kept) <= 0) or old_of_kept[-1] >= len(index)):
        return None
    params = retriever.params
    k1, b = float(params.get("k1", 1.5)), float(params.get("b", 0.75))
    old_indptr = np.asarray(retriever.scores["indptr"], dtype=np.int64)
    old_docs = np.asarray(retriever.scores["indices"], dtype=np.int64)
    old_tf = np.asarray(counts.tf, dtype=np.int32)
    n_terms, n_docs = old_indptr.size - 1, len(ids)
    # the kept pairs, their documents numbered as now (kept documents keep their order: still sorted)
    now = np.full(len(index), -1, dtype=np.int64)
    now[old_of_kept] = kept_at
    doc = now[old_docs]
    keep = doc >= 0
    term = np.repeat(np.arange(n_terms, dtype=np.int64), np.diff(old_indptr))[keep]
    doc, tf = doc[keep], old_tf[keep]
    # the new documents' pairs, their terms numbered in the index's vocabulary (new ones after it)
    flat = np.asarray(flat, dtype=np.int64)
    numbers = np.unique(flat)
    if numbering and counts.numbering == numbering:
        terms, numbered, added = _by_number(numbers, np.asarray(counts.numbers, dtype=np.int64), n_terms, tokens)
        vocab = None
    else:
        vocab, added = dict(retriever.vocab_dict), {}
        terms = np.fromiter((vocab.setdefault(tokens[n], len(vocab)) for n in numbers.tolist()), dtype=np.int64,
                            count=numbers.size)
        numbered = np.full(len(vocab), -1, dtype=np.int64)
        if numbering:  # kept, so that the next update finds terms by number
            number_of = {token: n for n, token in enumerate(tokens)}
            for word, t in vocab.items():
                numbered[t] = number_of.get(word, -1)
    new_term, new_doc, new_tf = _pairs(flat, numbers, terms, lengths, fresh)
    n_terms = max(n_terms, numbered.size)
    # merged in (term, document) order: each run is sorted, the new pairs go where they sort
    at = np.searchsorted(term * n_docs + doc, new_term * n_docs + new_doc)
    term, doc, tf = np.insert(term, at, new_term), np.insert(doc, at, new_doc), np.insert(tf, at, new_tf)
    if not term.size:
        return KeywordIndex(ids, None)
    df = np.bincount(term, minlength=n_terms)
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    doc_lengths = np.empty(n_docs, dtype=np.int64)
    doc_lengths[kept_at] = np.asarray(counts.lengths, dtype=np.int64)[old_of_kept]
    doc_lengths[fresh] = lengths
    data = scores(idfs(df, n_docs)[term], tf, norms(doc_lengths, k1, b)[doc])
    scored = {"data": data, "indices": doc.astype(np.int32), "indptr": indptr, "num_docs": n_docs}
    params = {**params, "num_docs": n_docs}
    postings = Postings(scored, vocab, params) if vocab is not None else retriever.extended(scored, params, added)
    return KeywordIndex(ids, postings, counts=Counts(tf, doc_lengths, numbered, numbering))


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
