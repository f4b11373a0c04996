"""Superseded versions: what a re-index replaces goes to the cold tier instead of away.

An entity (or file) is archived only when its content changed: the set of (level of detail, text) of
its fragments differs from the new one, or it is gone. A move alone (new line numbers, same
text) is not a new version. The cold copy is built by two CONSTRUCT rules (``archive-entities``,
``archive-fragments``) and validated with the rest of the batch; ``relink-versions`` chains the
previous version to it, and the new version points at the current entity while one exists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from pyoxigraph import Literal, NamedNode, Quad

from acms.sparql import catalog
from acms.store.protocol import GraphStore
from acms.vocab import TIER_COLD, UKO, XSD, fragment_iri_parts

Update = tuple[str, dict[str, object] | None]  # an update's text and its parameters, for store.replace


@dataclass
class Archive:
    quads: list[Quad] = field(default_factory=list)
    updates: list[Update] = field(default_factory=list)
    entities: list[NamedNode] = field(default_factory=list)


class FragmentParts(NamedTuple):
    """What fragment sets are made of, gathered from quads: each fragment's lod and text, its owners."""

    lod: dict[object, str]
    text: dict[object, str]
    owners: dict[object, list[NamedNode]]


def fragment_parts(quads: Iterable[Quad], into: FragmentParts | None = None) -> FragmentParts:
    """The lods, texts and owners among ``quads``, added to ``into`` (parts gathered file by file and
    added in order are those of all the quads at once). The predicates are looked up once and each
    quad's asked for once (a term read from a quad is a new object: a 300-file batch's 250k quads took 1.2 s)."""
    parts = into if into is not None else FragmentParts({}, {}, {})
    lod, text, owners = parts
    lod_p, text_p, has_p = UKO.lod, UKO.text, UKO.hasFragment
    for q in quads:
        p = q.predicate
        if p == lod_p:
            lod[q.subject] = q.object.value
        elif p == text_p:
            text[q.subject] = q.object.value
        elif p == has_p and isinstance(s := q.subject, NamedNode):
            owners.setdefault(q.object, []).append(s)
    return parts


def fragment_sets(quads: Iterable[Quad] | FragmentParts) -> dict[NamedNode, set[tuple[str, str]]]:
    """owner -> {(lod, text)} of the fragments a batch emits (or of parts gathered already)."""
    lod, text, owners = quads if isinstance(quads, FragmentParts) else fragment_parts(quads)
    return _by_owner(owners, lambda frag: (lod.get(frag, ""), text.get(frag, "")))


def _by_owner(owners: dict[object, list[NamedNode]],
              key: Callable[[object], tuple[str, str]]) -> dict[NamedNode, set[tuple[str, str]]]:
    """owner -> the keys of its fragments."""
    out: dict[NamedNode, set[tuple[str, str]]] = {}
    for frag, who in owners.items():
        k = key(frag)
        for owner in who:
            out.setdefault(owner, set()).add(k)
    return out


def fragment_owners(nquads: bytes, into: FragmentParts | None = None) -> FragmentParts:
    """The ``uko:hasFragment`` links among N-Quads acms emitted (a quad a line; its IRIs are ASCII,
    percent-encoded), as fragment parts with their owners only, added to ``into``: what
    ``archive(by_iri=True)`` needs of a new batch, found without parsing every quad (a 1,491-file
    re-index of the standard library parsed 2.1 s of quads for it)."""
    parts = into if into is not None else FragmentParts({}, {}, {})
    marker = f" <{UKO.hasFragment.value}> <".encode()
    for line in nquads.split(b"\n"):
        if marker in line and line.startswith(b"<"):
            subject, _, obj = line.split(b" ", 3)[:3]
            parts.owners.setdefault(NamedNode(obj[1:-1].decode()), []).append(NamedNode(subject[1:-1].decode()))
    return parts


