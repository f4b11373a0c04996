"""An array kept as the parts it was appended from reads as the joined array does."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from acms.index.appended import Appended, appended

PART = st.lists(st.integers(-50, 50), max_size=8).map(lambda v: np.asarray(v, dtype=np.int32))


@settings(max_examples=300, deadline=None)
@given(st.lists(PART, min_size=1, max_size=5), st.data())
def test_every_read_is_the_joined_arrays(parts: list[np.ndarray], data: st.DataObject) -> None:
    grown: np.ndarray | Appended = parts[0]
    for part in parts[1:]:
        grown = appended(grown, part)
        assert not isinstance(grown, Appended) or len(grown.parts) <= 2  # one update's tail joins the last
    whole = np.concatenate(parts)
    assert len(grown) == whole.size and np.array_equal(np.asarray(grown), whole)
    if whole.size:
        index = data.draw(st.lists(st.integers(-whole.size, whole.size - 1), max_size=12))
        assert np.array_equal(grown[np.asarray(index, dtype=np.int64)], whole[np.asarray(index, dtype=np.int64)])
        i = data.draw(st.integers(-whole.size, whole.size - 1))
        assert grown[i] == whole[i]
    start = data.draw(st.integers(-2, whole.size + 2))
    stop = data.draw(st.integers(-2, whole.size + 2))
    assert np.array_equal(grown[start:stop], whole[start:stop])
    assert grown[start:stop].dtype == whole.dtype
