"""A re-index of every file of an existing index (an ontology migration), streamed like a first index.

Why: a migration re-does every file, and the one-batch path (old triples out, new ones in, in ONE
``store.replace``) held the whole index twice in one transaction: on the standard library's index
(2,250 files, 2.4M triples) 6 min 22 s and 17 GB peak RSS (issue 14). So a run that must redo every
file goes through :func:`acms.service.index_stream.stream_first_index` too, with a
:class:`StreamedReindex` that clears the old index in the same bounded steps:

- before the first group, the ontology graph is replaced by UKO plus the configured extensions
  (one small write), so the groups are validated under the new vocabulary;
- per group, just before its triples are loaded: the entities of the group's files whose content
  hash changed are archived into the cold tier (``temporal.versions.archive``, against the group's
  new triples, validated before they are written), then the old triples of every stored file of
  the group are deleted with the re-index's own updates (``delete-file-contents``, ``delete-files``);
- after the last group, before the cross-file edges and the directory tree: the stored files that
  were not read again (removed, skipped) are archived and deleted ``GROUP_FILES`` at a time, edges
  from what survives into the entities that are gone are deleted (``delete-incoming``, in chunks),
  and the old tree goes (``delete-tree``).

What survives, and why by these updates rather than by dropping whole graphs: the hot and warm tiers
also hold plans and recorded decisions (no ``uko:inFile``: never touched by a re-index, and their
``uko:about`` links stay), the cold tier holds history (commits, what they touched, earlier
versions: only added to), and the meta graph holds the index runs, the embedding model, usage
statistics and the secrets policy (kept; the run adds its own record at the end). Entity, fragment
and decision IRIs carry their file's path, so deleting a later group's old triples never touches
an earlier group's new ones.

Cold tier: a version is archived only when the file's content hash changed (or the file is gone),
as an incremental run does; a migration alone changes no content, so it archives nothing, and an
entity whose triples differ only because the vocabulary or an extractor changed is not a new
version of the code. A file whose content changed and that then fails the shapes (quarantine) is
archived against what was emitted for it, not what was written (its old version is deleted either
way, as in the one-batch path).

Still all or nothing: everything here runs inside the run's ``store.atomic()`` (checkpoint and
pending-run marker, :mod:`acms.store.run_marker`); an error or a crash in any group leaves the old
complete index. Extension rules see the whole batch, so with rules configured a migration stays one
batch (``IndexRun._streams``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pyoxigraph import NamedNode, Quad

from acms.errors import ValidationFailed
from acms.ingest import emit
from acms.ingest.model import SourceFile
from acms.ingest.pipeline import vanished
from acms.ontology import extensions as ontology_extensions
from acms.sparql import catalog
from acms.store.protocol import Bindings
from acms.temporal import versions
from acms.validation.batch import check_batch, rejection

if TYPE_CHECKING:
    from acms.service.index_run import IndexRun

__all__ = ["GONE_CHUNK", "StreamedReindex"]

GONE_CHUNK = 5000  # entities per delete-incoming update
Update = tuple[str, Bindings | None]


class StreamedReindex:
    """The old index's side of a streamed re-index: what ``stream_first_index`` calls around its groups."""

    def __init__(self, run: IndexRun) -> None:
        self.run = run
        # path -> (file IRI, content hash) of every file the index holds now (a few MB at most)
        self.stored: dict[str, tuple[NamedNode, str]] = {
            str(r["path"].value): (r["file"], str(r["hash"].value))  # type: ignore[misc]
            for r in run.store.select(catalog.text("ingest/stored-files"))
        }
        self.seen: set[str] = set()  # paths read again by this run (their old triples are gone)
        self.gone: list[NamedNode] = []  # old entities no new triple describes

    def begin(self) -> None:
        """Before the first group: the ontology graph becomes UKO plus the configured extensions."""
        with self.run.timed("store"):
            self.run.store.ensure_ontology(ontology_extensions.ontology_quads(self.run.extensions))

    def before_load(self, sources: Sequence[SourceFile], kept: Mapping[str, emit.FileBatch]) -> None:
        """One group, validated and about to be loaded: archive what changed, delete the old versions.

        ``sources``: every file of the group that was read (quarantined ones too: their old version
        goes as well); ``kept``: path -> batch of the files whose triples are written."""
        self.seen.update(s.path for s in sources)
        files = [self.stored[s.path][0] for s in sources if s.path in self.stored]
        if not files:
            return
        changed = [s.path for s in sources if s.path in self.stored and self.stored[s.path][1] != s.sha256]
        new_quads = [q for p in changed if p in kept for q in kept[p].quads]
        keep = {iri for b in kept.values() for iri in b.entities.values()}
        keep |= {self.run.minter.file(p) for p in kept}
        self._replace(files, [self.stored[p][0] for p in changed], new_quads, keep)

    def finish(self) -> None:
        """After the last group: the stored files not read again go; links into what is gone; the tree."""
        run, store = self.run, self.run.store
        from acms.service.index_stream import GROUP_FILES

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
        for start in range(0, len(removed), GROUP_FILES):
            files = [self.stored[p][0] for p in removed[start : start + GROUP_FILES]]
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
            store.update(catalog.text("ingest/delete-tree.ru"))
        self.gone.clear()

    def _replace(self, files: list[NamedNode], changed: list[NamedNode], new_quads: list[Quad],
                 keep: set[NamedNode]) -> None:
        """Archive ``changed`` against ``new_quads``, then delete every old triple of ``files``."""
        run, store = self.run, self.run.store
        updates: list[Update] = []
        archived: list[Quad] = []
        if changed:
            with run.timed("versions"):
                archive = versions.archive(store, changed, new_quads, run.stamp, run.generated_at)
                if archive.quads:
                    violations = check_batch(store, archive.quads)
                    if violations:  # an archived version no file can be blamed for: the run fails whole
                        raise rejection(violations, archive.quads)
                updates += archive.updates
                archived = archive.quads
                run.report.versions_archived += len(archive.entities)
        with run.timed("deleting"):
            self.gone += vanished(store, files, keep)
            updates.append((catalog.text("ingest/delete-file-contents.ru"), {"file": files}))
            updates.append((catalog.text("ingest/delete-files.ru"), {"file": files}))
            store.replace(updates, archived)
