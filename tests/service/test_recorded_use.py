"""What an assembly records as used, for the hot tier: the entities whose code its context shows."""

from __future__ import annotations

from pathlib import Path

from acms.api import Index


def _used(idx: Index) -> set[str]:
    rows = idx.query("SELECT ?e WHERE { GRAPH <https://w3id.org/acms/graph/meta> { ?e uko:useCount ?n } }")
    return {str(r["e"]).strip("<>") for r in rows}


def test_an_assembly_records_the_entities_whose_code_it_shows(indexed_sample: Path) -> None:
    """Bodies (whole or cut) count as used; an outline or a signature around them does not (a JSON render
    of a few thousand tokens holds a hundred such items, and each made the hot set churn)."""
    with Index.open(indexed_sample, embed_on_index=False) as idx:  # the writer records uses directly
        assert _used(idx) == set()
        result = idx.assemble("how are header lines parsed", 1500)
        items = [i.candidate for i in result.assembled.items if i.candidate.tier != "cold"]
        shown = {c.entity for c in items if c.lod != "macro"}
        around = {c.entity for c in items if c.lod == "macro"} - shown
        assert shown and around  # the context holds both kinds
        assert _used(idx) == shown
