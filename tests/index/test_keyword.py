from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import bm25s
import numpy as np
import pytest

from acms.errors import StoreError, StoreMissing
from acms.index import keyword
from acms.index.keyword import KeywordIndex
from acms.index.tokenize import STOP_WORDS, s_stem, search_terms
from acms.removal import removals_settled

CODE = {
    "f:server": "class HTTPServer(BaseServer):\n    def serve_forever(self): self.poll()",
    "f:header": "def parseHttpHeader(raw: bytes) -> dict:\n    return dict(line.split(':') for line in raw)",
    "f:cookie": "def read_cookie(headers):\n    return headers.get('cookie')",
    "f:json": "def load_json(path):\n    with open(path) as fh: return json.load(fh)",
    "f:retry": "def retry_with_backoff(fn, attempts=3):\n    for i in range(attempts): fn()",
    "f:empty": "",
}

PROSE = [
    "the quick brown fox jumps over the lazy dog",
    "a lazy dog sleeps all day in the sun",
    "foxes are quick and clever animals",
    "the sun rises in the east and sets in the west",
    "clever dogs learn quick tricks from patient owners",
    "brown bears and brown foxes share the forest",
    "owners walk their dogs in the forest every day",
]


def build(docs: dict[str, str]) -> KeywordIndex:
    return KeywordIndex.build(list(docs), list(docs.values()))


def test_rare_identifier_ranks_its_fragment_first() -> None:
    index = build(CODE)
    hits = index.top("where is parse_http_header implemented", 3)
    assert hits[0][0] == "f:header"
    assert index.top("parseHttpHeader", 1)[0][0] == "f:header"
    assert index.top("http server", 1)[0][0] == "f:server"
    scores = index.scores("retry backoff")
    assert scores.dtype == np.float32 and scores.shape == (len(CODE),)
    assert scores[list(CODE).index("f:retry")] > 0
    assert scores[list(CODE).index("f:json")] == 0


def _lucene_bm25(docs: list[list[str]], query: list[str], k1=1.5, b=0.75) -> list[float]:
    """BM25 written out from the formula (Lucene variant, as bm25s' default)."""
    n = len(docs)
    avgdl = sum(map(len, docs)) / n
    df = Counter(t for d in docs for t in set(d))
    out = []
    for d in docs:
        tf = Counter(d)
        s = 0.0
        for q in query:
            if tf[q]:
                idf = math.log(1 + (n - df[q] + 0.5) / (df[q] + 0.5))
                s += idf * tf[q] / (tf[q] + k1 * (1 - b + b * len(d) / avgdl))
        out.append(s)
    return out


@pytest.mark.parametrize("query", ["parse http header", "self", "dict line raw", "fn attempts fn", "nothing"])
def test_scores_equal_hand_computed_bm25(query: str) -> None:
    index = build(CODE)
    expected = _lucene_bm25([search_terms(t) for t in CODE.values()], search_terms(query))
    np.testing.assert_allclose(index.scores(query), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("query", ["quick fox", "lazy dog in the sun", "brown forest", "clever owners"])
def test_differential_against_plain_bm25s_on_prose(query: str) -> None:
    # On lower-case prose, search_terms and bm25s' default split agree once the stop lists and stemmers do.
    ids = [f"p{i}" for i in range(len(PROSE))]
    index = KeywordIndex.build(ids, PROSE)
    stop = sorted(STOP_WORDS)
    plain = bm25s.BM25()
    plain.index(bm25s.tokenize(PROSE, stopwords=stop, stemmer=lambda words: [s_stem(w) for w in words], show_progress=False), show_progress=False)
    q = bm25s.tokenize(query, stopwords=stop, stemmer=lambda words: [s_stem(w) for w in words], show_progress=False, return_ids=False)[0]
    expected = plain.get_scores(q)
    np.testing.assert_allclose(index.scores(query), expected, rtol=1e-6)
    docs, scores = plain.retrieve([q], k=len(PROSE), show_progress=False)
    want = [(ids[d], float(s)) for d, s in zip(docs[0], scores[0]) if s > 0]
    got = index.top(query, len(PROSE))
    assert [i for i, _ in got] == [i for i, _ in sorted(want, key=lambda p: (-p[1], p[0]))]


def test_vectorised_build_is_bm25s_index_bit_for_bit() -> None:
    texts = list(CODE.values()) * 3 + PROSE
    index = KeywordIndex.build([str(i) for i in range(len(texts))], texts)
    mine = index._retriever
    assert mine is not None
    reference = bm25s.BM25()
    reference.index(
        bm25s.tokenization.Tokenized(
            ids=[[mine.vocab_dict[t] for t in search_terms(x)] for x in texts], vocab=mine.vocab_dict
        ),
        create_empty_token=False,
        show_progress=False,
    )
    for name in ("data", "indices", "indptr"):
        assert mine.scores[name].dtype == reference.scores[name].dtype, name
        np.testing.assert_array_equal(mine.scores[name], reference.scores[name], err_msg=name)
    assert mine.scores["num_docs"] == reference.scores["num_docs"]
    assert mine.unique_token_ids_set == reference.unique_token_ids_set


def test_top_orders_by_score_then_id_and_keeps_only_positive() -> None:
    index = KeywordIndex.build(["c", "a", "b", "d"], ["alpha beta", "alpha beta", "alpha beta", "gamma"])
    assert [i for i, _ in index.top("alpha", 10)] == ["a", "b", "c"]
    assert [i for i, _ in index.top("alpha", 2)] == ["a", "b"]  # ties at the cut go by id too
    assert index.top("alpha", 0) == []
    assert index.top("gamma alpha", 1)[0][0] == "d"  # rarer term, higher idf
    assert all(isinstance(s, float) and s > 0 for _, s in index.top("alpha", 10))
    graded = KeywordIndex.build(["x", "y", "z"], ["beta beta beta", "beta beta", "beta gamma delta"])
    assert [i for i, _ in graded.top("beta", 2)] == ["x", "y"]
    assert [i for i, _ in graded.top("beta", 5)] == ["x", "y", "z"]


def test_empty_corpus_and_unknown_query() -> None:
    for index in (KeywordIndex.build([], []), KeywordIndex.build(["x", "y"], ["", "a ."])):
        assert index.scores("anything at all").shape == (len(index),)
        assert not index.scores("anything at all").any()
        assert index.top("anything", 5) == []
    index = build(CODE)
    assert not index.scores("zebra quokka").any()
    assert not index.scores("").any()
    assert index.top("the of and", 3) == []


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="unique"):
        KeywordIndex.build(["a", "a"], ["x", "y"])
    with pytest.raises(ValueError):
        KeywordIndex.build(["a"], ["x", "y"])


