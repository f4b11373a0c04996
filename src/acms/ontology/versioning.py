"""UKO versioning: the version comes from ``ontology/uko.ttl`` (``owl:versionInfo``), never a constant.

An index whose ontology graph, or whose last index run (``uko:ukoVersion``), has an older UKO — or whose
ontology graph holds another set of extensions than the project configures — is migrated by
``acms index``: the ontology graph is reloaded and every file is re-indexed, so that no instance data
built under an older vocabulary (or by rules of a removed extension) stays mixed with the new. An index
built by a newer UKO than this acms knows is refused: acms cannot downgrade it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

import pyoxigraph as ox
from pyoxigraph import NamedNode, Quad

from acms import resources
from acms.errors import StoreError
from acms.ontology.extensions import DCT_HAS_VERSION, DCT_IDENTIFIER
from acms.sparql import catalog
from acms.store.protocol import GraphStore
from acms.vocab import GRAPH_ONTOLOGY

UKO_ONTOLOGY = NamedNode("https://w3id.org/acms/uko")
VERSION_INFO = NamedNode("http://www.w3.org/2002/07/owl#versionInfo")


@cache
def uko_version() -> str:
    """``owl:versionInfo`` of the shipped UKO."""
    for t in ox.parse(resources.read_text("ontology", "uko.ttl"), format=ox.RdfFormat.TURTLE):
        if t.subject == UKO_ONTOLOGY and t.predicate == VERSION_INFO:
            return t.object.value
    raise RuntimeError("ontology/uko.ttl has no owl:versionInfo")


def version_key(version: str) -> tuple[int, ...]:
    parts = []
    for p in version.split("."):
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


@dataclass
class Migration:
    """What ``acms index`` must do before writing: ``reindex`` every file, and why (``reasons``)."""

    reasons: list[str] = field(default_factory=list)
    reindex: bool = False
    # the ontology graph was found to hold exactly the ontology wanted (nothing to load: comparing them
    # again read its quads a second time, ~13 ms of every refresh)
    ontology_current: bool = False

    def __bool__(self) -> bool:
        return bool(self.reasons)


def stored_versions(store: GraphStore) -> tuple[str | None, str | None]:
    """(UKO version in the ontology graph, UKO version of the last index run)."""
    graph = store.select(catalog.text("ontology/uko-version"))
    run = store.select(catalog.text("ontology/last-run-version"))
    return (graph[0]["version"].value if graph else None, run[0]["version"].value if run else None)


def _loaded_extensions(quads: set[Quad]) -> dict[str, tuple[str, str]]:
    """extension name -> (version, content digest) as recorded in an ontology graph."""
    ids = {q.subject: q.object.value for q in quads if q.predicate == DCT_IDENTIFIER}
    versions = {q.subject: q.object.value for q in quads if q.predicate == VERSION_INFO}
    digests = {q.subject: q.object.value for q in quads if q.predicate == DCT_HAS_VERSION}
    return {name: (versions.get(s, ""), digests.get(s, "")) for s, name in ids.items()}


def plan(store: GraphStore, desired_ontology: Sequence[Quad]) -> Migration:
    """Compare the index with this acms (UKO version) and the configured extensions."""
    current = uko_version()
    in_graph, in_run = stored_versions(store)
    migration = Migration()
    for where, version in (("ontology graph", in_graph), ("last index run", in_run)):
        if version is None:
            continue
        if version_key(version) > version_key(current):
            raise StoreError(
                f"the index was built with UKO {version} ({where}), newer than this acms knows ({current}): "
                "upgrade acms, or delete the index folder and run `acms index` again"
            )
        if version_key(version) < version_key(current):
            migration.reasons.append(f"UKO {version} → {current} ({where}): ontology graph reloaded, every file re-indexed")
            migration.reindex = True
            break
    if in_graph is None and in_run is None:
        return migration  # a new index: nothing to migrate
    have = set(store.quads(GRAPH_ONTOLOGY))
    want = set(desired_ontology)
    migration.ontology_current = have == want
    if have != want and not migration.reindex:
        old, new = _loaded_extensions(have), _loaded_extensions(want)
        for name in sorted(set(old) | set(new)):
            if name not in new:
                migration.reasons.append(f"extension {name} no longer configured: its triples are dropped")
            elif name not in old:
                migration.reasons.append(f"extension {name} configured: its rules run over every file")
            elif old[name] != new[name]:
                migration.reasons.append(f"extension {name} changed (version {old[name][0] or '?'} → "
                                         f"{new[name][0] or '?'}): its rules run over every file")
        if not migration.reasons:
            migration.reasons.append("ontology graph differs from UKO and the configured extensions: reloaded")
        migration.reindex = True
    return migration