def fragment_iri_sets(quads: Iterable[Quad] | FragmentParts) -> dict[NamedNode, set[tuple[str, str]]]:
    """owner -> {(lod, text hash)} of the fragments a batch emits, read from their IRIs (``_iri_key``)."""
    _, _, owners = quads if isinstance(quads, FragmentParts) else fragment_parts(quads)
    return _by_owner(owners, lambda frag: _iri_key(frag.value))  # type: ignore[attr-defined]


def owner_key(fragment: str) -> str | None:
    """The owner part of a fragment IRI (``fragment_owner`` of its entity), None for another IRI."""
    found = fragment_iri_parts(fragment)
    return None if found is None else found[0]


def _iri_key(fragment: str) -> tuple[str, str]:
    """(lod, text hash) of a fragment IRI: the same text twice in an entity is one element, as
    ``fragment_sets`` counts it; an IRI ``IriMinter.fragment`` did not mint stands for itself."""
    found = fragment_iri_parts(fragment)
    return (fragment, "") if found is None else found[1:]


def archive(store: GraphStore, replaced_files: list[NamedNode], new_quads: Sequence[Quad] | FragmentParts,
            stamp: str, now_iso: str, old_quads: Sequence[Quad] | FragmentParts | None = None, *,
            by_iri: bool = False) -> Archive:
    """Cold versions of the replaced files' entities whose content changed or vanished. ``new_quads``: the
    new batch, or its fragment parts when the caller gathered them already. ``old_quads``: the files'
    current quads, or the fragment parts of those outside the cold tier, when the run read them already (a
    store that rewrites by a diff): the old texts are taken from them rather than asked for again
    (``rules/entity-fragment-texts``). ``by_iri``: the stored fragments were minted as the new ones are
    (no migration between), so each one's level of detail and text hash are read from its IRI, in
    ``old_quads``' owners and ``new_quads``' (fragment parts whose owners are all that is asked for): a
    re-index of 1,500 changed files of the standard library read their texts in 4.3 s, their IRIs in 2.2 s."""
    out = Archive()
    if not replaced_files:
        return out
    by_iri = by_iri and isinstance(old_quads, FragmentParts)  # old and new alike, or by text
    old: dict[NamedNode, set[tuple[str, str]]] = {}
    if isinstance(old_quads, FragmentParts):
        old = fragment_iri_sets(old_quads) if by_iri else fragment_sets(old_quads)
    elif old_quads is not None:
        old = fragment_sets([q for q in old_quads if q.graph_name != TIER_COLD])
    else:
        for r in store.select(catalog.text("rules/entity-fragment-texts"), {"file": replaced_files}):
            old.setdefault(r["e"], set()).add((r["lod"].value, r["text"].value))  # type: ignore[arg-type]
    new = fragment_iri_sets(new_quads) if by_iri else fragment_sets(new_quads)
    changed = sorted((e for e, frags in old.items() if new.get(e) != frags), key=lambda n: n.value)
    if not changed:
        return out
    bindings: dict[str, object] = {"e": changed, "stamp": Literal(stamp),
                                   "now": Literal(now_iso, datatype=XSD.dateTime)}
    triples = store.construct(catalog.text("rules/archive-entities"), bindings)  # type: ignore[arg-type]
    triples += store.construct(catalog.text("rules/archive-fragments"), {"e": changed, "stamp": Literal(stamp)})
    quads = [Quad(t.subject, t.predicate, t.object, TIER_COLD) for t in triples]
    for e in changed:
        if e in new:  # still exists: the archived version is superseded by the current entity
            quads.append(Quad(NamedNode(f"{e.value}/v/{stamp}"), UKO.supersededBy, e, TIER_COLD))
    out.quads = list(dict.fromkeys(quads))
    out.updates = [(catalog.text("rules/relink-versions.ru"), {"e": changed, "stamp": Literal(stamp)})]
    out.entities = changed
    return out
