"""What ``acms ontology list|add|remove|describe`` do, over an open index (the CLI stays thin).

``add`` and ``remove`` change the config file and the index together: the store write is one
transaction (ontology graph rebuilt, the extension's instance triples added or removed); when it
fails, the config file is put back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import Literal, NamedNode, Quad

from acms.config import Settings
from acms.errors import StoreError, UsageError
from acms.ontology import config_file
from acms.ontology.check import CheckReport, check_extension
from acms.ontology.extensions import Extension, configured, load_extension
from acms.ontology.rules import all_checks, derive_for_store, ext_footprint, footprint
from acms.ontology.versioning import stored_versions, uko_version, version_key
from acms.sparql import catalog
from acms.store.oxigraph import insert_data, ontology_quads
from acms.store.protocol import GraphStore
from acms.validation.batch import validate_batch
from acms.vocab import GRAPH_ONTOLOGY, PREFIXES, UKO_NS, prefixes

RDFS_NS = PREFIXES["rdfs"]
OWL_NS = PREFIXES["owl"]


def store_prefixes(store: GraphStore) -> dict[str, str]:
    """The standard prefixes plus those of the extensions loaded in the index's ontology graph."""
    extra = {}
    for row in store.select(catalog.text("ontology/loaded")):
        if "prefix" in row and "namespace" in row and "identifier" in row:
            extra.setdefault(row["prefix"].value, row["namespace"].value)
    return prefixes(extra)


def extension_namespaces(store: GraphStore) -> dict[str, str]:
    """prefix -> namespace of the extensions loaded in the index (for export kinds and stats)."""
    return {p: ns for p, ns in store_prefixes(store).items() if p not in PREFIXES}


def expand(term: str, prefixes: dict[str, str]) -> str:
    """A CURIE (``api:Endpoint``), a bare UKO name (``Function``) or a full IRI, as an IRI."""
    if term.startswith(("http://", "https://", "urn:")):
        return term
    prefix, sep, local = term.partition(":")
    if sep:
        if prefix not in prefixes:
            raise UsageError(f"unknown prefix in {term!r}; known: {', '.join(sorted(prefixes))}")
        return prefixes[prefix] + local
    return UKO_NS + term


def compact(iri: str, prefixes: dict[str, str]) -> str:
    best = ""
    for prefix, ns in prefixes.items():
        if iri.startswith(ns) and len(ns) > len(best) and len(iri) > len(ns):
            best = ns
            name = f"{prefix}:{iri[len(ns):]}"
    return name if best else iri


@dataclass
class Loaded:
    name: str
    version: str
    namespace: str
    prefix: str
    label: str
    status: str  # loaded | configured, not loaded yet | loaded, no longer configured


def list_ontologies(store: GraphStore, settings: Settings, root: Path) -> list[Loaded]:
    rows = store.select(catalog.text("ontology/loaded"))
    out: dict[str, Loaded] = {}
    for r in rows:
        name = r["identifier"].value if "identifier" in r else ("uko" if r["ontology"].value == UKO_NS.rstrip("#") else r["ontology"].value)
        out[name] = Loaded(name, r["version"].value if "version" in r else "",
                           r["namespace"].value if "namespace" in r else (UKO_NS if name == "uko" else ""),
                           r["prefix"].value if "prefix" in r else ("uko" if name == "uko" else ""),
                           r["label"].value if "label" in r else "", "loaded")
    wanted = {e.name: e for e in configured(settings.extensions, root)}
    for name, loaded in out.items():
        if name != "uko" and name not in wanted:
            loaded.status = "loaded, no longer configured (the next `acms index` drops it)"
    for name, ext in wanted.items():
        if name not in out:
            out[name] = Loaded(name, ext.version, ext.namespace, ext.prefix, "", "configured, not loaded yet (run `acms index`)")
        elif out[name].version != ext.version:
            out[name].status = f"loaded {out[name].version}; folder has {ext.version} (run `acms index`)"
    return sorted(out.values(), key=lambda lo: (lo.name != "uko", lo.name))


@dataclass
class Change:
    extension: str
    version: str
    config: str
    ontology_triples: int
    added: int = 0
    removed: int = 0
    report: CheckReport | None = None
    notes: list[str] = field(default_factory=list)


def _require_current(store: GraphStore) -> None:
    _, in_run = stored_versions(store)
    if in_run is not None and version_key(in_run) < version_key(uko_version()):
        raise StoreError(f"the index was built with UKO {in_run}; run `acms index` first to migrate it to {uko_version()}")


def _delete_data(quads: set[Quad]) -> list[tuple[str, None]]:
    if not quads:
        return []
    return [("DELETE" + insert_data(sorted(quads, key=str))[len("INSERT"):], None)]


def _ref_for(ref: str, root: Path) -> str:
    """How the config names a folder: relative to the project root when inside it."""
    path = Path(ref)
    if "/" not in ref and "\\" not in ref and not ref.startswith("."):
        return ref
    full = (root / path).resolve() if not path.is_absolute() else path.resolve()
    return full.relative_to(root).as_posix() if full.is_relative_to(root) else str(full)


