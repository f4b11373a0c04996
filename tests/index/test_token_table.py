"""TokenTable.lines drops the line breaks in place, a block at a time: the same token numbers and line
ends as filtering a copy, whatever the block size; the table then takes no more texts. Lines copied from
an earlier table are those texts tokenised again."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acms.index import token_table
from acms.index.token_table import TokenTable

WORDS = ["a", "bb_cc", "X", "", "  ", "def f(x):", "é", "HTTPServer", "\t"]


@pytest.mark.parametrize("block", [3, 7, 1 << 20])
def test_lines_in_place_equal_a_filtered_copy(block: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(token_table, "_BLOCK", block)
    rnd = random.Random(block)
    table = TokenTable()
    spans = [table.add_lines("\n".join(" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 5)))
                                       for _ in range(rnd.randint(1, 6)))) for _ in range(60)]
    raw = np.frombuffer(table._ids, dtype=np.int32).copy()
    breaks = np.flatnonzero(raw == table.newline)
    got = table.lines()
    np.testing.assert_array_equal(got.ids, raw[raw != table.newline])
    np.testing.assert_array_equal(got.line_ends, breaks - np.arange(breaks.size))
    assert got.line_ends.size == sum(n for _, n in spans) and got.tokens == list(table.vocab)
    with pytest.raises(RuntimeError):
        table.add_lines("more")


def test_no_text() -> None:
    got = TokenTable().lines()
    assert got.ids.size == 0 and got.line_ends.size == 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab_ \n.(x", max_size=30), min_size=1, max_size=8), st.data())
def test_lines_copied_from_an_earlier_table_are_the_texts_tokenised_again(texts: list[str], data: st.DataObject) -> None:
    """A text copied as lines of the table it was tokenised in (a fragment written again unchanged) gives
    the lines tokenising it again gives, empty lines and empty texts included."""
    before = TokenTable()
    placed = [before.add_lines(text) for text in texts]
    old = before.lines()
    copied = data.draw(st.lists(st.integers(0, len(texts) - 1), max_size=6))
    table = TokenTable(old.tokens)
    table.add_lines("a b")  # lines added before the copied ones
    again_first = TokenTable(old.tokens)
    again_first.add_lines("a b")
    for k in copied:
        again_first.add_lines(texts[k])
    firsts = table.copied_lines(old, np.asarray([placed[k][0] for k in copied]), np.asarray([placed[k][1] for k in copied]))
    want, got = again_first.lines(), table.lines()
    assert got.ids.tolist() == want.ids.tolist() and got.line_ends.tolist() == want.line_ends.tolist()
    assert firsts.tolist() == [1 + sum(placed[j][1] for j in copied[:i]) for i in range(len(copied))]