def test_save_load_round_trip_with_key(tmp_path: Path) -> None:
    index = build(CODE)
    target = tmp_path / "kw"
    index.save(target, key="digest-1")
    loaded = KeywordIndex.load(target)
    assert loaded.key == "digest-1" and index.key == "digest-1"
    assert loaded.ids == index.ids
    for q in ("parse http header", "self poll", "json"):
        np.testing.assert_array_equal(loaded.scores(q), index.scores(q))
        assert loaded.top(q, 3) == index.top(q, 3)
    assert isinstance(loaded._retriever.scores["data"], np.memmap)
    assert json.loads((target / "manifest.json").read_text())["key"] == "digest-1"


def test_save_replaces_atomically_and_leaves_no_debris(tmp_path: Path) -> None:
    target = tmp_path / "kw"
    build(CODE).save(target, key="one")
    KeywordIndex.build(["only"], ["parse http header"]).save(target, key="two")
    loaded = KeywordIndex.load(target)
    assert loaded.key == "two" and loaded.ids == ("only",)
    assert removals_settled(timeout=30)  # the version moved aside goes in the background
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kw"]


def test_failed_save_keeps_previous_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "kw"
    build(CODE).save(target, key="good")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(bm25s.BM25, "save", boom)
    with pytest.raises(OSError, match="disk full"):
        build(CODE).save(target, key="bad")
    assert KeywordIndex.load(target).key == "good"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kw"]


def test_empty_index_round_trip(tmp_path: Path) -> None:
    KeywordIndex.build([], []).save(tmp_path / "kw", key="k")
    loaded = KeywordIndex.load(tmp_path / "kw")
    assert len(loaded) == 0 and loaded.key == "k" and loaded.top("x y", 3) == []


def test_load_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(StoreMissing):
        KeywordIndex.load(tmp_path / "nothing")
    target = tmp_path / "kw"
    build(CODE).save(target, key="k")
    monkeypatch.setattr(keyword, "SEARCH_TERMS_VERSION", "search-terms/999")
    with pytest.raises(StoreError, match="rebuild"):
        KeywordIndex.load(target)
    monkeypatch.undo()
    ids = list(KeywordIndex.load(target).ids)
    np.save(target / "ids.offsets.npy", np.asarray([0, 1], dtype=np.int64))  # one id, of more documents
    with pytest.raises(StoreError, match="unreadable"):
        KeywordIndex.load(target)
    for name in ("ids.blob.npy", "ids.offsets.npy"):
        (target / name).unlink()
    (target / "ids.txt").write_text("\n".join(ids), encoding="utf-8")  # as an older acms saved them: still read
    assert list(KeywordIndex.load(target).ids) == ids
    (target / "ids.txt").write_text("only one id", encoding="utf-8")  # of more documents
    with pytest.raises(StoreError, match="unreadable"):
        KeywordIndex.load(target)
    (target / "ids.txt").unlink()
    (target / "ids.json").write_text("[1, 2", encoding="utf-8")  # as an older acms saved them
    with pytest.raises(StoreError, match="unreadable"):
        KeywordIndex.load(target)


