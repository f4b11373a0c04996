"""The replaced files' quads as a run found them, read once (``SupportsFileRewrite.file_quads``).

A one-batch run on a store that writes by a diff needs the replaced files' current quads for the diff
itself and for the versions' old texts; relinking needs the names the files defined, and linking the
entities they held. Each of those was a query or a pass of its own over the same quads (a 300-file
branch switch: ~0.25 s for the names, ~0.25-0.3 s for the entities). They are read here once, as early
as relinking, and the names, the entities, the fragments' texts and the hot entities are taken from
them as each file is read. Valid until the store phase: nothing the run does before it writes the
current tiers (the versions' updates touch the cold tier only, and run with it).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence

from pyoxigraph import NamedNode, Quad

from acms.store.protocol import SupportsFileRewrite
from acms.temporal.versions import FragmentParts
from acms.vocab import RDF, TIER_COLD, TIER_HOT, TIER_WARM, UKO

__all__ = ["OldQuads", "stay_hot"]


class OldQuads:
    """The quads of each replaced file (what ``file_quads`` gives for it), read when first asked for."""

    def __init__(self, store: SupportsFileRewrite) -> None:
        self._store = store
        self._by_file: dict[NamedNode, list[Quad]] = {}
        self._entities: dict[NamedNode, set[NamedNode]] = {}
        self._names: dict[NamedNode, set[str]] = {}
        self._hot: dict[NamedNode, set[NamedNode]] = {}
        self._fragments: dict[NamedNode, FragmentParts] = {}
        self._ahead: threading.Thread | None = None
        self._failed: BaseException | None = None

    def read_ahead(self, files: Sequence[NamedNode]) -> None:
        """Start reading ``files`` in a thread, for the time the run waits for its parsing workers. The
        store's reads hold the GIL and the workers both cores, so on two this gains only that wait (a
        300-file switch: relinking 2.5 -> 0.9 s, parsing 0.9 -> 1.9 s); the next ``read`` waits for the
        thread, and ``settle`` must follow a failed run (a thread still reading would keep the store open
        while the run rolls back)."""
        self._ahead = threading.Thread(target=self._read_ahead, args=(list(files),), name="acms-old-quads", daemon=True)
        self._ahead.start()

    def _read_ahead(self, files: list[NamedNode]) -> None:
        try:
            self._read(files)
        except BaseException as exc:  # noqa: BLE001 -- raised again in the run's thread, by settle()
            self._failed = exc

    def settle(self) -> None:
        """Wait for the reading ahead, if any, and raise what it failed with."""
        if self._ahead is None:
            return
        self._ahead.join()
        self._ahead = None
        failed, self._failed = self._failed, None
        if failed is not None:
            raise failed

    def read(self, files: Iterable[NamedNode]) -> None:
        """Read the files not read yet, one ``file_quads`` each (a subject belongs to one file)."""
        self.settle()
        self._read(files)

    def _read(self, files: Iterable[NamedNode]) -> None:
        for file in files:
            if file in self._by_file:
                continue
            quads = self._store.file_quads([file])
            self._by_file[file] = quads
            self._entities[file], self._names[file], self._hot[file], self._fragments[file] = _held(file, quads)

    def quads(self, files: Sequence[NamedNode]) -> list[Quad]:
        """The files' quads, as ``file_quads(files)`` reads them."""
        self.read(files)
        if len(files) == 1:
            return list(self._by_file[files[0]])
        seen: set[NamedNode] = set()
        out: list[Quad] = []
        for file in files:
            if file not in seen:
                seen.add(file)
                out += self._by_file[file]
        return out

    def entities(self, files: Sequence[NamedNode]) -> set[NamedNode]:
        """What ``ingest/entities-of-files`` answers: the things (not fragments) ``uko:inFile`` the files;
        each is typed in the same graph, as acms writes every one, and a fragment is told by its class here,
        by its IRI there."""
        self.read(files)
        return {e for f in files for e in self._entities[f]}

    def names(self, files: Sequence[NamedNode]) -> set[str]:
        """What ``ingest/symbols-of-files`` answers: the qualified names of what is ``uko:inFile`` the
        files, outside the cold tier."""
        self.read(files)
        return {n for f in files for n in self._names[f]}

    def fragments(self, files: Sequence[NamedNode]) -> FragmentParts:
        """The fragment parts of the files' quads outside the cold tier (what the versions compare with the
        new batch's), gathered as the files were read rather than in one more pass over their quads."""
        self.read(files)
        out = FragmentParts({}, {}, {})
        for file in dict.fromkeys(files):
            part = self._fragments[file]
            out.lod.update(part.lod)
            out.text.update(part.text)
            for frag, owners in part.owners.items():
                out.owners.setdefault(frag, []).extend(owners)
        return out

    def hot(self, files: Sequence[NamedNode]) -> set[NamedNode]:
        """The files' entities in the hot tier (as ``rules/entities-in-tier`` finds them there)."""
        self.read(files)
        return {e for f in files for e in self._hot[f]}


