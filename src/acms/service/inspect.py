"""What is in an index: counts per class, graph and language, the last run (``stats``), and a full
re-validation against the shapes (``validate``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acms.service.host import Host
from acms.sparql import catalog
from acms.store.protocol import GraphStore


@dataclass
class Stats:
    store: str
    store_bytes: int
    quads: int
    classes: dict[str, int]
    graphs: dict[str, int]
    languages: dict[str, dict[str, Any]]
    last_run: dict[str, str] | None

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class Validation:
    violations: list[str] = field(default_factory=list)

    @property
    def conforms(self) -> bool:
        return not self.violations

    def as_dict(self) -> dict[str, Any]:
        return {"conforms": self.conforms, "violations": list(self.violations)}


def _rows(store: GraphStore, key: str) -> list[dict[str, str]]:
    return [{k: v.value for k, v in row.items()} for row in store.select(catalog.text(key))]


def _short(iri: str) -> str:
    return iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _class_name(iri: str, extensions: dict[str, str]) -> str:
    """UKO classes by local name; an extension's as ``prefix:Local`` (``api:Endpoint``)."""
    for prefix, ns in extensions.items():
        if iri.startswith(ns):
            return f"{prefix}:{iri[len(ns):]}"
    return _short(iri)


def _languages(store: GraphStore) -> dict[str, dict[str, Any]]:
    """Files, lines and code elements by class (``symbols``) per language."""
    out: dict[str, dict[str, Any]] = {r["language"]: {"files": int(r["files"]), "lines": int(r["total_lines"]),
                                                      "symbols": {}} for r in _rows(store, "stats/languages")}
    for r in _rows(store, "stats/symbols-by-language"):
        entry = out.get(r["language"])
        if entry is not None:
            entry["symbols"][_short(r["kind"])] = int(r["n"])
    return out


def stats(host: Host) -> Stats:
    from acms.ontology.service import extension_namespaces

    with host.session.reading() as store:
        extensions = extension_namespaces(store)
        return Stats(
            store=host.remote.endpoints.display if host.remote else str(host.layout.root),
            store_bytes=store.size_bytes(),
            quads=store.count(),
            classes={_class_name(r["class"], extensions): int(r["n"]) for r in _rows(store, "stats/classes")},
            graphs={r["graph"]: int(r["n"]) for r in _rows(store, "stats/tiers")},
            languages=_languages(store),
            last_run=next(iter(_rows(store, "stats/last-run")), None),
        )


def validate(host: Host) -> Validation:
    """The whole store against the SHACL shapes and the configured extensions' shapes, with pyshacl."""
    from acms.ontology.extensions import configured
    from acms.validation.batch import validate_whole_store

    extra = [e.shapes_text for e in configured(host.settings.extensions, host.root) if e.shapes_text]
    with host.session.reading() as store:
        return Validation([str(v) for v in validate_whole_store(store, extra)])


class Health:
    """``/health``'s row: the quad count (counted once per write: a count walks the store, about 0.16 s
    per million quads) and the embedding model."""

    def __init__(self, host: Host) -> None:
        self._host = host
        self._counted: dict[str, Any] = {}

    def __call__(self) -> dict[str, Any]:
        from acms.retrieval.embedding_store import active_model

        with self._host.session.reading() as store:
            generation = self._host.session.generation()
            if self._counted.get("generation") != generation:
                self._counted.update(generation=generation, quads=store.count())
            model = active_model(store)
            return {"status": "ok", "quads": self._counted["quads"], "model": model.model_id if model else None}
