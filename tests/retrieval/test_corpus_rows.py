"""The caches' corpus is read without OPTIONALs (``CorpusReader``, issue 14: faster than one query with
OPTIONALs and ORDER BY, and no dicts of names and places); its rows must be exactly those of
``search/corpus.rq`` (bar the vectors): fragments without a place or an owner's name, and fragments with
several owners or texts of which the first query gives only some, included."""

from __future__ import annotations

import shutil
from pathlib import Path

from acms.api import Index
from acms.retrieval.caches import DerivedCaches
from acms.sparql import catalog

FIXTURES = Path(__file__).parent.parent / "fixtures"


def test_joined_corpus_is_the_corpus_query(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    shutil.copytree(FIXTURES / "adr_project" / "docs", root / "more")
    (root / "pkg" / "twice.py").write_text("class A:\n    def f(self):\n        return 1\n\n\nclass A:\n    pass\n")
    with Index.open(root, embed_on_index=False) as idx:
        idx.index()
        idx.store.update("INSERT DATA { GRAPH <https://w3id.org/acms/tier/hot> { "  # a fragment in two graphs
                         "<urn:x:e> <https://w3id.org/acms/uko#hasFragment> <urn:x:f> . "
                         "<urn:x:f> <https://w3id.org/acms/uko#lod> \"micro\" ; <https://w3id.org/acms/uko#text> \"t\" . } }")
        placed = sorted(r["frag"].value for r in idx.store.select(catalog.text("search/corpus")) if "file" in r)
        uko = "https://w3id.org/acms/uko#"
        idx.store.update("INSERT { GRAPH ?g { <urn:x:e2> <%shasFragment> ?f . ?f <%stext> \"again\" } } "  # noqa: UP031
                         "WHERE { GRAPH ?g { ?f <%slod> \"micro\" } VALUES ?f { <%s> } }" % (uko, uko, uko, placed[0]))
        idx.store.update("INSERT { GRAPH ?g { ?f <%stext> \"a second text\" } } "  # noqa: UP031
                         "WHERE { GRAPH ?g { ?f <%slod> \"micro\" } VALUES ?f { <%s> } }" % (uko, uko, placed[1]))
        reference = [{k: v for k, v in row.items() if k != "vector"}
                     for row in idx.store.select(catalog.text("search/corpus"))]
        joined = DerivedCaches(idx.store, idx.layout).corpus

    def as_row(r: dict) -> tuple:
        def v(k: str) -> object:
            return None if k not in r else int(r[k].value) if k in ("start", "end") else r[k].value
        return (r["frag"].value, r["text"].value, v("name"), v("qn"), v("start"), v("end"), v("file"))

    want = [as_row(r) for r in reference]
    assert len(joined) == len(want) > 20
    assert {r.frag for r in joined if r.name is None} >= {"urn:x:f", placed[0]}
    assert sum(r.frag == placed[0] for r in joined) == 4 and sum(r.frag == placed[1] for r in joined) == 2
    assert [r.frag for r in joined] == [r[0] for r in want]  # the same order
    assert sorted(map(tuple, joined), key=repr) == sorted(want, key=repr)
