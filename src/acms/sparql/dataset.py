"""The dataset a user's query runs against: what its default graph is, as RDF users expect it.

Every triple acms writes lives in a named graph (the tiers, meta, ontology), so a store's own default
graph is empty and ``SELECT * { ?s ?p ?o }`` would find nothing. For queries that users and clients
send (``acms sparql``, the endpoint) the default graph is therefore, unless the query or the request
names its own graphs:

- ``current`` (the default): the union of the current tiers, hot + warm: the project as it is now;
- ``all``: the union of every graph (history, meta and ontology included; Oxigraph's and Fuseki's
  "union default graph");
- ``empty``: the store's own default graph, strict SPARQL 1.1 (empty in an acms index).

A query's ``FROM`` / ``FROM NAMED`` clauses, or the protocol's ``default-graph-uri`` /
``named-graph-uri`` parameters, take precedence over the mode (pyoxigraph would otherwise let the
``default_graph`` argument override ``FROM``). ``GRAPH ?g { … }`` always ranges over every named graph.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum
from typing import Any

import pyoxigraph as ox

from acms.sparql.guard import scan
from acms.vocab import TIER_HOT, TIER_WARM

__all__ = ["CURRENT_GRAPHS", "DefaultGraph", "dataset_arguments", "names_its_dataset"]

CURRENT_GRAPHS: tuple[ox.NamedNode, ...] = (TIER_HOT, TIER_WARM)
_FROM = re.compile(r"\bFROM\b", re.IGNORECASE)


class DefaultGraph(str, Enum):
    """What a query's default graph is when neither the query nor the request names graphs."""

    CURRENT = "current"
    ALL = "all"
    EMPTY = "empty"

    @property
    def help(self) -> str:
        return {"current": "the union of the current tiers (hot + warm)",
                "all": "the union of every graph, history and ontology included",
                "empty": "the store's own default graph (strict SPARQL; empty in an acms index)"}[self.value]


def names_its_dataset(text: str) -> bool:
    """True when the query has a ``FROM`` or ``FROM NAMED`` clause (strings, IRIs and comments aside)."""
    return bool(_FROM.search(scan(text).code))


def dataset_arguments(text: str, mode: DefaultGraph, default_graphs: Sequence[ox.NamedNode] = (),
                      named_graphs: Sequence[ox.NamedNode] = ()) -> dict[str, Any]:
    """The keyword arguments of ``pyoxigraph.Store.query`` that give ``text`` its dataset."""
    if default_graphs or named_graphs:  # the protocol's parameters override the query's FROM (SPARQL 1.1 §2.1.4)
        args: dict[str, Any] = {"default_graph": list(default_graphs)}
        if named_graphs:
            args["named_graphs"] = list(named_graphs)
        return args
    if names_its_dataset(text) or mode is DefaultGraph.EMPTY:
        return {}
    if mode is DefaultGraph.ALL:
        return {"use_default_graph_as_union": True}
    return {"default_graph": list(CURRENT_GRAPHS)}
