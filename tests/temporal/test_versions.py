"""Re-indexing a changed file: versions in cold, chained, with validity times; moves are not changes."""

from __future__ import annotations

from pathlib import Path

from acms.store.oxigraph import OxigraphStore
from acms.temporal import tiers
from acms.vocab import TIER_COLD, IriMinter

from ..conftest import run_index

M = IriMinter("sample")
NORMALIZE = M.code("pkg/util.py", "pkg.util.normalize")


def _versions(root: Path) -> list[dict[str, str]]:
    store = OxigraphStore.open_existing(root / ".acms" / "graph")
    try:
        rows = store.select(
            "SELECT ?v ?t ?next ?prev ?text WHERE { GRAPH <%s> { ?v prov:specializationOf <%s> ; "
            "prov:invalidatedAtTime ?t ; uko:hasFragment ?f . ?f uko:lod 'micro' ; uko:text ?text . "
            "OPTIONAL { ?v uko:supersededBy ?next } OPTIONAL { ?v prov:wasRevisionOf ?prev } } } ORDER BY ?t"
            % (TIER_COLD.value, NORMALIZE.value))
        assert tiers.violations(store) == []
        return [{k: v.value for k, v in r.items()} for r in rows]
    finally:
        store.close()


def test_each_change_leaves_a_version_chained_to_the_next(indexed_sample: Path) -> None:
    util = indexed_sample / "pkg" / "util.py"
    original = util.read_text()
    util.write_text(original.replace("return text.strip().lower()", "return text.strip().casefold()"))
    assert run_index(indexed_sample).versions_archived >= 1
    util.write_text(util.read_text().replace(".casefold()", ".lower().strip()"))
    run_index(indexed_sample)
    v = _versions(indexed_sample)
    assert len(v) == 2
    assert "text.strip().lower()" in v[0]["text"] and "casefold" in v[1]["text"]
    assert v[0]["next"] == v[1]["v"] and v[1]["prev"] == v[0]["v"]  # oldest -> newer -> the entity
    assert v[1]["next"] == NORMALIZE.value and "prev" not in v[0]
    assert v[0]["t"] < v[1]["t"]


def test_a_move_is_not_a_new_version(indexed_sample: Path) -> None:
    util = indexed_sample / "pkg" / "util.py"
    util.write_text("\n\n" + util.read_text())  # the functions move down, their text is the same
    report = run_index(indexed_sample)
    assert report.files_indexed == 1
    assert _versions(indexed_sample) == []  # normalize moved: no version
    assert report.versions_archived == 1  # only the module, whose own text gained the blank lines


def test_a_batchs_fragment_owners_read_from_its_text_are_those_of_its_quads() -> None:
    """``archive(by_iri=True)`` takes a streamed batch's ``uko:hasFragment`` links from its N-Quads text,
    not from parsed quads: the same owners, fragment by fragment."""
    from acms.ingest.extractors import extract
    from acms.ingest.emit import emit_file
    from acms.ingest.model import SourceFile
    from acms.temporal.versions import fragment_iri_sets, fragment_owners, fragment_parts
    from acms.vocab import TIER_WARM

    src = (Path(__file__).resolve().parents[1] / "fixtures" / "sample_project" / "pkg" / "mod.py").read_text()
    source = SourceFile("pkg/mod.py", src, len(src), "0" * 64, "python")
    ext, frags = extract(source, {"pkg/mod.py"}, 40)
    batch = emit_file(IriMinter("proj"), source, ext, frags, TIER_WARM, "2026-01-01T00:00:00Z")
    from_text = fragment_owners(batch.nquads())
    from_quads = fragment_parts(batch.quads)
    assert from_text.owners == from_quads.owners and len(from_text.owners) > 5
    assert fragment_iri_sets(from_text) == fragment_iri_sets(batch.quads)


def test_a_fragment_iri_is_told_apart_from_an_entity_of_a_project_named_frag() -> None:
    """The owner and the text hash are read from a fragment's IRI, never from an entity's, whatever the
    project is called."""
    from acms.temporal.versions import _iri_key, owner_key
    from acms.vocab import fragment_owner

    minter = IriMinter("frag")
    entity = minter.code("frag/code.py", "frag.code.run")
    fragment = minter.fragment(entity, "micro", "ab" * 32, occurrence=2)
    assert owner_key(entity.value) is None and owner_key(minter.file("frag/x.py").value) is None
    assert owner_key(fragment.value) == fragment_owner(entity.value)
    assert _iri_key(fragment.value) == ("micro", ("ab" * 32)[:16])
