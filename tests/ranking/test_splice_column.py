"""An updated string column holds each kept row's old string and each redone row's new one, whatever
runs the kept rows form."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from acms.ranking.index import StringColumn
from acms.ranking.splice import _column

WORDS = st.text(alphabet=st.sampled_from("ab_é€\n"), max_size=5)


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, max_size=12), st.data())
def test_each_row_holds_its_kept_or_redone_string(words: list[str], data: st.DataObject) -> None:
    old = StringColumn.of(words)
    pick = st.integers(-1, len(words) - 1) if words else st.just(-1)
    source = data.draw(st.lists(pick, max_size=15))
    redone = data.draw(st.lists(WORDS, min_size=source.count(-1), max_size=source.count(-1)))
    column = _column(old, np.asarray(source, dtype=np.int64), redone)
    fresh = iter(redone)
    assert [column[i] for i in range(len(column))] == [words[s] if s >= 0 else next(fresh) for s in source]
