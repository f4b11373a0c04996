"""Namespaces and the IRIs acms mints; the one place that knows how an entity's IRI is built.

Entity IRIs are stable across versions (project + path + qualified name); fragment IRIs include the
fragment's content hash so that versions of the same entity coexist.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from urllib.parse import quote

from pyoxigraph import NamedNode

UKO_NS = "https://w3id.org/acms/uko#"
FN_NS = "https://w3id.org/acms/fn#"
ID_NS = "https://w3id.org/acms/id/"
PROV_NS = "http://www.w3.org/ns/prov#"
RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS_NS = "http://www.w3.org/2000/01/rdf-schema#"
XSD_NS = "http://www.w3.org/2001/XMLSchema#"
DCT_NS = "http://purl.org/dc/terms/"

GRAPH_ONTOLOGY = NamedNode("https://w3id.org/acms/graph/ontology")
GRAPH_META = NamedNode("https://w3id.org/acms/graph/meta")
TIER_HOT = NamedNode("https://w3id.org/acms/tier/hot")
TIER_WARM = NamedNode("https://w3id.org/acms/tier/warm")
TIER_COLD = NamedNode("https://w3id.org/acms/tier/cold")
TIERS = {"hot": TIER_HOT, "warm": TIER_WARM, "cold": TIER_COLD}

PREFIXES = {
    "uko": UKO_NS,
    "fn": FN_NS,
    "prov": PROV_NS,
    "rdf": RDF_NS,
    "rdfs": RDFS_NS,
    "xsd": XSD_NS,
    "dcterms": DCT_NS,
    "owl": "http://www.w3.org/2002/07/owl#",
    "sh": "http://www.w3.org/ns/shacl#",
}
PREFIX_HEADER = "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in PREFIXES.items())  # the standard prefixes as text


def prefixes(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """PREFIXES plus ``extra`` (the prefixes of an index's loaded extensions, e.g. ``api``); a standard
    prefix is never overridden, so ``uko:`` always means UKO."""
    return {**(extra or {}), **PREFIXES}


class _Namespace:
    """Attribute access to terms of one namespace: ``UKO.File`` is a pyoxigraph NamedNode."""

    def __init__(self, base: str) -> None:
        self._base = base
        self._cache: dict[str, NamedNode] = {}

    def __getattr__(self, name: str) -> NamedNode:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def __getitem__(self, name: str) -> NamedNode:
        node = self._cache.get(name)
        if node is None:
            node = self._cache[name] = NamedNode(self._base + name)
        return node

    @property
    def base(self) -> str:
        return self._base


UKO = _Namespace(UKO_NS)
PROV = _Namespace(PROV_NS)
RDF = _Namespace(RDF_NS)
RDFS = _Namespace(RDFS_NS)
XSD = _Namespace(XSD_NS)
DCT = _Namespace(DCT_NS)
FN = _Namespace(FN_NS)


def slug(text: str) -> str:
    """A lower-case, dash-separated IRI-safe slug (for project names and headings)."""
    s = re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()
    return s or "x"


def fragment_owner(entity: str) -> str:
    """The key of an entity inside its fragments' IRIs (``…/frag/<owner>/<lod>/<hash>``): lets a
    whole-store pass pair fragments with their entity without reading ``hasFragment``."""
    return hashlib.sha1(entity.encode()).hexdigest()[:12]


def fragment_iri_parts(iri: str) -> tuple[str, str, str] | None:
    """(owner, lod, text hash) of a fragment IRI ``<ID_NS><project>/frag/<owner>/<lod>/<hash>[-<occurrence>]``
    (``IriMinter.fragment``), None for any other IRI (a project may be named "frag" too)."""
    if not iri.startswith(ID_NS):
        return None
    parts = iri[len(ID_NS):].split("/", 4)
    if len(parts) != 5 or parts[1] != "frag":
        return None
    return parts[2], parts[3], parts[4].split("-", 1)[0]


def names_end(key: str) -> bool:
    """Whether ``key`` can be the end of a qualified name (``Class.method``, as an agent writes it):
    dotted parts, no path or IRI."""
    return "." in key and "/" not in key and ":" not in key and all(key.split("."))


def code_iri_ends(iri: str, key: str) -> bool:
    """Whether a code entity's IRI (``IriMinter.code``) is that of a qualified name ending with ``key``."""
    tail = quote(key, safe=".")
    return "/code/" in iri and iri.endswith(("." + tail, "#" + tail))


class IriMinter:
    """Mints the IRIs of one project; paths are POSIX, relative to the project root."""

    def __init__(self, project: str) -> None:
        self.project_slug = slug(project)
        self.base = f"{ID_NS}{self.project_slug}/"

    @classmethod
    def of_iri(cls, iri: str) -> IriMinter:
        """The minter of the project that ``iri`` (one this class minted) belongs to: a slug is its own slug."""
        if not iri.startswith(ID_NS):
            raise ValueError(f"not an acms IRI: {iri}")
        return cls(iri[len(ID_NS):].split("/", 1)[0])

    def project(self) -> NamedNode:
        return NamedNode(self.base)

    def file(self, path: str) -> NamedNode:
        return NamedNode(f"{self.base}file/{quote(path, safe='/')}")

    def directory(self, path: str) -> NamedNode:
        return NamedNode(f"{self.base}dir/{quote(path, safe='/')}")

    def code(self, path: str, qualname: str) -> NamedNode:
        return NamedNode(f"{self.base}code/{quote(path, safe='/')}#{quote(qualname, safe='.')}")

    def doc(self, path: str, anchor: str) -> NamedNode:
        return NamedNode(f"{self.base}doc/{quote(path, safe='/')}#{quote(anchor, safe='-/')}")

    def fragment(self, entity: NamedNode, lod: str, content_hash: str, occurrence: int = 1) -> NamedNode:
        """A fragment's IRI holds its text's hash, not its place: lines added above leave it (and its vector)
        as it was, and only its line numbers change. ``occurrence`` tells apart the same text at another
        place in the same entity and level of detail (the second is ``<hash>-2``)."""
        tail = content_hash[:16] if occurrence == 1 else f"{content_hash[:16]}-{occurrence}"
        return NamedNode(f"{self.base}frag/{fragment_owner(entity.value)}/{lod}/{tail}")

    def plan(self, name: str) -> NamedNode:
        return NamedNode(f"{self.base}plan/{quote(name, safe='')}")

    def decision(self, ident: str) -> NamedNode:
        """A recorded decision's id (``D-3``) or an ADR's path: stable, so re-indexing keeps the IRI."""
        return NamedNode(f"{self.base}decision/{quote(ident, safe='/')}")

    def change(self, commit: str) -> NamedNode:
        return NamedNode(f"{self.base}change/{commit}")

    def index_run(self, stamp: str) -> NamedNode:
        return NamedNode(f"{self.base}run/{stamp}")