@pytest.mark.parametrize("ids", [["a.py#f", "b.py#g", ""], ["0", "1", "2"], ["x\ny", "z"], []])
def test_ids_come_back_as_saved_whatever_they_hold(tmp_path: Path, ids: list[str]) -> None:
    """Saved one a line, as their positions (the ranking index's windows: no file of 100k strings), or as
    JSON when one holds a line break."""
    index = KeywordIndex.build(ids, ["parse header"] * len(ids))
    index.save(tmp_path / "kw")
    loaded = KeywordIndex.load(tmp_path / "kw")
    assert list(loaded.ids) == ids and loaded.top("parse", 2) == index.top("parse", 2)
    assert (tmp_path / "kw" / "ids.positions").is_file() == (ids == ["0", "1", "2"])


def test_unique_counts_each_query_token_once() -> None:
    """``unique=True``: a query that repeats a word scores as if it said it once; the default counts it again."""
    index = build(CODE)
    once, repeated = "parse header cookie", "parse parse parse header cookie cookie"
    np.testing.assert_array_equal(index.scores(repeated, unique=True), index.scores(once, unique=True))
    np.testing.assert_array_equal(index.scores(once, unique=True), index.scores(once))  # nothing repeated: same
    assert not np.allclose(index.scores(repeated), index.scores(once))  # the default weights repetition
    docs = [search_terms(t) for t in CODE.values()]
    np.testing.assert_allclose(index.scores(repeated, unique=True), _lucene_bm25(docs, ["parse", "header", "cookie"]),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(index.scores(repeated), _lucene_bm25(docs, search_terms(repeated)), rtol=1e-5, atol=1e-6)


def test_unique_dedupes_tokens_not_spellings() -> None:
    """Uniqueness is over code tokens: "parseHttpHeader" and "parse_http_header" share parse/http/header."""
    index = build(CODE)
    docs = [search_terms(t) for t in CODE.values()]
    query = "parseHttpHeader parse_http_header"
    expected = _lucene_bm25(docs, list(dict.fromkeys(search_terms(query))))
    np.testing.assert_allclose(index.scores(query, unique=True), expected, rtol=1e-5, atol=1e-6)
    assert not index.scores("zebra zebra", unique=True).any()


def test_loaded_postings_score_as_bm25s_load_bit_for_bit(tmp_path: Path) -> None:
    """The read path scores without importing bm25s (issue 14); bm25s' own loader is the reference."""
    texts = list(CODE.values()) * 3 + PROSE
    index = KeywordIndex.build([str(i) for i in range(len(texts))], texts)
    index.save(tmp_path / "kw", key="k")
    loaded = KeywordIndex.load(tmp_path / "kw")
    assert isinstance(loaded._retriever, keyword.Postings)
    reference = bm25s.BM25.load(tmp_path / "kw" / "bm25", mmap=True, show_progress=False)
    assert loaded._retriever.vocab_dict == reference.vocab_dict
    vocab = reference.vocab_dict
    for query in ("parse http header", "self poll poll", "json the of", "header header parse_http_header"):
        ids = [vocab[t] for t in search_terms(query) if t in vocab]
        if not ids:
            continue
        np.testing.assert_array_equal(loaded._retriever.get_scores_from_ids(ids), reference.get_scores_from_ids(ids))
    loaded.save(tmp_path / "again", key="k2")  # a loaded index saves again, unchanged
    again = KeywordIndex.load(tmp_path / "again")
    np.testing.assert_array_equal(again.scores("parse http header"), index.scores("parse http header"))


def test_postings_by_slices_and_chunks_equal_one_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """The postings are counted a few documents at a time and spilled (bounded memory, issue 14): the
    arrays and vocabulary are those of one slice, however the documents are cut into chunks and slices."""
    from acms.index import postings

    rng = np.random.default_rng(1)
    lengths = rng.integers(0, 50, size=3000).astype(np.int64)
    lengths[[0, 7, 2999]] = 0  # empty documents, first and last among them
    terms = rng.integers(0, 2000, size=int(lengths.sum())).astype(np.int32)
    tokens = [f"t{i}" for i in range(2000)]
    whole = KeywordIndex.from_token_ids([str(i) for i in range(3000)], terms, lengths, tokens)._retriever
    monkeypatch.setattr(postings, "SLICE_TOKENS", 997)
    ends = np.concatenate([[0], np.cumsum(lengths)])
    cuts = [0, 1, 2, 500, 1999, 2000, 3000]
    chunks = [(terms[ends[a]:ends[b]], lengths[a:b]) for a, b in zip(cuts, cuts[1:])]
    sliced = KeywordIndex.from_chunks([str(i) for i in range(3000)], chunks, tokens)._retriever
    assert whole is not None and sliced is not None
    for name in ("data", "indices", "indptr"):
        assert whole.scores[name].dtype == sliced.scores[name].dtype, name
        np.testing.assert_array_equal(whole.scores[name], sliced.scores[name], err_msg=name)
    assert whole.vocab_dict == sliced.vocab_dict and whole.scores["num_docs"] == sliced.scores["num_docs"] == 3000
