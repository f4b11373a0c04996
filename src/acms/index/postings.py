"""BM25 postings (bm25s' Lucene variant, its CSC layout) built from documents streamed in chunks.

Why: built from one corpus-long token array, the postings took about 70 bytes per
(term, document) pair in int64/float64 temporaries (keys, counts, argsort orders, the score
expression) besides the token arrays themselves: ~0.4 GB at twice the standard library, growing with
the project. Here the documents come a few at a time; each slice's distinct (token, document) pairs
and their counts are written to a spill file (12 bytes a pair), and a second pass over that file puts
every pair straight at its place in the final arrays. What is held is the result (8 bytes a pair), one
slice's temporaries, and per-token and per-document counters.

The arrays are those ``bm25s.BM25.index`` builds, bit for bit (``tests/index``): the terms are
numbered in order of first sight over the documents, the pairs sorted by term then document, the
scores computed with the same float64 expression rounded to float32.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["SLICE_TOKENS", "Postings", "idfs", "lucene_postings", "norms", "scores"]

SLICE_TOKENS = 1 << 20  # tokens counted at once (a slice's temporaries: ~40 MB)


@dataclass(frozen=True)
class Postings:
    """``scores`` as bm25s holds them (data, indices, indptr, num_docs); ``seen``: the input's token
    numbers in order of first sight, so term ``i`` of the index is input number ``seen[i]``; ``tf``: the
    term count of each pair (aligned with ``indices``) and ``lengths`` each document's, from which the
    scores are made again when documents change (:mod:`acms.index.splice`)."""

    scores: dict[str, object]
    seen: np.ndarray
    tf: np.ndarray | None = None
    lengths: np.ndarray | None = None


def _slices(tokens: np.ndarray, lengths: np.ndarray) -> Iterable[tuple[np.ndarray, np.ndarray, int]]:
    """Runs of whole documents of at most ``SLICE_TOKENS`` tokens (one document may be longer):
    (tokens, lengths, index of the first document in ``lengths``)."""
    ends = np.cumsum(lengths)
    first_doc, first_token = 0, 0
    while first_doc < lengths.size:
        last_doc = max(first_doc + 1, int(np.searchsorted(ends, first_token + SLICE_TOKENS, side="right")))
        last_token = int(ends[last_doc - 1])
        yield tokens[first_token:last_token], lengths[first_doc:last_doc], first_doc
        first_doc, first_token = last_doc, last_token


def lucene_postings(chunks: Iterable[tuple[np.ndarray, np.ndarray]], n_numbers: int, *, k1: float, b: float,
                    spill_dir: Path | None = None) -> Postings | None:
    """The postings of the documents in ``chunks``: runs of consecutive documents, each as (their tokens
    end to end as numbers below ``n_numbers``, their lengths). None when there is no token at all."""
    first = np.full(n_numbers, -1, dtype=np.int64)  # where each number is first seen
    df_by_number = np.zeros(n_numbers, dtype=np.int64)
    doc_lengths: list[np.ndarray] = []
    pieces: list[int] = []  # pairs per spilled slice
    n_docs = position = 0
    if spill_dir is not None:
        spill_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=spill_dir) as spill:
        for tokens, lengths in chunks:
            tokens, lengths = np.asarray(tokens), np.asarray(lengths, dtype=np.int64)
            doc_lengths.append(lengths)
            for part, part_lengths, offset in _slices(tokens, lengths):
                if part.size:
                    values, index = np.unique(part, return_index=True)
                    new = first[values] < 0
                    first[values[new]] = index[new] + position
                    position += part.size
                    local = np.repeat(np.arange(part_lengths.size, dtype=np.int64), part_lengths)
                    key, tf = np.unique(part.astype(np.int64) * part_lengths.size + local, return_counts=True)
                    del local
                    term = (key // part_lengths.size).astype(np.int32)
                    doc = (key % part_lengths.size + (n_docs + offset)).astype(np.int32)
                    del key
                    df_by_number += np.bincount(term, minlength=n_numbers)
                    for column in (term, doc, tf.astype(np.int32)):
                        column.tofile(spill)
                    pieces.append(term.size)
            n_docs += lengths.size
        if not position:
            return None
        lengths = np.concatenate(doc_lengths)
        del doc_lengths
        present = np.flatnonzero(first >= 0)
        seen = present[np.argsort(first[present], kind="stable")]
        del first, present
        renumber = np.zeros(n_numbers, dtype=np.int32)
        renumber[seen] = np.arange(seen.size, dtype=np.int32)
        df = df_by_number[seen]
        del df_by_number
        idf = idfs(df, n_docs)
        indptr = np.zeros(seen.size + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        cursor = indptr[:-1].copy()  # where each term's next pair goes
        data = np.empty(int(indptr[-1]), dtype=np.float32)
        indices = np.empty(int(indptr[-1]), dtype=np.int32)
        counts = np.empty(int(indptr[-1]), dtype=np.int32)
        norm = norms(lengths, k1, b)
        spill.seek(0)
        for n in pieces:
            term_number, doc, tf = (np.fromfile(spill, dtype=np.int32, count=n) for _ in range(3))
            # a slice's pairs are sorted by number, then document: a term's run keeps its documents' order
            starts = np.flatnonzero(np.diff(term_number, prepend=-1))
            runs = np.diff(np.append(starts, n))
            term = renumber[term_number]
            del term_number
            at = cursor[term] + (np.arange(n, dtype=np.int64) - np.repeat(starts, runs))
            cursor[term[starts]] += runs
            data[at] = scores(idf[term], tf, norm[doc])
            indices[at] = doc
            counts[at] = tf
    return Postings({"data": data, "indices": indices, "indptr": indptr, "num_docs": n_docs}, seen, counts, lengths)


def idfs(df: np.ndarray, n_docs: int) -> np.ndarray:
    """bm25s' Lucene idf of terms in ``n_docs`` documents, from their document frequencies, as float32."""
    return np.log(1 + (n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)


def norms(lengths: np.ndarray, k1: float, b: float) -> np.ndarray:
    """Each document's length term of bm25s' score, ``k1 * ((1 - b) + b * length / mean length)`` in float64
    (per document, then gathered per pair: the same values as evaluated per pair, for fewer passes)."""
    return k1 * ((1 - b) + b * lengths / lengths.mean())


def scores(idf: np.ndarray, tf: np.ndarray, norm: np.ndarray) -> np.ndarray:
    """Pairs' scores from their term's idf (float32), count and document's ``norms``: the float64 expression
    bm25s evaluates, rounded to float32 (one function, so a build and a splice give the same bits)."""
    tf32 = tf.astype(np.float32)
    return (idf * (tf32 / (norm + tf32))).astype(np.float32)
