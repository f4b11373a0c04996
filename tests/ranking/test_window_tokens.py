"""The ranking index's windows handed to the keyword builder a few files at a time (issue 14): the same
saved files whatever the chunk and slice sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

from acms.index import postings
from acms.ranking import window_tokens
from acms.ranking.index import RankingIndex
from tests.ranking.test_index_tokens import _files, _rows


@pytest.mark.parametrize("chunk, slice_", [(1, 5), (50, 1 << 20), (300, 97)])
def test_chunks_and_slices_change_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int,
                                          slice_: int) -> None:
    rows = _rows(5) + _rows(6)
    RankingIndex.build(rows).save(tmp_path / "whole", key="k")
    monkeypatch.setattr(window_tokens, "CHUNK_TOKENS", chunk)
    monkeypatch.setattr(postings, "SLICE_TOKENS", slice_)
    RankingIndex.build(rows).save(tmp_path / "chunked", key="k")
    assert _files(tmp_path / "chunked") == _files(tmp_path / "whole")