def stay_hot(quads: list[Quad], hot: set[NamedNode],
             owners: Mapping[object, list[NamedNode]] | None = None) -> list[Quad]:
    """``quads`` (a batch, emitted into the warm tier) with those of the ``hot`` entities and of their
    fragments in the hot tier instead, where the entities are now. ``owners``: fragment -> the entities
    that link to it with ``uko:hasFragment`` among ``quads`` (``fragment_parts(quads).owners``), when the
    caller has them: the fragments to move are found there, not by reading every quad's predicate again.

    Why: a replaced file's hot entities would go to warm with the batch, and the tier policy right after
    would move most of them back (a 300-file switch: 500 entities, 13.6k quads removed, inserted and moved
    again). The tier policy makes the hot tier exactly the entities it chooses, with their fragments,
    whichever tier each was in before (it compares its choice with the hot tier, and moves entities
    whole), so the graph after it is the same; an entity it no longer chooses is moved to warm by it."""
    if not hot:
        return quads
    has_fragment, warm = UKO.hasFragment, TIER_WARM
    subjects = set(hot)
    if owners is not None and all(isinstance(e, NamedNode) for e in hot):  # owners holds named subjects only
        subjects.update(frag for frag, who in owners.items() if not hot.isdisjoint(who))  # type: ignore[misc]
    else:
        for q in quads:
            if q.predicate == has_fragment and q.subject in hot:
                subjects.add(q.object)  # type: ignore[arg-type]
    return [Quad(s, q.predicate, q.object, TIER_HOT) if (s := q.subject) in subjects and q.graph_name == warm else q
            for q in quads]


def _held(file: NamedNode, quads: list[Quad]) -> tuple[set[NamedNode], set[str], set[NamedNode], FragmentParts]:
    """The entities, qualified names, hot entities and fragment parts among one file's quads, in one pass
    over them (the fragment parts as ``fragment_parts`` takes them from the quads outside the cold tier).
    Only the quads of the predicates they need are looked at further (each term read from a quad is a new
    object: reading all of them costs)."""
    in_file, kind, qualified, fragment = UKO.inFile, RDF.type, UKO.qualifiedName, UKO.Fragment
    lod_p, text_p, has_fragment, cold = UKO.lod, UKO.text, UKO.hasFragment, TIER_COLD
    linked: set[tuple[object, object]] = set()
    typed: list[Quad] = []
    named: list[Quad] = []
    parts = FragmentParts({}, {}, {})
    lod, text, owners = parts
    for q in quads:
        p = q.predicate
        if p == in_file:
            if q.object == file:
                linked.add((q.subject, q.graph_name))
        elif p == kind:
            typed.append(q)
        elif p == text_p:
            if q.graph_name != cold:
                text[q.subject] = q.object.value
        elif p == lod_p:
            if q.graph_name != cold:
                lod[q.subject] = q.object.value
        elif p == has_fragment:
            if q.graph_name != cold and isinstance(s := q.subject, NamedNode):
                owners.setdefault(q.object, []).append(s)
        elif p == qualified:
            named.append(q)
    entities: set[NamedNode] = set()
    hot: set[NamedNode] = set()
    for q in typed:
        s, g = q.subject, q.graph_name
        if q.object != fragment:
            if (s, g) in linked:
                entities.add(s)  # type: ignore[arg-type]
            if g == TIER_HOT:
                hot.add(s)  # type: ignore[arg-type]
    names = {q.object.value for q in named
             if (g := q.graph_name) != cold and (q.subject, g) in linked}
    return entities, names, hot, parts