def add_extension(store: GraphStore, settings: Settings, root: Path, ref: str, *, reasoner: bool = True) -> Change:
    """Check, register, load and run an extension's rules over the whole index (one transaction)."""
    ext = load_extension(ref, root)
    report = check_extension(ext, reasoner=reasoner)
    report.raise_if_failed()
    _require_current(store)
    current = configured(settings.extensions, root)
    refs = [r for r, e in zip(settings.extensions, current) if e.name != ext.name] + [_ref_for(ref, root)]
    exts = [e for e in current if e.name != ext.name] + [ext]
    ontology = ontology_quads([q for e in exts for q in e.ontology_quads()])
    old = ext_footprint(store, ext)
    derived = derive_for_store(store, ontology, [ext], drop=old)
    validate_batch(store, derived, all_checks(exts))
    path, previous = config_file.write_extensions(root, refs)
    try:
        store.replace(_delete_data(old) + [(f"DROP SILENT GRAPH {GRAPH_ONTOLOGY}", None)], ontology + derived)
        store.flush()
    except BaseException:
        config_file.restore(path, previous)
        raise
    new = set(derived)
    return Change(ext.name, ext.version, str(path), len(ext.ontology_quads()),
                  added=len(new - old), removed=len(old - new), report=report)


def remove_extension(store: GraphStore, settings: Settings, root: Path, name: str) -> Change:
    """Unregister an extension; drop its ontology triples and every triple of its footprint."""
    refs = list(settings.extensions)
    keep_refs, keep, target = [], [], None
    for ref in refs:
        try:
            ext: Extension | None = load_extension(ref, root)
        except UsageError:
            ext = None
        ext_name = ext.name if ext is not None else Path(ref).name
        if name in (ref, ext_name):
            target = ext_name
            continue
        keep_refs.append(ref)
        if ext is not None:
            keep.append(ext)
    loaded = {lo.name: lo for lo in _loaded_rows(store)}
    if target is None and name not in loaded:
        known = ", ".join(sorted(set(refs) | set(loaded) - {"uko"})) or "none"
        raise UsageError(f"extension {name!r} is neither configured nor loaded (extensions: {known})")
    target = target or name
    namespace = loaded[target].namespace if target in loaded else load_extension(name, root).namespace
    terms = store.select(catalog.text("ontology/terms"), {"ns": Literal(namespace)})
    classes = [r["term"] for r in terms if r["kind"].value == "class"]
    properties = [r["term"] for r in terms if r["kind"].value == "property"]
    old = footprint(store, classes, properties, namespace)  # type: ignore[arg-type]
    ontology = ontology_quads([q for e in keep for q in e.ontology_quads()])
    before = store.count(GRAPH_ONTOLOGY)
    path, previous = config_file.write_extensions(root, keep_refs)
    try:
        store.replace(_delete_data(old) + [(f"DROP SILENT GRAPH {GRAPH_ONTOLOGY}", None)], ontology)
        store.flush()
    except BaseException:
        config_file.restore(path, previous)
        raise
    return Change(target, loaded[target].version if target in loaded else "", str(path),
                  before - len(ontology), removed=len(old))


def _loaded_rows(store: GraphStore) -> list[Loaded]:
    out = []
    for r in store.select(catalog.text("ontology/loaded")):
        if "identifier" in r:
            out.append(Loaded(r["identifier"].value, r["version"].value if "version" in r else "",
                              r["namespace"].value if "namespace" in r else "", r["prefix"].value if "prefix" in r else "",
                              "", "loaded"))
    return out


@dataclass
class Description:
    iri: str
    curie: str
    label: str
    comment: str
    kinds: list[str]
    superclasses: list[str]
    subclasses: list[str]
    domain: list[str]
    range: list[str]
    instances: int
    uses: int


def describe(store: GraphStore, term: str) -> Description:
    prefixes = store_prefixes(store)
    iri = expand(term, prefixes)
    rows = store.select(catalog.text("ontology/describe"), {"term": NamedNode(iri)})
    if not rows:
        raise UsageError(f"{term} ({iri}) is not a term of UKO or of a loaded extension")

    def values(pred: str) -> list[str]:
        return sorted({compact(r["o"].value, prefixes) for r in rows if r["p"].value == pred})

    def text(local: str) -> str:
        found = [r["o"] for r in rows if r["p"].value == RDFS_NS + local]
        english = [t for t in found if isinstance(t, Literal) and t.language in (None, "en")]
        return (english or found)[0].value if found else ""

    related = store.select(catalog.text("ontology/superclasses"), {"term": NamedNode(iri)})
    counts = store.select(catalog.text("ontology/instance-count"), {"term": NamedNode(iri)})
    return Description(
        iri=iri, curie=compact(iri, prefixes), label=text("label"), comment=text("comment"),
        kinds=values(PREFIXES["rdf"] + "type"),
        superclasses=sorted(compact(r["related"].value, prefixes) for r in related if r["direction"].value == "super"),
        subclasses=sorted(compact(r["related"].value, prefixes) for r in related if r["direction"].value == "sub"),
        domain=values(RDFS_NS + "domain"), range=values(RDFS_NS + "range"),
        instances=int(counts[0]["instances"].value) if counts else 0,
        uses=int(counts[0]["uses"].value) if counts else 0,
    )
