"""A keyword index spliced for changed documents scores every id and query as a full build of the new
documents does, bit for bit: the same terms, every term's scores and every query's, the same document
lengths, whether the update is layered on its base or merged into a full one (``spliced_whole``); saved
and loaded, it splices again."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from acms.index.keyword import KeywordIndex
from acms.index.layers import Positions
from acms.index.splice import _merged_runs, spliced, spliced_whole
from acms.index.token_table import TokenTable

WORDS = [f"w{i}" for i in range(60)] + ["parse_header", "HTTPServer", "read_bytes", "self", "return"]


def _texts(rng: random.Random, n: int, tag: str) -> dict[str, str]:
    return {f"{tag}{i:04d}": " ".join(rng.choices(WORDS, k=rng.randint(0, 30))) for i in range(n)}


def same_answers(got: KeywordIndex, want: KeywordIndex) -> None:
    """The same documents, terms and lengths, and every term's scores bit for bit (the index's content
    as a reader sees it, however it is laid out)."""
    assert got.ids == want.ids
    assert got.terms() == want.terms()
    got_lengths, want_lengths = got.lengths(), want.lengths()
    assert got_lengths is not None and want_lengths is not None
    assert got_lengths.tolist() == want_lengths.tolist()
    for term in want.terms():
        assert got.scores(term).tobytes() == want.scores(term).tobytes(), term


def _update(old: KeywordIndex, texts: dict[str, str], changed: set[str], *, whole: bool = False) -> KeywordIndex | None:
    """Splice ``old`` to ``texts`` (ids sorted), with ``changed`` ids replaced and absent ones dropped."""
    ids = sorted(texts)
    position = {d: i for i, d in enumerate(old.ids)}
    source = np.asarray([-1 if d in changed or d not in position else position[d] for d in ids], dtype=np.int64)
    table = TokenTable()
    parts = [table.ids(texts[d]) for d, s in zip(ids, source.tolist()) if s < 0]
    flat = np.concatenate([np.frombuffer(p, dtype=np.int32) for p in parts]) if parts else np.zeros(0, np.int32)
    lengths = np.asarray([len(p) for p in parts], dtype=np.int64)
    return (spliced_whole if whole else spliced)(old, ids, source, flat, lengths, list(table.vocab))


def _check(got: KeywordIndex, texts: dict[str, str], rng: random.Random) -> None:
    want = KeywordIndex.build(sorted(texts), [texts[d] for d in sorted(texts)])
    same_answers(got, want)
    for _ in range(40):
        query = " ".join(rng.choices(WORDS + ["unknown_word"], k=rng.randint(1, 4)))
        assert got.scores(query).tobytes() == want.scores(query).tobytes(), query
        assert got.scores(query, unique=True).tobytes() == want.scores(query, unique=True).tobytes()
        assert got.top(query, 7) == want.top(query, 7)


@pytest.mark.parametrize(("seed", "whole"), [(seed, seed % 2 == 1) for seed in range(6)])
def test_a_splice_is_a_full_build_of_the_new_documents(seed: int, whole: bool, tmp_path: Path) -> None:
    rng = random.Random(seed)
    texts = _texts(rng, 120, "d")
    index = KeywordIndex.build(sorted(texts), [texts[d] for d in sorted(texts)])
    index.save(tmp_path / "0", key="k0")
    for step in range(4):  # edits, additions and removals, each update from the last one saved and loaded
        old = KeywordIndex.load(tmp_path / str(step))
        ids = sorted(texts)
        changed = set(rng.sample(ids, rng.randint(0, 10)))
        for d in changed:
            texts[d] = " ".join(rng.choices(WORDS + [f"new{step}_{d}"], k=rng.randint(0, 30)))
        for d in rng.sample(ids, rng.randint(0, 10)):
            texts.pop(d)
        texts.update(_texts(rng, rng.randint(0, 8), f"n{step}_"))
        got = _update(old, texts, changed, whole=whole)
        assert got is not None and (got.layered is None or not whole)
        _check(got, texts, rng)
        got.save(tmp_path / str(step + 1), key=f"k{step + 1}")
        again = KeywordIndex.load(tmp_path / str(step + 1))
        assert again.key == f"k{step + 1}" and (again.counts is not None or again.layered is not None)
        _check(again, texts, rng)


def test_every_document_replaced_or_gone(tmp_path: Path) -> None:
    rng = random.Random(7)
    texts = _texts(rng, 30, "d")
    KeywordIndex.build(sorted(texts), [texts[d] for d in sorted(texts)]).save(tmp_path / "old")
    old = KeywordIndex.load(tmp_path / "old")
    got = _update(old, {"z": "parse_header w1 w1"}, set())
    assert got is not None
    _check(got, {"z": "parse_header w1 w1"}, rng)
    gone = _update(old, {"z": ""}, set())
    assert gone is not None and gone.retriever is None and gone.scores("w1").tolist() == [0.0]


def test_what_cannot_be_spliced_says_so(tmp_path: Path) -> None:
    texts = {"a": "w1 w2", "b": "w2 w3", "c": "w3"}
    KeywordIndex.build(sorted(texts), [texts[d] for d in sorted(texts)]).save(tmp_path / "old")
    old = KeywordIndex.load(tmp_path / "old")
    empty = np.zeros(0, dtype=np.int32)
    assert spliced(old, ["a", "b"], np.asarray([1, 0]), empty, np.zeros(0, np.int64), []) is None  # order moved
    no_counts = KeywordIndex(old.ids, old.retriever)
    assert spliced(no_counts, ["a"], np.asarray([0]), empty, np.zeros(0, np.int64), []) is None


@pytest.mark.parametrize("numbering", ["same", "other"])
def test_terms_found_by_number_when_the_numbering_goes_on(numbering: str, tmp_path: Path) -> None:
    """Built from a token list that an update extends (the caches' segment), the index finds the new
    documents' terms by number (its vocabulary is not parsed: new terms are appended to its text); under
    another numbering by name. Either way it is a full build's, and the next update goes on from it."""
    rng = random.Random(11)
    texts = _texts(rng, 80, "d")
    table = TokenTable()

    def documents(ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
        parts = [np.frombuffer(table.ids(texts[d]), dtype=np.int32) for d in ids]
        flat = np.concatenate(parts) if parts else np.zeros(0, np.int32)
        return flat, np.asarray([p.size for p in parts], dtype=np.int64)

    ids = sorted(texts)
    KeywordIndex.from_chunks(ids, [documents(ids)], list(table.vocab), numbering="n1").save(tmp_path / "0")
    name = "n1" if numbering == "same" else "n2"
    for step in range(3):
        old = KeywordIndex.load(tmp_path / str(step))
        assert numbering_of(old) == ("n1" if step == 0 else name)
        changed = set(rng.sample(sorted(texts), 6))
        for d in changed:
            texts[d] = " ".join(rng.choices(WORDS + [f"fresh{step}_{d}"], k=rng.randint(1, 30)))
        texts.update(_texts(rng, 3, f"n{step}_"))
        ids = sorted(texts)
        position = {d: i for i, d in enumerate(old.ids)}
        source = np.asarray([-1 if d in changed or d not in position else position[d] for d in ids])
        flat, lengths = documents([d for d, s in zip(ids, source.tolist()) if s < 0])
        got = spliced(old, ids, source, flat, lengths, list(table.vocab), name)
        assert got is not None and got.retriever is not None
        by_number = numbering_of(old) == name  # "other": by name first (merged), then by the numbering it kept
        base = got.layered.base if got.layered is not None else got.retriever
        assert got.layered is None or by_number  # another numbering merges: the base's numbers are not the caller's
        assert (base._vocab is None) == by_number  # by number: the vocabulary left unparsed
        _check(got, texts, rng)
        got.save(tmp_path / str(step + 1))
        _check(KeywordIndex.load(tmp_path / str(step + 1)), texts, rng)


def numbering_of(index: KeywordIndex) -> str:
    counts = index.layered.counts if index.layered is not None else index.counts
    assert counts is not None
    return counts.numbering


def _edited(old: KeywordIndex, texts: dict[str, str], changed: dict[str, str],
            tokens: list[str]) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """``texts`` with ``changed`` applied, as ``spliced`` takes them over ``old``: the documents, each
    kept one's position in ``old`` (-1: changed), and the changed ones' token numbers and lengths."""
    texts.update(changed)
    ids = sorted(texts)
    position = {d: i for i, d in enumerate(old.ids)}
    source = np.asarray([-1 if d in changed else position[d] for d in ids], dtype=np.int64)
    parts = [[tokens.index(w) for w in texts[d].split()] for d in ids if d in changed]
    flat = np.asarray([n for p in parts for n in p], dtype=np.int32)
    return ids, source, flat, np.asarray([len(p) for p in parts], dtype=np.int64)


def test_a_word_renumbered_away_and_back_stays_one_term(tmp_path: Path) -> None:
    """A compaction of the caller's token list drops a word no document holds any more, so the index
    keeps the term with no token number; when an edit brings the word back under a new number, the term
    is found by name, not added a second time (two terms of one word broke the next merge under another
    numbering: an IndexError in a branch switch's caches phase)."""
    texts = {"d0": "alpha omega", "d1": "beta", "d2": "gamma delta"}

    def step(old: KeywordIndex, changed: dict[str, str], tokens: list[str], numbering: str, at: int) -> KeywordIndex:
        got = spliced(old, *_edited(old, texts, changed, tokens), tokens, numbering)
        assert got is not None
        got.save(tmp_path / str(at))
        loaded = KeywordIndex.load(tmp_path / str(at))
        _check(loaded, texts, random.Random(at))
        held = loaded.retriever  # one number per word: no term is a second number of a word it holds
        assert held is not None
        n_terms = held.n_terms if loaded.layered is not None else len(held.scores["indptr"]) - 1  # type: ignore[union-attr]
        assert n_terms == len(held.vocab_dict), at
        for word in ("omega", "alpha", "beta"):
            want = KeywordIndex.build(sorted(texts), [texts[d] for d in sorted(texts)])
            assert loaded.scores(word).tobytes() == want.scores(word).tobytes(), word
        return loaded

    tokens = ["alpha", "omega", "beta", "gamma", "delta"]
    flat = np.asarray([0, 1, 2, 3, 4], dtype=np.int32)
    KeywordIndex.from_chunks(sorted(texts), [(flat, np.asarray([2, 1, 2], dtype=np.int64))], tokens,
                             numbering="n1").save(tmp_path / "0")
    index = KeywordIndex.load(tmp_path / "0")
    # "omega" leaves every document, and a compaction numbers the tokens again without it
    index = step(index, {"d0": "alpha"}, ["alpha", "beta", "gamma", "delta"], "n2", 1)
    # it comes back under a new number of that numbering
    index = step(index, {"d1": "beta omega"}, ["alpha", "beta", "gamma", "delta", "omega"], "n2", 2)
    # another compaction: a merge under another numbering
    index = step(index, {"d2": "gamma"}, ["alpha", "beta", "gamma", "omega"], "n3", 3)
    assert "omega" in index.terms()


def test_a_compaction_s_renumbering_is_translated_not_merged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Told how a compaction numbered the tokens again, an update of an index of the old numbering
    translates its terms' numbers and stays layered on its base (a merge under another numbering parsed
    the vocabulary and wrote every score: ~1 s of a branch switch's caches); the save writes the new
    numbers beside the linked base without writing through the link, and the next update under the new
    numbering finds its terms by number, the vocabulary never parsed."""
    from acms.index import keyword as keyword_module

    def unparsed(self: object) -> dict[str, int]:
        raise AssertionError("the vocabulary was parsed")

    rng = random.Random(5)
    texts = {f"d{i}": " ".join(rng.choices(["alpha", "beta", "gamma", "delta"], k=rng.randint(1, 4))) for i in range(3, 40)}
    texts.update({"d0": "alpha omega", "d1": "beta", "d2": "gamma delta"})
    tokens = ["alpha", "omega", "beta", "gamma", "delta"]
    parts = [[tokens.index(w) for w in texts[d].split()] for d in sorted(texts)]
    flat = np.asarray([n for p in parts for n in p], dtype=np.int32)
    KeywordIndex.from_chunks(sorted(texts), [(flat, np.asarray([len(p) for p in parts], dtype=np.int64))], tokens,
                             numbering="n1").save(tmp_path / "0")
    index = KeywordIndex.load(tmp_path / "0")

    def step(old: KeywordIndex, changed: dict[str, str], tokens: list[str], at: int,
             renumbered: tuple[str, np.ndarray] | None = None) -> KeywordIndex:
        edited = _edited(old, texts, changed, tokens)
        with monkeypatch.context() as patched:
            if at < 3:  # found by number ("omega", back in the third, by name)
                patched.setattr(keyword_module.Postings, "vocab_dict", property(unparsed))
            got = spliced(old, *edited, tokens, "n2", renumbered)
            assert got is not None and got.layered is not None, at  # a delta over the base, not a merge
            got.save(tmp_path / str(at))
        loaded = KeywordIndex.load(tmp_path / str(at))
        assert loaded.layered is not None
        assert loaded.layered.counts.numbering == "n2"
        _check(loaded, texts, random.Random(at))
        return loaded

    # "omega" leaves every document; the compaction numbers the others again without it
    index = step(index, {"d0": "alpha"}, ["alpha", "beta", "gamma", "delta"], 1,
                 ("n1", np.asarray([0, -1, 1, 2, 3], dtype=np.int64)))
    assert (tmp_path / "0" / "counts" / "numbering.txt").read_text(encoding="utf-8") == "n1"  # the base as it was
    index = step(index, {"d1": "beta gamma"}, ["alpha", "beta", "gamma", "delta", "omega"], 2)
    index = step(index, {"d2": "omega"}, ["alpha", "beta", "gamma", "delta", "omega"], 3)  # back, found by name
    assert index.terms().count("omega") == 1


@pytest.mark.parametrize("whole", [False, True])
def test_documents_named_by_position_stay_so_through_a_splice_and_a_save(whole: bool, tmp_path: Path) -> None:
    """The ranking index's windows are named "0", "1", …: a splice told so (``Positions``) makes no string
    per document, and what it saves loads back with the same names and scores."""
    rng = random.Random(7)
    texts = [" ".join(rng.choices(WORDS, k=rng.randint(1, 20))) for _ in range(40)]
    old = KeywordIndex.build([str(i) for i in range(40)], texts)
    old.save(tmp_path / "old")
    old = KeywordIndex.load(tmp_path / "old")
    new_texts = texts[:10] + ["parse_header read_bytes w1"] + texts[12:]  # 10 and 11 replaced by one
    source = np.asarray(list(range(10)) + [-1] + list(range(12, 40)), dtype=np.int64)
    table = TokenTable()
    flat = np.frombuffer(table.ids(new_texts[10]), dtype=np.int32)
    got = (spliced_whole if whole else spliced)(old, Positions(len(new_texts)), source, flat,
                                                np.asarray([flat.size]), list(table.vocab))
    assert got is not None and isinstance(got.ids, Positions) and got.ids == [str(i) for i in range(len(new_texts))]
    want = KeywordIndex.build([str(i) for i in range(len(new_texts))], new_texts)
    same_answers(got, want)
    got.save(tmp_path / "new")
    same_answers(KeywordIndex.load(tmp_path / "new"), want)


def test_the_manifest_names_bm25s_only_for_scores_bm25s_made(tmp_path: Path) -> None:
    """A full build's scores are bm25s'; an update's are made by acms from the counts (and saving one
    asks no package metadata)."""
    import json

    import bm25s

    texts = {f"d{i}": "parse header value" if i % 2 else "read bytes" for i in range(6)}
    full = KeywordIndex.build(sorted(texts), [texts[d] for d in sorted(texts)])
    full.save(tmp_path / "full")
    assert json.loads((tmp_path / "full" / "manifest.json").read_text())["bm25s"] == bm25s.__version__
    updated = _update(KeywordIndex.load(tmp_path / "full"), {**texts, "d0": "parse bytes"}, {"d0"})
    assert updated is not None
    updated.save(tmp_path / "updated")
    assert json.loads((tmp_path / "updated" / "manifest.json").read_text())["bm25s"] is None


@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 40), st.integers(1, 9)), max_size=60,
                unique_by=lambda p: (p[0], p[1])),
       st.lists(st.booleans(), max_size=60), st.booleans())
def test_two_runs_of_pairs_merge_as_a_sort_of_both_would_order_them(
        pairs: list[tuple[int, int, int]], sides: list[bool], shuffled: bool) -> None:
    """An update's delta pairs and its new documents' pairs, each sorted by (term, document), merged in
    that order; a first run out of order (a delta saved so) is sorted with the second."""
    first = [p for p, side in zip(pairs, sides + [True] * len(pairs)) if side]
    second = sorted(p for p, side in zip(pairs, sides + [True] * len(pairs)) if not side)
    first = random.Random(len(pairs)).sample(first, len(first)) if shuffled else sorted(first)

    def arrays(ps: list[tuple[int, int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (np.asarray([p[0] for p in ps], dtype=np.int64), np.asarray([p[1] for p in ps], dtype=np.int64),
                np.asarray([p[2] for p in ps], dtype=np.int32))

    term, doc, tf = _merged_runs(*arrays(first), *arrays(second), 41)
    assert list(zip(term.tolist(), doc.tolist(), tf.tolist())) == sorted(pairs)
    assert tf.dtype == np.int32


def test_kept_documents_the_base_names_otherwise_are_listed_by_name(tmp_path: Path) -> None:
    """The kept documents' ids are compared with the base's where each run of them starts and ends: a
    caller that renamed them gets an index under its names (listed whole), through a save and a load."""
    texts = {f"d{i}": f"w{i} w{i + 1}" for i in range(8)}
    KeywordIndex.build(sorted(texts), [texts[d] for d in sorted(texts)]).save(tmp_path / "old")
    old = KeywordIndex.load(tmp_path / "old")
    renamed = [f"e{i}" for i in range(8)] + ["f"]  # every document kept, each under another name, and a new one
    table = TokenTable()
    flat = np.frombuffer(table.ids("w1 w9"), dtype=np.int32)
    got = spliced(old, renamed, np.asarray(list(range(8)) + [-1]), flat, np.asarray([flat.size]), list(table.vocab))
    assert got is not None and list(got.ids) == renamed
    got.save(tmp_path / "new", key="k")
    assert list(KeywordIndex.load(tmp_path / "new").ids) == renamed
    assert KeywordIndex.load(tmp_path / "new").top("w9", 1) == [("f", got.scores("w9")[8])]
