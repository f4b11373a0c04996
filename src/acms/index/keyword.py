"""BM25 keyword scores over fragment texts: bm25s fed with ``search_terms`` (``code_tokens``, plurals stemmed).

A derived cache, free of RDF: the caller hands in ``(ids, texts)`` and gets back a score for every
id. ``save(directory, key=...)`` writes it atomically with a manifest whose ``key`` the caller
chooses (e.g. a digest of the fragment set) so that a stale index is detected on ``load``.

    index = KeywordIndex.build(ids, texts)
    index.scores("parse http header")      # float32, one per id, aligned with index.ids
    index.top("parse_http_header", k=10)   # [(id, score), …], score > 0, best first
    index.save(path, key=digest); KeywordIndex.load(path).key == digest

An update (:func:`acms.index.splice.spliced`) returns an index layered on the one it started from: a base
(these files, linked rather than written when saved) and a small delta, scored at query time from the
term counts (:mod:`acms.index.layers`); it answers every query as a full build of its documents does.

Scoring is bm25s' Lucene variant (k1=1.5, b=0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5))).
A query token repeated counts again (bm25s' behaviour, as rank_bm25's); tokens unknown to the
index add nothing; an empty corpus or a query without known tokens scores 0 everywhere.

Measured here (2 shared cores, load ≈2.5 from parallel work; bm25s 0.3.16, numpy backend) on
50k synthetic code-like fragments (≈1,260 chars: a Zipf vocabulary of 6k words and a pool of 40k
snake/camel identifiers; ≈208 ``code_tokens`` and ≈104 bm25s tokens each), and on 35k 25-line
fragments of the CPython standard library (≈890 chars; 102 / 74 tokens each):

| | synthetic 50k | stdlib 35k |
| --- | --- | --- |
| bm25s directly: ``bm25s.tokenize`` + ``BM25.index`` | 3.6 + 3.0 = 6.5 s | 2.2 + 1.4 = 3.6 s |
| ``KeywordIndex.build`` | 11.4 s | 4.1 s |
| … of which ``code_tokens`` | 4.7 s | 2.6 s |
| query (3 words): bm25s ``get_scores`` / ``retrieve(k=50)`` | 0.03 / 7.9 ms | 0.03 / 6.0 ms |
| query (3 words): ``KeywordIndex.scores`` / ``top(k=50)`` | 0.05 / 0.20 ms | 0.03 / 0.12 ms |
| ``save`` / ``load`` (mmap) | 0.70 / 0.13 s | 0.61 / 0.09 s |

``code_tokens`` emits about twice bm25s' tokens (sub-tokens plus whole identifiers), which is
where the extra build time goes. The postings are computed with numpy (:mod:`acms.index.postings`)
rather than by bm25s' per-document loop: ≈0.7 s against ≈1.6 s for 20k synthetic fragments, with
identical arrays. bm25s' ``retrieve`` is slow per call (thread pool, result packing); ``top``
uses ``get_scores_from_ids`` and a partial sort instead.
"""

from __future__ import annotations

import json
import sys
from array import array
from collections import defaultdict
from collections.abc import Iterable, Sequence, Sized
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from acms.errors import StoreError, StoreMissing
from acms.index.layers import BaseFiles, Delta, GatheredIds, Layered, Positions, positional
from acms.index.postings import Postings as Postings_
from acms.index.postings import lucene_postings
from acms.index.scratch import atomic_directory
from acms.index.string_column import StringColumn, as_column, taken
from acms.index.tokenize import SEARCH_TERMS_VERSION, search_terms
from acms.index.vocabulary import Vocabulary

if TYPE_CHECKING:  # bm25s imports scipy.sparse (~0.15 s): only the writer (``build``/``save``) needs it
    import bm25s

__all__ = ["KeywordIndex"]

FORMAT = "acms.keyword-index/1"
# a base in FORMAT's files plus a delta (:mod:`acms.index.layers`): another name, so that a reader that
# knows only FORMAT rebuilds rather than reads the base's documents as the index's
LAYERED_FORMAT = f"{FORMAT}+delta/1"
_DELTA_DIR = "delta"
_MANIFEST = "manifest.json"
_IDS, _ID_LINES, _POSITIONS = "ids.json", "ids.txt", "ids.positions"  # one of them, or the column: see _write_ids
_ID_COLUMN = "ids"
_BM25_DIR = "bm25"
_COUNTS_DIR = "counts"


