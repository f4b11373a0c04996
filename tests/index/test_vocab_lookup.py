"""A saved keyword index answers a query's terms from its vocabulary's text without parsing it, with
the ids the parsed vocabulary gives, for any terms (quotes, backslashes, separators, other scripts)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acms.index.keyword import Postings, _save_postings

terms = st.text(alphabet=st.sampled_from(list('ab"\\\\,: {}_1\u00e9\u4e2d\n')), min_size=0, max_size=6)


@settings(max_examples=200, deadline=None)
@given(vocab=st.dictionaries(terms, st.integers(0, 10**6), max_size=12), asked=st.lists(terms, max_size=8),
       added=st.dictionaries(terms, st.integers(0, 10**6), max_size=3), compact=st.booleans())
def test_looked_up_ids_are_the_parsed_vocabularys(vocab: dict[str, int], asked: list[str], added: dict[str, int],
                                                   compact: bool) -> None:
    separators = (",", ":") if compact else (", ", ": ")
    text = json.dumps(vocab, ensure_ascii=False, separators=separators).encode("utf-8")
    saved = Postings({}, None, {}, text, added)
    parsed = {**vocab, **added}
    queried = asked + list(vocab)[:3] + ([] if compact else [str(i) for i in range(30)])  # and a parse
    assert saved.token_ids(queried) == [parsed[t] for t in queried if t in parsed]
    written = Postings({}, None, {}, saved.vocab_json())  # what an update writes: the text, the added terms after it
    assert written.token_ids(queried) == [parsed[t] for t in queried if t in parsed]


def test_a_long_lived_index_parses_the_vocabulary_once_its_lookups_add_up() -> None:
    vocab = {f"term{i}": i for i in range(100)}
    saved = Postings({}, None, {}, json.dumps(vocab).encode("utf-8"))
    for start in range(0, 40, 5):  # queries of five new terms each
        asked = [f"term{i}" for i in range(start, start + 5)] + ["absent"]
        assert saved.token_ids(asked) == list(range(start, start + 5))
    assert saved._vocab is not None  # more than LOOKUP_TERMS terms looked up: parsed, and used from then on
    assert saved.token_ids(["term99", "absent"]) == [99]


def _postings(vocab: dict[str, int] | None, n_terms: int, text: bytes = b"{}") -> Postings:
    scores = {"data": np.zeros(0, dtype=np.float32), "indices": np.zeros(0, dtype=np.int32),
              "indptr": np.zeros(n_terms + 1, dtype=np.int64), "num_docs": 0}
    return Postings(scores, vocab, {"method": "lucene", "num_docs": 0}, text)


words = st.text(alphabet=st.sampled_from(list('ab"\\\\,: _1\u00e9\u4e2d')), min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(vocab=st.lists(words, unique=True, max_size=20), added=st.lists(words, unique=True, max_size=4),
       asked=st.lists(words, max_size=6))
def test_a_saved_vocabularys_terms_are_found_by_hash_as_the_parsed_one_finds_them(
        tmp_path_factory: pytest.TempPathFactory, vocab: list[str], added: list[str], asked: list[str]) -> None:
    """The terms saved hashed beside the JSON (every build's, and an update's with its added terms after
    them) answer as the parsed vocabulary does, without the text being parsed or searched."""
    added = [w for w in added if w not in vocab]
    numbered = {w: i for i, w in enumerate(vocab)}
    first = tmp_path_factory.mktemp("bm25") / "a"
    _save_postings(_postings(numbered, len(vocab)), first)
    loaded = Postings.load(first)
    assert loaded.terms is not None and list(loaded.terms) == vocab
    grown = loaded.extended(loaded.scores | {"indptr": np.zeros(len(vocab) + len(added) + 1, dtype=np.int64)},
                            loaded.params, {w: len(vocab) + i for i, w in enumerate(added)})
    second = tmp_path_factory.mktemp("bm25") / "b"
    _save_postings(grown, second)
    whole = {**numbered, **{w: len(vocab) + i for i, w in enumerate(added)}}
    for postings in (loaded, grown, Postings.load(second)):
        queried = asked + list(whole)
        expected = [whole[t] for t in queried if t in whole] if postings is not loaded else \
            [numbered[t] for t in queried if t in numbered]
        assert postings.token_ids(queried) == expected
        assert postings._vocab is None and not postings._found  # neither parsed nor searched


def test_a_vocabulary_not_numbered_in_order_is_saved_without_hashed_terms(tmp_path: Path) -> None:
    _save_postings(_postings({"b": 1, "a": 0}, 2), tmp_path / "bm25")
    loaded = Postings.load(tmp_path / "bm25")
    assert loaded.terms is None and loaded.token_ids(["a", "b", "c"]) == [0, 1]


def test_a_vocabulary_saved_without_hashed_terms_gets_them_when_written_whole(tmp_path: Path) -> None:
    """An index an older acms saved (the JSON alone) is written whole by a merge with its terms hashed."""
    vocab = {"alpha": 0, "beta": 1, "gamma": 2}
    text = json.dumps(vocab).encode("utf-8")
    old = _postings(None, 3, text)
    assert old.terms is None
    _save_postings(old.extended(old.scores | {"indptr": np.zeros(5, dtype=np.int64)}, old.params, {"delta": 3}),
                   tmp_path / "bm25")
    loaded = Postings.load(tmp_path / "bm25")
    assert loaded.terms is not None and list(loaded.terms) == ["alpha", "beta", "gamma", "delta"]
    assert loaded.token_ids(["delta", "alpha", "omega"]) == [3, 0] and not loaded._found
