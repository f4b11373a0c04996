"""TokenTable.lines drops the line breaks in place, a block at a time (issue 14): the same token numbers
and line ends as filtering a copy, whatever the block size; the table then takes no more texts."""

from __future__ import annotations

import random

import numpy as np
import pytest

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