class Counts:
    """What an index's scores are made of besides its terms' document frequencies: each pair's term
    count (aligned with the CSC ``indices``) and each document's length in terms. Saved beside bm25s'
    files (``counts/``); a reader of a full index never needs them, one of a layered index scores from them.

    ``numbers``/``numbering``: each term's number in the token list the index was built from, and a name
    of that numbering (the caches' tokenised corpus, :class:`acms.retrieval.segment.Segment`, whose
    numbers an update only extends): an update numbered so finds its documents' terms with one array
    lookup instead of parsing the vocabulary (a standard library's: ~0.1-0.3 s)."""

    def __init__(self, tf: np.ndarray, lengths: np.ndarray, numbers: np.ndarray | None = None,
                 numbering: str = "") -> None:
        self.tf, self.lengths = tf, lengths
        self.numbers = numbers if numbering else None
        self.numbering = numbering if numbers is not None else ""

    @classmethod
    def of(cls, built: Postings_, numbering: str = "") -> Counts | None:
        if built.tf is None or built.lengths is None:
            return None
        return cls(built.tf, built.lengths, built.seen, numbering)

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True)
        np.save(directory / "tf.npy", np.asarray(self.tf, dtype=np.int32))
        np.save(directory / "lengths.npy", np.asarray(self.lengths, dtype=np.int64))
        self.save_numbering(directory)

    def save_numbering(self, directory: Path) -> None:
        """The terms' token numbers and their numbering's name, in place of those ``directory`` holds (a
        base's, linked: a link is replaced, never written through)."""
        for name in ("numbers.npy", "numbering.txt"):
            (directory / name).unlink(missing_ok=True)
        if self.numbers is not None:
            np.save(directory / "numbers.npy", np.asarray(self.numbers, dtype=np.int64))
            (directory / "numbering.txt").write_text(self.numbering, encoding="utf-8")

    @staticmethod
    def saved_numbering(directory: Path) -> str:
        try:
            return (directory / "numbering.txt").read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    @classmethod
    def load(cls, directory: Path, *, mmap: bool = True) -> Counts | None:
        """None when the index was saved without them (an older acms): it scores as well."""
        if not (directory / "lengths.npy").is_file():
            return None
        mode = "r" if mmap else None
        numbers, numbering = None, ""
        if (directory / "numbering.txt").is_file():
            numbering = (directory / "numbering.txt").read_text(encoding="utf-8")
            numbers = np.load(directory / "numbers.npy", mmap_mode=mode, allow_pickle=False)
        return cls(np.load(directory / "tf.npy", mmap_mode=mode, allow_pickle=False),
                   np.load(directory / "lengths.npy", mmap_mode=mode, allow_pickle=False), numbers, numbering)


def _made_by(retriever: object) -> str | None:
    """For the manifest: the bm25s version that made the scores, when bm25s made them (a full build: it is
    imported then); None when acms made them from the counts (an update). Asking the package metadata
    cost an update ~8 ms a process (importlib.metadata, email, csv) for a field nothing reads back."""
    module = type(retriever).__module__.partition(".")[0]
    return getattr(sys.modules.get("bm25s"), "__version__", None) if module == "bm25s" else None


def _retriever(postings: Postings_, vocab: dict[str, int], k1: float, b: float) -> bm25s.BM25:
    """A bm25s index holding ``postings``, with the attributes ``bm25s.BM25.load`` sets (so that it saves
    as bm25s saves). The arrays are those ``bm25s.BM25.index`` builds, bit for bit (``tests/index``),
    built in bounded memory by :func:`acms.index.postings.lucene_postings` rather than by bm25s' Python
    loop over documents (~1.6 s per 20k fragments, against ~0.7 s)."""
    import bm25s

    retriever = bm25s.BM25(k1=k1, b=b, method="lucene", backend="numpy")
    retriever.scores = postings.scores
    retriever.vocab_dict = vocab
    retriever.unique_token_ids_set = set(vocab.values())
    retriever.nonoccurrence_array = None
    return retriever


