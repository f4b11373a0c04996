"""Every shipped query parses, declares its parameters, and binding never pastes user text."""

from __future__ import annotations

import re

import pyoxigraph as ox
import pytest
from pyoxigraph import Literal, NamedNode

from acms.errors import QueryRejected, UsageError
from acms.sparql import catalog
from acms.sparql.bind import bind
from acms.sparql.functions import ScoreTables, functions
from acms.sparql.guard import check_query
from acms.store.oxigraph import OxigraphStore
from acms.vocab import PREFIX_HEADER

SPECS = sorted(catalog.all_queries().values(), key=lambda s: s.key)


@pytest.mark.parametrize("spec", SPECS, ids=[s.key for s in SPECS])
def test_query_parses_and_declares_params(spec: catalog.QuerySpec) -> None:
    assert spec.summary, f"{spec.key} has no '# summary:' header"
    for name, _ in spec.params:
        assert re.search(rf"\?{name}\b", spec.text), f"{spec.key}: param {name} unused"
    values = {name: [NamedNode("urn:x")] for name, _ in spec.params}
    text = PREFIX_HEADER + bind(spec.text, values)
    store = ox.Store()
    if spec.is_update:
        store.update(text)
    else:
        store.query(text, custom_functions=dict(functions(ScoreTables())))


def test_bound_string_cannot_inject() -> None:
    store = OxigraphStore(None)
    store.raw.add(ox.Quad(NamedNode("urn:a"), NamedNode("urn:p"), Literal("x")))
    evil = Literal('x" } ; DROP ALL ; SELECT * WHERE { "')
    rows = store.select("SELECT ?s WHERE { ?s <urn:p> ?o }", {"o": evil})
    assert rows == [] and len(store.raw) == 1
    assert store.select("SELECT ?s WHERE { ?s <urn:p> ?o }", {"o": Literal("x")}) == [{"s": NamedNode("urn:a")}]


def test_bind_skips_where_in_strings_and_comments() -> None:
    q = '# WHERE { in a comment\nSELECT ?s WHERE { ?s ?p "WHERE {" }'
    out = bind(q, {"s": NamedNode("urn:a")})
    assert out.index("VALUES") > out.index('SELECT ?s WHERE {')


def test_guard_allows_service_when_asked() -> None:
    q = "SELECT * WHERE { SERVICE <http://x> { ?s ?p ?o } }"
    with pytest.raises(QueryRejected):
        check_query(q)
    check_query(q, allow_service=True)
    check_query('SELECT * WHERE { ?s ?p "SERVICE" }')  # a string is not the keyword


def test_guard_caps_length() -> None:
    with pytest.raises(QueryRejected, match="characters"):
        check_query("#" * 200_000)


def test_a_query_read_from_its_own_file_is_the_catalog_s() -> None:
    """``catalog.get`` reads one query's file until the whole catalog is loaded: the same spec either way,
    and an unknown key is refused either way."""
    for key, spec in catalog.all_queries().items():
        assert catalog._one(key) == spec
    for key in ("search/nothing-here", "../pyproject", "search/corpus.rq"):
        assert catalog._one(key) is None
    catalog.all_queries.cache_clear()
    catalog._one.cache_clear()
    with pytest.raises(UsageError, match="unknown query"):
        catalog.get("search/nothing-here")
    assert catalog.get("search/corpus").key == "search/corpus.rq"
