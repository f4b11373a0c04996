"""The saved token numbering (``acms.index.vocabulary``): a token is found by its hash, and a table that
looks tokens up there numbers texts as one that numbered every token first."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from acms.index.token_table import TokenTable
from acms.index.tokenize import NEWLINE
from acms.index.vocabulary import Vocabulary

WORD = st.text(alphabet=st.sampled_from("abcxyz_0é€"), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(st.lists(WORD, unique=True, max_size=30), st.lists(WORD, unique=True, max_size=5), st.lists(WORD, max_size=10))
def test_every_token_is_found_by_its_number_saved_or_not(tmp_path_factory: object, tokens: list[str],
                                                         added: list[str], asked: list[str]) -> None:
    added = [t for t in added if t not in tokens]
    folder: Path = tmp_path_factory.mktemp("vocabulary")  # type: ignore[attr-defined]
    made = Vocabulary.of(tokens)
    assert made.save_base(folder, "tokens") == len(tokens)
    for vocabulary in (made, Vocabulary.load(folder, "tokens")):
        grown = vocabulary.extended(added)
        whole = tokens + added
        assert list(grown) == whole and len(grown) == len(whole) and grown[len(tokens):] == added
        assert [grown[i] for i in range(len(whole))] == whole
        for word in whole + asked:
            assert grown.number(word) == (whole.index(word) if word in whole else None)


def test_tokens_of_one_hash_are_told_apart() -> None:
    """CRC-32 pairs: 'plumless' and 'buckeroo' share one (a known collision)."""
    vocabulary = Vocabulary.of([NEWLINE, "plumless", "buckeroo"])
    assert int(vocabulary.hashes[1]) == int(vocabulary.hashes[2])
    assert (vocabulary.number("plumless"), vocabulary.number("buckeroo"), vocabulary.number("x")) == (1, 2, None)


TEXT = st.lists(st.sampled_from(["alpha", "beta_gamma", "Delta", "x1", "é", "new_word", "  ", "\n", "(", "."]),
                max_size=30).map("".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=4), st.lists(TEXT, max_size=4))
def test_a_table_that_looks_tokens_up_numbers_as_one_that_numbered_them_all(before: list[str],
                                                                            after: list[str]) -> None:
    first = TokenTable()
    for text in before:
        first.add_lines(text)
    saved = first.lines().tokens
    eager, looked = TokenTable(saved), TokenTable.over(Vocabulary.of(saved))
    for table in (eager, looked):
        for text in after:
            table.add_lines(text)
        table.ids("beta_gamma new_word")
    a, b = eager.lines(), looked.lines()
    assert a.ids.tolist() == b.ids.tolist() and a.line_ends.tolist() == b.line_ends.tolist()
    assert list(a.tokens) == list(b.tokens)
    assert looked.numbering() is None and eager.numbering() is not None


@settings(max_examples=100, deadline=None)
@given(st.lists(WORD, unique=True, max_size=30), st.lists(WORD, unique=True, max_size=8))
def test_a_tail_hashed_into_the_base_is_what_hashing_every_token_makes(tokens: list[str], added: list[str]) -> None:
    grown = Vocabulary.of(tokens).extended([t for t in added if t not in tokens])
    whole, again = grown.whole(), Vocabulary.of(list(grown))
    assert list(whole) == list(again) and not whole.tail
    assert whole.hashes.tolist() == again.hashes.tolist() and whole.order.tolist() == again.order.tolist()