_TERMS = "vocab.terms"  # the hashed terms' files in a bm25s directory (``Vocabulary.files``)
LOOKUP_TERMS = 24  # distinct terms (one query's, or a process's so far) looked up before the vocabulary is parsed


class Postings:
    """A saved bm25s index read back without bm25s: the CSC score arrays (memory-mapped) and the vocabulary.

    Why: importing bm25s pulls in scipy.sparse (~0.15 s of every read command), and scoring
    a loaded index is only a sum of CSC columns. ``get_scores_from_ids`` does what bm25s' numpy backend
    does (``np.add.at`` per query token, in order, in float32), so scores are the same bit for bit;
    ``tests/index`` compares the two on every query.
    """

    def __init__(self, scores: dict[str, Any], vocab: dict[str, int] | None, params: dict[str, Any],
                 vocab_text: bytes = b"{}", added: dict[str, int] | None = None,
                 terms: Vocabulary | None = None) -> None:
        """``vocab``, or the vocabulary as saved (``vocab_text``, JSON) and the terms ``added`` after it:
        parsed only when a query needs it (an update that adds a few terms writes the text it read
        with them appended, never parsing it). ``terms``: every term by number, hashed (saved beside the
        JSON, ``_TERMS``), where a term is looked up while the text is unparsed."""
        self.scores = scores
        self._vocab = vocab
        self._vocab_text, self._added = vocab_text, dict(added or {})
        self._found: dict[str, int | None] = {}  # terms looked up in ``vocab_text`` so far
        self.terms = terms  # numbered as the text and ``added`` number them (``load``, ``extended``)
        self.params = params  # bm25s' params.index.json, as saved
        self.dtype, self.int_dtype = params.get("dtype", "float32"), params.get("int_dtype", "int32")

    @property
    def vocab_dict(self) -> dict[str, int]:
        if self._vocab is None:
            self._vocab = {**json.loads(self._vocab_text), **self._added}
        return self._vocab

    def token_ids(self, terms: Iterable[str]) -> list[int]:
        """The ids of those ``terms`` the vocabulary holds, in order. While it is unparsed, each term is
        looked up in the saved text: parsing it cost ~35 ms per 4.5 MB (a standard library has two such
        vocabularies), paid by every process's and every new index state's first query for a few terms.
        A lookup reads the text once per term (1/30 to 1/70 of a parse), so more than ``LOOKUP_TERMS`` new
        terms, in one query or over a long-lived process's queries, parse it instead."""
        return [i for i in self.term_ids(terms) if i is not None]

    def term_ids(self, terms: Iterable[str]) -> list[int | None]:
        """Each of ``terms``' id, None for a term the vocabulary does not hold (looked up as ``token_ids``)."""
        terms = list(terms)
        found = self._found
        if self._vocab is None and self.terms is not None:
            number = self.terms.number
            return [number(t) for t in terms]
        if self._vocab is None and len(found) + len({t for t in terms if t not in found}) > LOOKUP_TERMS:
            self.vocab_dict  # noqa: B018 - parsed once, for this and the next queries
        if self._vocab is not None:
            vocab = self._vocab
            return [vocab.get(t) for t in terms]
        for term in terms:
            if term not in found:
                found[term] = self._added[term] if term in self._added else _saved_id(self._vocab_text, term)
        return [found[t] for t in terms]

    def extended(self, scores: dict[str, Any], params: dict[str, Any], added: dict[str, int]) -> Postings:
        """Other scores over these terms and ``added`` after them, the vocabulary left unparsed."""
        if self._vocab is not None:
            return Postings(scores, {**self._vocab, **added}, params)
        added = {**self._added, **added}
        terms = self.terms
        if terms is not None and list(added.values()) == list(range(len(terms.base), len(terms.base) + len(added))):
            terms = Vocabulary(terms.base, terms.hashes, terms.order, list(added))
        else:
            terms = None  # the added terms are not numbered after the saved ones: looked up in the text
        return Postings(scores, None, params, self._vocab_text, added, terms)

    def hashed_terms(self) -> Vocabulary | None:
        """Every term by number, hashed, for ``_TERMS``: None when the vocabulary does not number its terms
        0, 1, ... in order (one an older acms updated may hold a word twice). A vocabulary saved without
        them is parsed here: a whole write (a build, a merge) is rare, and its updates find terms by hash."""
        if self.terms is not None:  # the vocabulary's, parsed or not
            return self.terms.whole()
        return _hashed(self.vocab_dict)

    def vocab_json(self) -> bytes:
        """The vocabulary as bm25s saves it (``vocab.index.json``)."""
        if self._vocab is not None:
            return json.dumps(self._vocab, ensure_ascii=False).encode("utf-8")
        text = self._vocab_text.rstrip()
        if not self._added:
            return text
        body = json.dumps(self._added, ensure_ascii=False).encode("utf-8")[1:-1]
        return b"{" + body + b"}" if text[1:-1].strip() == b"" else text[:-1] + b", " + body + b"}"

    @classmethod
    def load(cls, directory: Path, *, mmap: bool = True) -> Postings:
        params = json.loads((directory / "params.index.json").read_text(encoding="utf-8"))
        if params.get("method") != "lucene" or (directory / "nonoccurrence_array.index.npy").exists():
            raise ValueError(f"unexpected bm25s index at {directory} ({params.get('method')})")
        vocab_text = (directory / "vocab.index.json").read_bytes()
        if not vocab_text.lstrip().startswith(b"{") or not vocab_text.rstrip().endswith(b"}"):
            raise ValueError(f"unexpected bm25s vocabulary at {directory}")
        mode = "r" if mmap else None
        scores = {name: np.load(directory / f"{name}.csc.index.npy", mmap_mode=mode, allow_pickle=False)
                  for name in ("data", "indices", "indptr")}
        scores["num_docs"] = int(params["num_docs"])
        terms = None
        if (directory / f"{_TERMS}.hashes.npy").is_file():  # written with the JSON, in the same directory
            terms = Vocabulary.load(directory, _TERMS)
            if len(terms) > scores["indptr"].size - 1:
                raise ValueError(f"{directory}: more hashed terms than the scores hold")
        return cls(scores, None, params, vocab_text, terms=terms)

    def get_scores_from_ids(self, query_tokens_ids: Sequence[int]) -> np.ndarray:
        data, indices, indptr = self.scores["data"], self.scores["indices"], self.scores["indptr"]
        ids = np.asarray(query_tokens_ids, dtype=np.dtype(self.int_dtype))
        if int(ids.max(initial=0)) >= len(indptr) - 1:
            raise ValueError("a query token id is outside the index's vocabulary")
        scores = np.zeros(self.scores["num_docs"], dtype=np.dtype(self.dtype))
        starts, ends = indptr[ids], indptr[ids + 1]
        for start, end in zip(starts.tolist(), ends.tolist()):
            np.add.at(scores, indices[start:end], data[start:end])
        return scores


