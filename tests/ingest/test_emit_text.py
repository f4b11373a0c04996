"""emit_file writes N-Quads text (issue 14); the quads Oxigraph parses from it are the ones the
pyoxigraph terms would be, for any text a file can hold."""

from __future__ import annotations

import pyoxigraph as ox
from hypothesis import given, settings
from hypothesis import strategies as st
from pyoxigraph import Literal, NamedNode, Quad

from acms.ingest import emit
from acms.ingest.fragments import FILE, FragmentSpec
from acms.ingest.model import SourceFile
from acms.vocab import TIER_WARM, UKO, XSD, IriMinter

ODD = 'a "quoted" back\\slash\nnew\rreturn\ttab \x00 nul \x7f é \u2028 \U0001f600 \\n literal <iri> ^^ @en .'


def _parse(line: str) -> Quad:
    return next(iter(ox.parse(line.encode("utf-8"), format=ox.RdfFormat.N_QUADS)))


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_a_literal_reads_back_as_the_same_term(value: str) -> None:
    line = f"<urn:s> <urn:p> {emit.nt_literal(value)} <urn:g> .\n"
    assert _parse(line).object == Literal(value)


def test_a_typed_literal_reads_back_as_the_same_term() -> None:
    line = f"<urn:s> <urn:p> {emit.nt_literal('42', XSD.integer.value)} <urn:g> .\n"
    assert _parse(line).object == Literal("42", datatype=XSD.integer)


def test_emitted_quads_are_the_terms_of_the_file() -> None:
    minter = IriMinter("proj")
    source = SourceFile("dir/odd name.txt", ODD, len(ODD.encode()), emit.sha256(ODD), "text")
    frags = [FragmentSpec(FILE, "micro", ODD, 1, 3), FragmentSpec(FILE, "micro", ODD, 1, 3)]  # a repeat
    batch = emit.emit_file(minter, source, None, frags, TIER_WARM, "2024-01-01T00:00:00Z",
                           secrets={"AWS key": 2})
    quads = batch.quads
    assert len(quads) == len(set(quads)) == len(batch.lines)  # the repeated fragment is written once
    f = minter.file(source.path)
    frag = minter.fragment(f, "micro", emit.sha256(ODD))
    expected = {
        Quad(f, UKO.path, Literal(source.path), TIER_WARM),
        Quad(f, UKO.sizeBytes, Literal(str(source.size), datatype=XSD.integer), TIER_WARM),
        Quad(f, UKO.secretKind, Literal("aws_key"), TIER_WARM),
        Quad(frag, UKO.text, Literal(ODD), TIER_WARM),
        Quad(f, UKO.hasFragment, frag, TIER_WARM),
    }
    assert expected <= set(quads)
    assert UKO.tokenCount not in {q.predicate for q in quads}  # a function of the text: counted when asked
    assert all(q.graph_name == TIER_WARM for q in quads)
    assert batch.nquads().count(b"\n") == len(quads)


def _fragments(text: str, specs: list[tuple[str, int, int]]) -> dict[str, tuple[str, int]]:
    """The file's fragments (``(text, start, end)`` each) as emitted: IRI -> (text, start line)."""
    source = SourceFile("m.txt", text, len(text.encode()), emit.sha256(text), "text")
    quads = emit.emit_file(IriMinter("proj"), source, None, [FragmentSpec(FILE, "micro", t, s, e) for t, s, e in specs],
                           TIER_WARM, "2024-01-01T00:00:00Z").quads
    texts = {q.subject.value: q.object.value for q in quads if q.predicate == UKO.text}
    starts = {q.subject.value: int(q.object.value) for q in quads if q.predicate == UKO.startLine}
    return {iri: (texts[iri], starts[iri]) for iri in texts}


def test_a_fragment_keeps_its_iri_when_lines_are_added_above_it() -> None:
    before = _fragments("a\nb\na\n", [("a", 1, 1), ("b", 2, 2), ("a", 3, 3)])
    after = _fragments("new\na\nb\na\n", [("a", 2, 2), ("b", 3, 3), ("a", 4, 4)])
    assert len(before) == 3  # the same text at two places is two fragments
    assert before.keys() == after.keys()  # and neither changes its IRI, as "b" does not, when lines move
    assert sorted(after.values()) == [("a", 2), ("a", 4), ("b", 3)]
    assert {iri: start + 1 for iri, (_, start) in before.items()} == {iri: start for iri, (_, start) in after.items()}


def test_assigned_quads_replace_the_text() -> None:
    minter = IriMinter("proj")
    source = SourceFile("a.txt", "x\n", 2, emit.sha256("x\n"), "text")
    batch = emit.emit_file(minter, source, None, [], TIER_WARM, "2024-01-01T00:00:00Z")
    kept = [q for q in batch.quads if q.predicate != UKO.contentHash]
    batch.quads = kept
    assert list(ox.parse(batch.nquads(), format=ox.RdfFormat.N_QUADS)) == kept
    assert NamedNode(UKO.contentHash.value) not in {q.predicate for q in batch.quads}
