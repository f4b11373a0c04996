"""A re-index of every file of an existing index (an ontology migration), streamed like a first index.

Why: a migration re-does every file, and the one-batch path (old triples out, new ones in, in ONE
``store.replace``) held the whole index twice in one transaction: on the standard library's index
(2,250 files, 2.4M triples) 6 min 22 s and 17 GB peak RSS. So a run that must redo every
file goes through :func:`acms.service.indexing.stream.stream_first_index` too, with a
:class:`StreamedReindex` that takes the old index out of the way in bounded steps (the write mode
:class:`Reindex`). Two ways:

- **starting over** (a store with a checkpoint, the embedded one): the run is inside ``store.atomic()``,
  whose checkpoint already holds the old index (hard links). ``SupportsCheckpoint.start_over`` puts an
  empty store in place of ``graph/`` and hands back a read-only store on the checkpoint; what is not the files' is
  copied in (the cold tier, the meta graph, any other graph, and from the hot and warm tiers the
  subjects with a class and no ``uko:inFile``: ``kept-in-tiers.rq``), the ontology graph is loaded
  new, and the groups are written as into a first index. Nothing is deleted quad by quad: deleting
  the standard library's 2.4M old quads group by group cost 62 s of a 151 s migration (and one
  update per group that scanned both tiers, 228 s, before ``delete-files.ru`` was fixed);
- **deleting** (any other store, e.g. a remote one, or no checkpoint): the ontology graph is
  replaced first; per group, just before its triples are loaded, the old triples of every stored
  file of the group are deleted with the re-index's own updates (``delete-file-contents``,
  ``delete-files``); after the last group, the stored files not read again, and the old tree.

In both, per group, the entities of the group's files whose content hash changed are archived into
the cold tier first (``temporal.versions.archive``, read from the old index against the group's new
triples, validated before they are written); after the last group, the stored files not read again
(removed, skipped) are archived ``GROUP_FILES`` at a time, and edges from what survives into
entities that are gone are deleted (``delete-incoming``, in chunks).

What survives, and why the hot and warm tiers are not dropped whole: they also hold plans and
recorded decisions (no ``uko:inFile``: never touched by a re-index, and their
``uko:about`` links stay), the cold tier holds history (commits, what they touched, earlier
versions: only added to), and the meta graph holds the index runs, the embedding model, usage
statistics and the secrets policy (kept; the run adds its own record at the end). Entity, fragment
and decision IRIs carry their file's path, so deleting a later group's old triples never touches
an earlier group's new ones.

Cold tier: a version is archived only when the file's content hash changed (or the file is gone),
as an incremental run does; a migration alone changes no content, so it archives nothing, and an
entity whose triples differ only because the vocabulary or an extractor changed is not a new
version of the code. A file the new shapes reject (quarantine) is gone from the index: its entities
are archived as an incremental run archives a removed file's.

Still all or nothing: everything here runs inside the run's ``store.atomic()`` (checkpoint and
pending-run marker, :mod:`acms.store.run_marker`); an error or a crash in any group leaves the old
complete index. Extension rules see the whole batch, so with rules configured a migration stays one
batch (``IndexRun._mode``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from pyoxigraph import DefaultGraph, NamedNode, Quad

from acms.errors import ValidationFailed
from acms.ingest.model import SourceFile
from acms.ingest.pipeline import vanished
from acms.ingest.walker import Listing
from acms.ontology import extensions as ontology_extensions
from acms.service.indexing import stream
from acms.service.indexing.context import RunContext
from acms.sparql import catalog
from acms.store.protocol import Bindings, GraphStore, SupportsCheckpoint
from acms.temporal import versions
from acms.validation.batch import check_batch, rejection
from acms.vocab import GRAPH_ONTOLOGY, TIER_COLD, TIER_HOT, TIER_WARM, fragment_owner

__all__ = ["COPY_CHUNK", "GONE_CHUNK", "Reindex", "StreamedReindex"]

COPY_CHUNK = 100_000  # quads copied from the old index at once when starting over
GONE_CHUNK = 5000  # entities per delete-incoming update
Update = tuple[str, Bindings | None]


class Reindex:
    """The write mode of a run that redoes every file of an existing index (no extension rules)."""

    def __init__(self, changed: Sequence[str] = ()) -> None:
        """``changed``: the paths a look found changed, added or removed, when a refresh too large for
        one batch is redone this way (``IndexRun._mode``): what the run reports as changed."""
        self.changed = sorted(changed)

    def write(self, run: RunContext, listing: Listing) -> None:
        run.report.changed_paths = list(self.changed)
        # the corpus rows spilled for the caches' build, as a first index's, once it has started over
        # (a standard library's caches from the store's corpus join: ~20 s, against ~8 s)
        stream.prepare_spill(run)
        stream.stream_first_index(run, listing, StreamedReindex(run, same_iris=bool(self.changed)))


class StreamedReindex:
    """The old index's side of a streamed re-index: what ``stream_first_index`` calls around its groups."""

    def __init__(self, run: RunContext, same_iris: bool = False) -> None:
        self.run = run
        self.old: GraphStore = run.store  # where the old index is read (the checkpoint, once started over)
        self.fresh = False  # started over: the old triples are not in ``run.store`` (nothing to delete)
        # path -> (file IRI, content hash) of every file the index holds now (a few MB at most)
        self.stored: dict[str, tuple[NamedNode, str]] = {
            str(r["path"].value): (r["file"], str(r["hash"].value))  # type: ignore[misc]
            for r in run.store.select(catalog.text("ingest/stored-files"))
        }
        self.seen: set[str] = set()  # paths read again by this run
        # no migration: the stored fragments' IRIs were minted as the new ones are (a refresh too large for
        # one batch), so an entity's change is told from them (``versions.archive(by_iri=True)``)
        self.same_iris = same_iris
        self.gone: list[NamedNode] = []  # old entities no new triple describes

    def begin(self) -> None:
        """Before the first group: start over (copying what is not the files') when the store can,
        else replace the ontology graph; either way it becomes UKO plus the configured extensions."""
        run, store = self.run, self.run.store
        with run.timed("store"):
            if isinstance(store, SupportsCheckpoint) and store.can_start_over():
                self.old = store.start_over()
                self.fresh = True
                self._copy_kept(store)
            store.ensure_ontology(ontology_extensions.ontology_quads(run.extensions))

    def _copy_kept(self, store: GraphStore) -> None:
        """Into the new, empty store: every graph but the tiers and the ontology as it was, and what of
        the hot and warm tiers is not the files' (``kept-in-tiers``), ``COPY_CHUNK`` quads at a time."""
        old = self.old
        skip = {TIER_HOT, TIER_WARM, GRAPH_ONTOLOGY}
        for graph in [DefaultGraph(), *(g for g in list(old.named_graphs()) if g not in skip)]:
            _load_chunked(store, old.quads(graph))
        rows = self.old.query_raw(catalog.text("ingest/kept-in-tiers"))
        _load_chunked(store, (Quad(r["s"], r["p"], r["o"], r["g"]) for r in rows))  # type: ignore[attr-defined]

    def before_load(self, sources: Sequence[SourceFile], kept: Mapping[str, stream.Written]) -> None:
        """One group, validated and about to be loaded: archive what changed, delete the old versions.

        ``sources``: every file of the group that was read (quarantined ones too: their old version
        goes as well); ``kept``: path -> batch of the files whose triples are written."""
        self.seen.update(s.path for s in sources)
        files = [self.stored[s.path][0] for s in sources if s.path in self.stored]
        if not files:
            return
        # archived: what changed, and what the shapes left out (quarantined: gone from the index, as
        # in an incremental run); an unchanged file written again keeps its versions as they are
        changed = [s.path for s in sources
                   if s.path in self.stored and (self.stored[s.path][1] != s.sha256 or s.path not in kept)]
        new_quads: list[Quad] | versions.FragmentParts
        if self.same_iris:  # the archive reads the new fragments' IRIs only: their owners, from the text
            new_quads = versions.FragmentParts({}, {}, {})
            for p in changed:
                if p in kept:
                    versions.fragment_owners(kept[p].nquads(), new_quads)
        else:
            new_quads = [q for p in changed if p in kept for q in kept[p].quads]
        keep = {iri for b in kept.values() for iri in b.entities.values()}
        keep |= {self.run.minter.file(p) for p in kept}
        self._replace(files, [self.stored[p][0] for p in changed], new_quads, keep)

    def finish(self) -> None:
        """After the last group: the stored files not read again go; links into what is gone; the tree."""
        run, store = self.run, self.run.store
        if self.seen and not run.report.files_indexed and run.report.quarantined:
            # every file fails the new shapes: the vocabulary is at fault, not the files; roll back
            path, why = sorted(run.report.quarantined.items())[0]
            raise ValidationFailed(
                f"every file read ({len(self.seen)}) fails the shapes after {'; '.join(run.report.ontology)}; "
                f"the re-index was rolled back and the index is as it was (first: {path}: {why}); "
                "fix the configured extensions' shapes or remove them from acms.toml",
                [f"{p}: {d}" for p, d in sorted(run.report.quarantined.items())],
            )
        removed = sorted(p for p in self.stored if p not in self.seen)
        run.report.files_removed = len(removed)
        for start in range(0, len(removed), stream.GROUP_FILES):
            files = [self.stored[p][0] for p in removed[start : start + stream.GROUP_FILES]]
            self._replace(files, files, [], set())
        with run.timed("deleting"):
            gone = sorted(set(self.gone), key=lambda n: n.value)
            for start in range(0, len(gone), GONE_CHUNK):
                chunk = gone[start : start + GONE_CHUNK]
                # the groups' new triples are in already: a node one of them describes is not gone
                here = {r["node"] for r in store.select(catalog.text("ingest/current-nodes"), {"node": chunk})}
                chunk = [n for n in chunk if n not in here]
                if chunk:
                    store.update(catalog.text("ingest/delete-incoming.ru"), {"gone": chunk})
            if not self.fresh:
                store.update(catalog.text("ingest/delete-tree.ru"))
        self.gone.clear()
        self.old = store  # the checkpoint's handle goes (the run deletes the checkpoint when it lands)

    def _replace(self, files: list[NamedNode], changed: list[NamedNode], new_quads: list[Quad] | versions.FragmentParts,
                 keep: set[NamedNode]) -> None:
        """Archive ``changed`` (read from the old index) against ``new_quads``, then delete every old
        triple of ``files`` (none to delete after starting over)."""
        run, store, old = self.run, self.run.store, self.old
        updates: list[Update] = []
        archived: list[Quad] = []
        entities: set[NamedNode] | None = None
        old_parts: versions.FragmentParts | None = None
        if changed:
            with run.timed("versions"):
                if self.same_iris:
                    entities, old_parts = self._held(files, set(changed))
                archive = versions.archive(old, changed, new_quads, run.stamp, run.generated_at, old_parts,
                                           by_iri=self.same_iris)
                if archive.quads:
                    violations = check_batch(old, archive.quads)
                    if violations:  # an archived version no file can be blamed for: the run fails whole
                        raise rejection(violations, archive.quads)
                updates += archive.updates
                archived = archive.quads
                run.report.versions_archived += len(archive.entities)
        with run.timed("deleting"):
            self.gone += vanished(old, files, keep, entities)
            if not self.fresh:
                updates.append((catalog.text("ingest/delete-file-contents.ru"), {"file": files}))
                updates.append((catalog.text("ingest/delete-files.ru"), {"file": files}))
            if updates or archived:
                store.replace(updates, archived)

    def _held(self, files: list[NamedNode], changed: set[NamedNode]) -> tuple[set[NamedNode], versions.FragmentParts]:
        """What ``files`` hold in the old index, read once (``ingest/subjects-of-files``): their entities
        (``entities-of-files``' answer: what is not a fragment) and, of the ``changed`` files, each fragment
        outside the cold tier with the entity or file that owns it, found by the owner part of its IRI
        (what ``uko:hasFragment`` links). Two queries had read the same files' subjects (a 1,491-file
        re-index of the standard library: 0.8 s and 2.2 s)."""
        entities: set[NamedNode] = set()
        fragments: list[tuple[NamedNode, str]] = []  # (fragment, its owner's key)
        for r in self.old.select(catalog.text("ingest/subjects-of-files"), {"file": files}):
            subject = r["s"]
            if not isinstance(subject, NamedNode):
                continue
            key = versions.owner_key(subject.value)
            if key is None:
                entities.add(subject)
            elif r["g"] != TIER_COLD and r["file"] in changed:
                fragments.append((subject, key))
        owners = {fragment_owner(n.value): n for n in [*entities, *files]}
        parts = versions.FragmentParts({}, {}, {})
        for fragment, key in fragments:
            owner = owners.get(key)
            if owner is not None:
                parts.owners.setdefault(fragment, []).append(owner)
        return entities, parts


def _load_chunked(store: GraphStore, quads: Iterable[Quad]) -> None:
    """Bulk-load ``quads`` ``COPY_CHUNK`` at a time (memory stays flat however many there are)."""
    chunk: list[Quad] = []
    for q in quads:
        chunk.append(q)
        if len(chunk) >= COPY_CHUNK:
            store.load(chunk, bulk=True)
            chunk = []
    if chunk:
        store.load(chunk, bulk=True)
