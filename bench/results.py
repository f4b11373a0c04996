"""What ``query_raw``'s own result types cost against pyoxigraph's objects, in one process, best of
``--runs`` (each pair interleaved, so a busy machine slows both alike):

- reading a SELECT's rows from the embedded store: ``SelectResult`` (a dict of terms per row, made as
  the row is read) beside pyoxigraph's ``QuerySolutions`` read by variable name (what callers did);
- serializing a SELECT as SPARQL JSON: the untouched answer through pyoxigraph's native serializer
  beside rows already read (the SPARQL endpoint's checked rows), written from their terms;
- a remote store's answer, from the bytes an engine sent: SPARQL JSON rows read as ``SelectResult``
  beside the parse and per-row dict the remote ``select`` made before; N-Triples (CONSTRUCT) read as a
  ``GraphResult`` beside the scratch in-memory store they were loaded into and queried back from.

    python bench/results.py [--rows 200000] [--runs 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acms.sparql.results import SelectResult
from acms.store.oxigraph import OxigraphStore
from acms.store.results import parsed_results, parsed_triples
from acms.store.scope import GraphScope
from acms.vocab import TIER_HOT

SELECT = "SELECT ?s ?o ?g WHERE { GRAPH ?g { ?s <urn:p> ?o } }"


def best(runs: int, first: Callable[[], object], second: Callable[[], object]) -> tuple[float, float]:
    a: list[float] = []
    b: list[float] = []
    for _ in range(runs):
        for fn, into in ((first, a), (second, b)):
            start = time.perf_counter()
            fn()
            into.append(time.perf_counter() - start)
    return min(a), min(b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    n = args.rows
    store = OxigraphStore(None)
    raw = store.raw
    raw.bulk_extend(ox.Quad(ox.NamedNode(f"urn:s{i}"), ox.NamedNode("urn:p"), ox.Literal(f"text {i}", language="en"),
                            TIER_HOT) for i in range(n))

    def read_native() -> None:
        for s in raw.query(SELECT):
            s["s"], s["o"], s["g"]

    def read_ours() -> None:
        for r in store.query_raw(SELECT):  # type: ignore[union-attr]
            r["s"], r["o"], r["g"]

    def json_native() -> None:
        store.query_raw(SELECT).serialize(ox.QueryResultsFormat.JSON)  # type: ignore[union-attr,call-arg]

    def json_rows() -> None:
        answer = store.query_raw(SELECT)
        assert isinstance(answer, SelectResult)
        SelectResult(answer.variables, iter(answer)).serialize(ox.QueryResultsFormat.JSON)

    scope = GraphScope("bench")
    physical = ox.NamedNode(scope.physical(TIER_HOT).value)
    as_sent = f"SELECT ?s ?o ({physical} AS ?g) WHERE {{ GRAPH {TIER_HOT} {{ ?s <urn:p> ?o }} }}"  # the engine's names
    body_json = raw.query(as_sent).serialize(format=ox.QueryResultsFormat.JSON)  # type: ignore[union-attr]
    body_nt = ox.serialize((q.triple for q in raw.quads_for_pattern(None, None, None, TIER_HOT)),
                           format=ox.RdfFormat.N_TRIPLES)

    def json_before() -> None:
        parsed = ox.parse_query_results(body_json, format=ox.QueryResultsFormat.JSON)
        names = [v.value for v in parsed.variables]
        for s in parsed:
            {k: scope.term_back(s[k]) for k in names if s[k] is not None}

    def json_ours() -> None:
        for _ in parsed_results(body_json, scope.term_back):  # type: ignore[union-attr]
            pass

    def nt_before() -> None:
        scratch = ox.Store()
        scratch.extend(ox.Quad(t.subject, t.predicate, t.object) for t in ox.parse(body_nt, format=ox.RdfFormat.N_TRIPLES))
        for _ in scratch.query("CONSTRUCT WHERE { ?s ?p ?o }"):  # type: ignore[union-attr]
            pass

    def nt_ours() -> None:
        for _ in parsed_triples(body_nt, scope.term_back):
            pass

    cases = [
        ("embedded SELECT, every row read", read_native, read_ours, "QuerySolutions by name"),
        ("embedded SELECT as SPARQL JSON", json_native, json_rows, "native serializer (untouched)"),
        ("remote SELECT from SPARQL JSON", json_before, json_ours, "parse + dict per row (before)"),
        ("remote CONSTRUCT from N-Triples", nt_before, nt_ours, "scratch store (before)"),
    ]
    print(f"{n:,} rows or triples; best of {args.runs}\n")
    print("| case | baseline | baseline s | result types s | ratio |")
    print("|---|---|---:|---:|---:|")
    for name, baseline, ours, label in cases:
        base, new = best(args.runs, baseline, ours)
        print(f"| {name} | {label} | {base:.3f} | {new:.3f} | {new / base:.2f} |")
    store.close()


if __name__ == "__main__":
    from bench.docs_page import run

    run(main, "results")