class KeywordIndex:
    """BM25 scores for a fixed list of ids. Build with ``build`` or ``load``; immutable."""

    def __init__(self, ids: Sequence[str], retriever: bm25s.BM25 | Postings | Layered | None, key: str = "",
                 counts: Counts | None = None, files: BaseFiles | None = None) -> None:
        """``counts``: the term counts the scores were made from, kept so that an update changes only
        the documents it replaces (:func:`acms.index.splice.spliced`); None for an index saved without,
        and for a layered one (``retriever`` a :class:`~acms.index.layers.Layered`: its base's counts and
        its delta). ``files``: where a loaded index's files are, linked rather than written by the
        updates layered on it."""
        # a column (an update's fragments, a loaded base's) stays one: made a tuple, its 73k strings were
        # decoded (~12 ms)
        self._ids: Sequence[str] = ids if isinstance(ids, (Positions, StringColumn, GatheredIds)) else tuple(ids)
        self._retriever = retriever  # None when the corpus has no tokens at all
        self._key = key
        self.counts = counts
        self.files = files

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def build(
        cls, ids: Sequence[str], texts: Iterable[str], *, k1: float = 1.5, b: float = 0.75
    ) -> KeywordIndex:
        """``texts`` may be a generator (one text per id, in order): only its tokens are kept."""
        if isinstance(texts, Sized) and len(ids) != len(texts):
            raise ValueError(f"{len(ids)} ids for {len(texts)} texts")
        if len(set(ids)) != len(ids):
            raise ValueError("ids must be unique")
        vocab: defaultdict[str, int] = defaultdict(count().__next__)  # token -> id, first seen
        token_id = vocab.__getitem__
        flat = array("i")  # every document's token ids, end to end (int32: a vocabulary is far below 2**31)
        lengths = array("q")
        for text in texts:
            start = len(flat)
            flat.extend(map(token_id, search_terms(text)))
            lengths.append(len(flat) - start)
        if len(lengths) != len(ids):
            raise ValueError(f"{len(ids)} ids for {len(lengths)} texts")
        built = lucene_postings([(np.frombuffer(flat, np.int32), np.frombuffer(lengths, np.int64))], len(vocab),
                                k1=k1, b=b)
        if built is None:
            return cls(ids, None)
        return cls(ids, _retriever(built, dict(vocab), k1, b), counts=Counts.of(built))

    @classmethod
    def from_token_ids(cls, ids: Sequence[str], flat: np.ndarray, lengths: np.ndarray, tokens: Sequence[str],
                       *, k1: float = 1.5, b: float = 0.75) -> KeywordIndex:
        """``build(ids, texts)`` for texts already tokenised: ``flat`` holds every text's tokens end to
        end (``lengths`` per text) as numbers into ``tokens``, numbered in any order (one pass over a
        corpus tokenises it once for several indexes). They are renumbered in order of first
        sight, as ``build`` numbers them, so the arrays are ``build``'s exactly (``tests/index``)."""
        if len(ids) != len(lengths):
            raise ValueError(f"{len(ids)} ids for {len(lengths)} texts")
        return cls.from_chunks(ids, [(flat, lengths)], tokens, k1=k1, b=b)

    @classmethod
    def from_chunks(cls, ids: Sequence[str], chunks: Iterable[tuple[np.ndarray, np.ndarray]], tokens: Sequence[str],
                    *, k1: float = 1.5, b: float = 0.75, spill_dir: Path | None = None,
                    numbering: str = "") -> KeywordIndex:
        """``from_token_ids`` for documents that come a few at a time (bounded memory): each
        chunk is (the tokens of some consecutive documents end to end, their lengths). ``ids`` is read
        once the chunks are consumed, so a generator may fill it as it goes. ``numbering``: a name of
        the numbering of ``tokens`` (see :class:`Counts`), "" for one that will not be extended."""
        built = lucene_postings(chunks, len(tokens), k1=k1, b=b, spill_dir=spill_dir)
        n_docs = 0 if built is None else int(built.scores["num_docs"])  # type: ignore[call-overload]
        if built is not None and len(ids) != n_docs:
            raise ValueError(f"{len(ids)} ids for {n_docs} texts")
        if len(set(ids)) != len(ids):
            raise ValueError("ids must be unique")
        if built is None:
            return cls(ids, None)
        vocab = {tokens[t]: i for i, t in enumerate(built.seen.tolist())}
        return cls(ids, _retriever(built, vocab, k1, b), counts=Counts.of(built, numbering))

    # -- reading --------------------------------------------------------------------------

    @property
    def ids(self) -> Sequence[str]:
        return self._ids

    @property
    def retriever(self) -> bm25s.BM25 | Postings | Layered | None:
        """The score arrays (bm25s' CSC layout) and vocabulary, or a base and a delta scored at query time
        (:class:`~acms.index.layers.Layered`); None for a corpus without tokens."""
        return self._retriever

    @property
    def layered(self) -> Layered | None:
        """The base and delta of an updated index, None for a full one."""
        return self._retriever if isinstance(self._retriever, Layered) else None

    def terms(self) -> list[str]:
        """Every term with at least one document, sorted: what a full build's vocabulary holds, however
        the index is laid out (an update may keep terms whose documents all went, scoring nothing)."""
        retriever = self._retriever
        if retriever is None:
            return []
        if isinstance(retriever, Layered):
            df = retriever.document_frequencies()
        else:
            df = np.diff(np.asarray(retriever.scores["indptr"], dtype=np.int64))
        return sorted(term for term, t in retriever.vocab_dict.items() if df[t] > 0)

    def lengths(self) -> np.ndarray | None:
        """Each document's length in terms, aligned with ``ids`` (None when the index was saved without)."""
        if isinstance(self._retriever, Layered):
            return self._retriever.lengths
        if self._retriever is None:
            return np.zeros(len(self._ids), dtype=np.int64)
        return None if self.counts is None else np.asarray(self.counts.lengths, dtype=np.int64)

    @property
    def key(self) -> str:
        """The caller's staleness key given to ``save`` ("" for an index never saved)."""
        return self._key

    def __len__(self) -> int:
        return len(self._ids)

    def scores(self, query: str, *, unique: bool = False) -> np.ndarray:
        """BM25 score of every document for ``query``: float32, aligned with ``ids``.

        ``unique``: each query token counts once, however often the query repeats it.
        """
        retriever = self._retriever
        if retriever is None:
            return np.zeros(len(self._ids), dtype=np.float32)
        terms = search_terms(query)
        if isinstance(retriever, (Postings, Layered)):
            token_ids = retriever.token_ids(terms)
        else:
            vocab = retriever.vocab_dict
            token_ids = [vocab[t] for t in terms if t in vocab]
        if unique:
            token_ids = list(dict.fromkeys(token_ids))
        if not token_ids:
            return np.zeros(len(self._ids), dtype=np.float32)
        return np.asarray(retriever.get_scores_from_ids(token_ids), dtype=np.float32)

    def top(self, query: str, k: int) -> list[tuple[str, float]]:
        """At most ``k`` (id, score) pairs with score > 0, best first, ties by id."""
        if k <= 0:
            return []
        scores = self.scores(query)
        hits = np.flatnonzero(scores > 0)
        if hits.size > k:
            # keep everything tied with the k-th best, so that ties are cut by id below
            kth = np.partition(scores[hits], hits.size - k)[hits.size - k]
            hits = hits[scores[hits] >= kth]
        names = taken(self._ids, hits)  # decoded together: a memory-mapped column's one by one cost ~10 us each
        ranked = sorted(zip(scores[hits].tolist(), names), key=lambda p: (-p[0], p[1]))
        return [(name, s) for s, name in ranked[:k]]

    # -- persistence ----------------------------------------------------------------------

    def save(self, directory: Path, *, key: str = "") -> None:
        """Write the index to ``directory`` atomically; ``key`` comes back as ``load(...).key``. A layered
        index links its base's files (written only when they cannot be linked) and writes its delta."""
        with atomic_directory(Path(directory)) as tmp:
            layered = self.layered
            if layered is not None:
                if layered.files is None or not layered.files.link_into(tmp):
                    _write_base(tmp, layered.base, layered.counts, layered.base_ids)
                elif Counts.saved_numbering(tmp / "counts") != layered.counts.numbering:  # translated since
                    layered.counts.save_numbering(tmp / "counts")
                layered.delta.save(tmp / _DELTA_DIR)
            else:
                self._write(tmp)
            manifest = {
                "format": FORMAT if layered is None else LAYERED_FORMAT,
                "tokenizer": SEARCH_TERMS_VERSION,
                "bm25s": _made_by(self._retriever),
                "key": key,
                "documents": len(self._ids),
                "empty": self._retriever is None,
            }
            if layered is not None:
                manifest["base_documents"] = len(layered.base_ids)
            (tmp / _MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
            saved = BaseFiles(Path(directory), BaseFiles.before_loading(tmp).stats)  # the files renamed into place
        self._key = key
        # an update of this object (a process that keeps it) links the files just saved, not the ones it was
        # loaded from (gone, when the directory was replaced), and a merged index's are linked too
        if layered is not None:
            layered.files = saved
        else:
            self.files = saved

    def moved(self, directory: Path) -> None:
        """The files this index saved last now sit in ``directory``: it was saved inside another cache's
        scratch directory, renamed since (the ranking index's three), and its next update links them there."""
        layered = self.layered
        files = layered.files if layered is not None else self.files
        if files is not None:
            files = BaseFiles(Path(directory), files.stats)
            if layered is not None:
                layered.files = files
            else:
                self.files = files

    def _write(self, tmp: Path) -> None:
        if isinstance(self._retriever, Postings):  # a loaded or spliced index: bm25s' files, without bm25s
            _save_postings(self._retriever, tmp / _BM25_DIR)
        elif self._retriever is not None:
            self._retriever.save(tmp / _BM25_DIR, show_progress=False)
            _save_terms(_hashed(self._retriever.vocab_dict), tmp / _BM25_DIR)
        if self.counts is not None and self._retriever is not None:
            self.counts.save(tmp / _COUNTS_DIR)
        _write_ids(tmp, self._ids)

    @staticmethod
    def saved_key(directory: Path) -> str | None:
        """The key of the index saved in ``directory`` (None: none, or of another format), read from its
        manifest alone: whether it is stale, without loading it."""
        try:
            manifest = json.loads((Path(directory) / _MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if manifest.get("format") not in (FORMAT, LAYERED_FORMAT) or manifest.get("tokenizer") != SEARCH_TERMS_VERSION:
            return None
        return str(manifest.get("key", ""))

    @classmethod
    def load(cls, directory: Path, *, mmap: bool = True) -> KeywordIndex:
        """Read an index written by ``save`` (arrays memory-mapped by default).

        Raises ``StoreMissing`` when there is none, ``StoreError`` when it is unreadable or was
        written by an incompatible format or tokenizer: both mean "rebuild".
        """
        directory = Path(directory)
        manifest_path = directory / _MANIFEST
        if not manifest_path.is_file():
            raise StoreMissing(f"no keyword index at {directory}")
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            if manifest.get("format") not in (FORMAT, LAYERED_FORMAT) or manifest.get("tokenizer") != SEARCH_TERMS_VERSION:
                raise StoreError(
                    f"the keyword index at {directory} was written by another version "
                    f"({manifest.get('format')}, {manifest.get('tokenizer')}); rebuild it"
                )
            files = BaseFiles.before_loading(directory)  # before the files are opened: see BaseFiles
            ids = _read_ids(directory, int(manifest.get("base_documents", manifest["documents"])))
            retriever, counts = None, None
            if not manifest["empty"]:
                retriever = Postings.load(directory / _BM25_DIR, mmap=mmap)
                counts = Counts.load(directory / _COUNTS_DIR, mmap=mmap)
            if manifest["format"] == LAYERED_FORMAT:
                return cls._layered(directory, manifest, ids, retriever, counts, files, mmap)
        except StoreError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise StoreError(
                f"the keyword index at {directory} is unreadable ({exc}); rebuild it"
            ) from exc
        if len(ids) != manifest["documents"] or (
            retriever is not None and retriever.scores["num_docs"] != len(ids)
        ):
            raise StoreError(f"the keyword index at {directory} is inconsistent; rebuild it")
        if counts is not None and retriever is not None and (
                counts.tf.size != retriever.scores["data"].size or counts.lengths.size != len(ids)):
            counts = None  # not of these scores: only an update needs them, and it builds in full without
        return cls(ids, retriever, key=str(manifest.get("key", "")), counts=counts, files=files)

    @classmethod
    def _layered(cls, directory: Path, manifest: dict[str, Any], base_ids: Sequence[str], base: Postings | None,
                 counts: Counts | None, files: BaseFiles, mmap: bool) -> KeywordIndex:
        """A base and its delta, checked to fit each other (else ``StoreError``: rebuild)."""
        delta = Delta.load(directory / _DELTA_DIR, mmap=mmap)
        source = np.asarray(delta.source)
        n_base = len(base_ids)
        if (base is None or counts is None or base.scores["num_docs"] != n_base
                or manifest.get("base_documents") != n_base or source.size != manifest["documents"]
                or counts.tf.size != base.scores["data"].size or counts.lengths.size != n_base
                or int((source < 0).sum()) != delta.size or int(source.max(initial=-1)) >= n_base):
            raise StoreError(f"the keyword index at {directory} is inconsistent; rebuild it")
        layered = Layered(base, counts, base_ids, delta, files)
        return cls(layered.ids(), layered, key=str(manifest.get("key", "")))


def _write_base(directory: Path, postings: Postings, counts: Counts, ids: Sequence[str]) -> None:
    """A base's files written from memory (when they cannot be linked: not loaded from disk, or replaced)."""
    _save_postings(postings, directory / _BM25_DIR)
    counts.save(directory / _COUNTS_DIR)
    _write_ids(directory, ids)


def _write_ids(directory: Path, ids: Sequence[str]) -> None:
    """The documents' ids: none when they are their positions (``ids.positions``, empty: the ranking
    index's 100k windows), else a string column (``ids.blob.npy``, ``ids.offsets.npy``), memory-mapped
    by a load and read an id at a time (a standard library's 73k fragment IRIs: ~25 ms to read and split
    as lines at every load, ~12 ms more to parse as JSON)."""
    if positional(ids):
        (directory / _POSITIONS).write_text("", encoding="utf-8")
    else:
        as_column(ids).save(directory, _ID_COLUMN)


def _read_ids(directory: Path, n: int) -> Sequence[str]:
    """What ``_write_ids`` wrote for ``n`` documents (``ids.txt`` or ``ids.json``: an index saved before)."""
    if (directory / _POSITIONS).is_file():
        return Positions(n)
    if (directory / f"{_ID_COLUMN}.blob.npy").is_file():
        ids = StringColumn.load(directory, _ID_COLUMN)
        if len(ids) != n or ids.nulls is not None:
            raise ValueError(f"{directory}: {len(ids)} ids for {n} documents")
        return ids
    if (directory / _ID_LINES).is_file():
        ids = (directory / _ID_LINES).read_text(encoding="utf-8").split("\n") if n else []
        if len(ids) != n:
            raise ValueError(f"{directory / _ID_LINES}: {len(ids)} ids for {n} documents")
        return ids
    return list(json.loads((directory / _IDS).read_text(encoding="utf-8")))


def _save_postings(postings: Postings, directory: Path) -> None:
    """bm25s' file layout for a loaded index (saving one again, e.g. under another key)."""
    directory.mkdir(parents=True)
    for name in ("data", "indices", "indptr"):
        np.save(directory / f"{name}.csc.index.npy", np.asarray(postings.scores[name]))
    (directory / "vocab.index.json").write_bytes(postings.vocab_json())
    (directory / "params.index.json").write_text(json.dumps(postings.params, indent=4), encoding="utf-8")
    _save_terms(postings.hashed_terms(), directory)


def _hashed(vocab: dict[str, int]) -> Vocabulary | None:
    """``vocab``'s terms hashed, when they are numbered 0, 1, ... in order (as every build numbers them)."""
    numbers = np.fromiter(vocab.values(), dtype=np.int64, count=len(vocab))
    return Vocabulary.of(list(vocab)) if np.array_equal(numbers, np.arange(len(vocab))) else None


def _save_terms(terms: Vocabulary | None, directory: Path) -> None:
    """The terms hashed beside bm25s' JSON vocabulary (``_TERMS``): a term is found in a few microseconds,
    where a search of the unparsed JSON (4.5 MB, a standard library's) took 1.5-4 ms a term, ~25 ms of
    every process's first query and of every refresh's update, and parsing it 35-180 ms."""
    if terms is not None:
        terms.save_base(directory, _TERMS)


def _saved_id(text: bytes, term: str) -> int | None:
    """``term``'s id in a JSON object of term -> id, without parsing it: the last occurrence of the
    term's JSON string that stands as a key (after ``{`` or ``,``, before ``:``), as ``json.loads``
    keeps the last of two equal keys. An unescaped quote cannot occur inside a JSON string, so a match
    so placed is a key."""
    key = json.dumps(term, ensure_ascii=False).encode("utf-8")
    end = len(text)
    while (at := text.rfind(key, 0, end)) >= 0:
        end = at
        before = text[max(at - 32, 0):at].rstrip()
        after = text[at + len(key):at + len(key) + 32].lstrip()
        if before.endswith((b"{", b",")) and after.startswith(b":"):
            digits = after[1:].lstrip()
            number = digits[:len(digits) - len(digits.lstrip(b"0123456789"))]
            return int(number) if number else None
    return None
