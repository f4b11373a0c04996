"""Copies and marks in a remote store (a real ``oxigraph serve``): the same uko:copyOf and marks as the
embedded store, and a context there shows the originals only."""

from __future__ import annotations

import shutil
from pathlib import Path

from acms.api import Index
from acms.assembly.protocol import parse_request

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "copies_project"
QUERY = ("SELECT ?p ?a ?o WHERE { GRAPH ?g { ?x ?p ?o } GRAPH ?h { ?x uko:path ?a } "
         "FILTER(?p IN (uko:copyOf, uko:generated, uko:vendored)) }")


def _marks(idx: Index) -> set[tuple[str, str, str]]:
    with idx.reading() as store:
        return {(r["p"].value, r["a"].value, r["o"].value.rsplit("/", 1)[-1]) for r in store.select(QUERY)}


def test_a_remote_store_records_copies_and_answers_with_originals(oxigraph_server: str, tmp_path: Path,
                                                                   project_name: str) -> None:
    root = tmp_path / "copies_project"
    shutil.copytree(FIXTURE, root)
    settings = {"embed_on_index": False, "record_use": False, "project_name": project_name}
    with Index.open(root, **settings) as local, Index.open(root, store=oxigraph_server, **settings) as remote:
        assert local.index().copies == remote.index().copies == 4
        assert _marks(local) == _marks(remote) and len(_marks(remote)) == 6
        request = parse_request({"version": "v0", "id": "00000000-0000-4000-8000-000000000009", "request_id": "r",
                                 "intent": "polygon area with the shoelace formula",
                                 "budgets": {"tokens_max": 2000, "time_ms": 10000}})
        rendered = remote.render(request).assembled
        assert rendered.items and not any(i.candidate.path.startswith("deno/") for i in rendered.items)
        assert "copies, not shown: deno/lib/geometry/polygon.ts" in rendered.rendered
