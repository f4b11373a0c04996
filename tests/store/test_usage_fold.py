"""The readers' usage log folds into the meta graph in one update, as one update per logged line did."""

from __future__ import annotations

import json
from pathlib import Path

from pyoxigraph import Literal, NamedNode

from acms.sparql import catalog
from acms.store import usage
from acms.store.oxigraph import OxigraphStore
from acms.vocab import XSD

META = "SELECT ?e ?p ?o WHERE { GRAPH <https://w3id.org/acms/graph/meta> { ?e ?p ?o } }"
BASE = "https://w3id.org/acms/id/p/code/m.py#"


def _lines(root: Path) -> list[str]:
    """Uses over three moments, entities met once or several times, one used before the log (its count
    goes on), a line with an IRI no store takes, and a torn last line (a reader killed mid-write)."""
    lines = [json.dumps({"t": t, "e": [BASE + e for e in es]}) for t, es in (
        ("2026-11-29T10:00:00Z", ["a", "b"]),
        ("2026-11-29T10:05:00Z", ["b", "c"]),
        ("2026-11-29T10:01:00Z", ["a"]),  # out of order: the last line's time wins, as before
    )]
    lines.append(json.dumps({"t": "2026-11-29T10:09:00Z", "e": ["not an iri<>"]}))
    lines.append('{"t": "2026-11-29T10:10:00Z", "e": ["' + BASE + 'd"')
    return lines


def _meta(store: OxigraphStore) -> set[tuple[str, str, str]]:
    return {(r["e"].value, r["p"].value, r["o"].value) for r in store.select(META)}


def _seeded(path: Path) -> OxigraphStore:
    store = OxigraphStore(path)
    store.update(catalog.text("rules/record-use.ru"), {
        "e": [NamedNode(BASE + "a")], "now": Literal("2026-11-28T09:00:00Z", datatype=XSD.dateTime)})
    return store


def test_one_fold_counts_the_log_as_a_line_at_a_time(tmp_path: Path) -> None:
    lines = _lines(tmp_path)
    folded = _seeded(tmp_path / "folded" / "graph")
    (tmp_path / "folded" / "usage.log").write_text("\n".join(lines), encoding="utf-8")
    try:
        assert usage.fold(folded, tmp_path / "folded") == 5
        got = _meta(folded)
    finally:
        folded.close()
    assert not (tmp_path / "folded" / "usage.log").exists() and not (tmp_path / "folded" / "usage.log.folding").exists()

    by_line = _seeded(tmp_path / "by-line" / "graph")  # what the fold did before: one update per line
    try:
        for raw in lines[:3]:
            entry = json.loads(raw)
            by_line.update(catalog.text("rules/record-use.ru"), {
                "e": [NamedNode(e) for e in entry["e"]], "now": Literal(entry["t"], datatype=XSD.dateTime)})
        want = _meta(by_line)
    finally:
        by_line.close()
    assert got == want
    counts = {e.rsplit("#", 1)[-1]: int(o) for e, p, o in got if p.endswith("#useCount")}
    assert counts == {"a": 3, "b": 2, "c": 1}


def test_an_empty_or_torn_log_folds_to_nothing(tmp_path: Path) -> None:
    store = OxigraphStore(tmp_path / "graph")
    (tmp_path / "usage.log").write_text('{"t": "2026-11-29T10:10:00Z", "e": ["' + BASE + 'd"', encoding="utf-8")
    try:
        assert usage.fold(store, tmp_path) == 0
        assert _meta(store) == set()
    finally:
        store.close()
