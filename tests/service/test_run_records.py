"""The meta graph keeps the records of the last index runs only: a live index runs once per save."""

from __future__ import annotations

from pathlib import Path

import pytest

from acms.api import Index
from acms.service.freshness import last_run
from acms.service.indexing import after_files

from .indexes import edit


def _runs(idx: Index) -> list[str]:
    rows = idx.query("SELECT ?run ?started WHERE { GRAPH <https://w3id.org/acms/graph/meta> "
                     "{ ?run a uko:IndexRun ; prov:startedAtTime ?started } } ORDER BY DESC(?started)")
    return [str(r["run"]).strip("<>") for r in rows]


def test_only_the_last_runs_records_are_kept(indexed_sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(after_files, "RUNS_KEPT", 3)
    with Index.open(indexed_sample, embed_on_index=False) as idx:
        seen = []
        for i in range(5):
            edit(indexed_sample / "pkg" / "util.py", "Small helpers", f"Small helpers, edit {i},")
            assert idx.index().files_indexed == 1
            with idx.session.reading() as store:
                seen.append(last_run(store))
            kept = _runs(idx)
            assert kept[0] == seen[-1] and len(kept) == min(3, i + 2)  # the sample's own first run, then these
        assert _runs(idx) == seen[:-4:-1]  # the newest three, newest first
        with idx.session.reading() as store:  # the graph state's key is the last run's: it did not move
            assert last_run(store) == seen[-1]
