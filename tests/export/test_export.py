"""acms export: RDF round trips, graph-viewer formats, scopes, node cap, errors."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import networkx
import pydot
import pytest
import rdflib
from click.testing import CliRunner
from rdflib.compare import isomorphic

from acms.cli.main import cli
from acms.export import scope
from acms.store.oxigraph import OxigraphStore
from acms.validation.batch import _to_rdflib

from ..conftest import copy_of_indexed


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, _indexed_sample_template: Path) -> Path:
    return copy_of_indexed(_indexed_sample_template, tmp_path_factory.mktemp("export"))


def export(project: Path, *args: str) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(cli, ["export", "-C", str(project), *args])
    return result.exit_code, result.stdout_bytes, result.stderr


def expected_graph(project: Path) -> rdflib.Graph:
    store = OxigraphStore(project / ".acms" / "graph")
    try:
        quads = list(scope.whole().stream(store))
    finally:
        store.close()
    g = rdflib.Graph()
    for q in quads:
        g.add((_to_rdflib(q.subject), _to_rdflib(q.predicate), _to_rdflib(q.object)))
    return g


@pytest.mark.parametrize(("fmt", "parser"), [("turtle", "turtle"), ("trig", "trig"), ("nquads", "nquads"),
                                             ("jsonld", "json-ld")])
def test_rdf_round_trips(project: Path, fmt: str, parser: str) -> None:
    code, out, err = export(project, "--format", fmt)
    assert code == 0, err
    parsed = rdflib.Dataset()
    parsed.parse(data=out.decode("utf-8"), format=parser)
    merged = rdflib.Graph()
    for s, p, o, _ in parsed.quads((None, None, None, None)):
        merged.add((s, p, o))
    want = expected_graph(project)
    assert len(merged) == len(want) > 400
    assert isomorphic(merged, want)


def test_graphml_dot_cytoscape(project: Path) -> None:
    code, out, _ = export(project, "--format", "graphml")
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    root = ET.fromstring(out)
    nodes = root.findall(".//g:node", ns)
    labels = {n.find("g:data[@key='label']", ns).text for n in nodes}
    assert {"pkg.mod.Parser", "pkg.util.normalize", "Usage"} <= labels
    assert not any("frag/" in n.get("id") for n in nodes)
    edges = root.findall(".//g:edge", ns)
    assert any(e.find("g:data", ns).text == "calls" for e in edges)
    nx_graph = networkx.read_graphml(io.BytesIO(out))
    assert nx_graph.number_of_nodes() == len(nodes) and nx_graph.number_of_edges() == len(edges)
    assert nx_graph.nodes[next(iter(nx_graph.nodes))]["kind"]
    code, out, _ = export(project, "--format", "dot")
    (dot,) = pydot.graph_from_dot_data(out.decode())
    assert len(dot.get_edges()) == len(edges)
    assert {n.get_name().strip('"') for n in dot.get_nodes()} >= {n.get("id") for n in nodes}
    code, out, _ = export(project, "--format", "cytoscape")
    elements = json.loads(out)["elements"]
    assert sum(1 for e in elements if "source" not in e["data"]) == len(nodes)


def test_scopes_and_cap(project: Path) -> None:
    code, out, _ = export(project, "--modules", "--format", "cytoscape")
    kinds = {e["data"]["kind"] for e in json.loads(out)["elements"] if "source" not in e["data"]}
    assert kinds == {"Module"}
    code, out, _ = export(project, "--neighbourhood", "normalize", "--depth", "1", "--format", "cytoscape")
    labels = {e["data"]["label"] for e in json.loads(out)["elements"] if "source" not in e["data"]}
    assert {"pkg.util.normalize", "pkg.mod.Parser.parse_header", "pkg.util"} <= labels
    assert "Usage" not in labels
    code, out, _ = export(project, "--neighbourhood", "Parser.parse_header", "--depth", "1", "--format", "cytoscape")
    labels = {e["data"]["label"] for e in json.loads(out)["elements"] if "source" not in e["data"]}
    assert code == 0 and {"pkg.mod.Parser.parse_header", "pkg.util.normalize"} <= labels  # the end of its name
    code, out, err = export(project, "--format", "graphml", "--max-nodes", "3")
    assert code == 0 and "left out" in err
    assert len(ET.fromstring(out).findall(".//{http://graphml.graphdrawing.org/xmlns}node")) == 3


def test_construct_scope_and_errors(project: Path, tmp_path: Path) -> None:
    q = tmp_path / "classes.rq"
    q.write_text("CONSTRUCT { ?c a uko:Class } WHERE { GRAPH ?g { ?c a uko:Class } }")
    code, out, _ = export(project, "--construct", str(q), "--format", "nquads")
    assert code == 0 and out.decode().count("\n") == 2
    code, _, err = export(project, "--neighbourhood", "nothing_like_this")
    assert code == 2 and "no entity matches" in err
    code, _, err = export(project, "--modules", "--tier", "warm")
    assert code == 2 and "choose one scope" in err
    code, _, err = export(project, "--tier", "cold")
    assert code == 2 and "empty" in err


def test_one_colour_per_kind_in_every_format(project: Path) -> None:
    """GraphML, DOT, Cytoscape JSON and the HTML view colour each kind alike, from one table."""
    from acms.export.colours import KIND_COLOURS

    code, out, _ = export(project, "--format", "graphml")
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    graphml = {(n.find("g:data[@key='kind']", ns).text, n.find("g:data[@key='colour']", ns).text)
               for n in ET.fromstring(out).findall(".//g:node", ns)}
    code, out, _ = export(project, "--format", "cytoscape")
    cyto = json.loads(out)
    cytoscape = {(e["data"]["kind"], e["data"]["colour"]) for e in cyto["elements"] if "source" not in e["data"]}
    assert any(s["style"].get("target-arrow-shape") == "triangle" for s in cyto["style"])  # directed edges
    code, out, _ = export(project, "--format", "dot")
    (dot,) = pydot.graph_from_dot_data(out.decode())
    kinds = {n.get_name().strip('"'): k for n in dot.get_nodes() if (k := (n.get("tooltip") or '""').strip('"').split(" ")[0])}
    dot_pairs = {(kinds[n.get_name().strip('"')], n.get("fillcolor").strip('"')) for n in dot.get_nodes()
                 if n.get_name().strip('"') in kinds}
    code, out, _ = export(project, "--format", "html")
    data = json.loads(out.decode().split('id="graph-data">', 1)[1].split("</script>", 1)[0].replace("<\\/", "</"))
    html = set(zip(data["kinds"], data["colours"]))
    assert graphml == cytoscape == dot_pairs and html == {(k, c) for k, c in graphml}
    assert all(KIND_COLOURS[k] == c for k, c in graphml) and len({c for _, c in graphml}) == len(graphml)
    assert {"Module", "Class", "Method", "Function", "Directory", "DocSection"} <= {k for k, _ in graphml}


def test_view_nests_members_and_merges_a_file_with_its_module(project: Path) -> None:
    code, out, _ = export(project, "--format", "cytoscape")
    nodes = {e["data"]["id"]: e["data"] for e in json.loads(out)["elements"] if "source" not in e["data"]}
    by_label = {d["label"]: d for d in nodes.values()}
    parser, module = by_label["pkg.mod.Parser.parse_header"], by_label["pkg.mod"]
    assert nodes[parser["parent"]]["label"] == "pkg.mod.Parser" and nodes[by_label["pkg.mod.Parser"]["parent"]] is module
    assert module["where"] == "pkg/mod.py" and not any(d["kind"] == "File" and d["where"] == "pkg/mod.py"
                                                       for d in nodes.values())
    assert nodes[module["parent"]]["kind"] == "Directory"


def test_export_file_appears_whole_and_progress(project: Path, tmp_path: Path) -> None:
    target = tmp_path / "graph.nq"
    code, _, err = export(project, "--format", "nquads", "-o", str(target), "--progress")
    assert code == 0 and target.stat().st_size > 1000 and not list(tmp_path.glob(".*partial"))
    code, _, err = export(project, "--tier", "cold", "-o", str(tmp_path / "cold.ttl"))
    assert code == 2 and "empty" in err and not (tmp_path / "cold.ttl").exists() and not list(tmp_path.glob(".*"))


def test_progress_reports_the_export_phase(project: Path) -> None:
    """Off a terminal, --progress gives the export phase's counts (the whole scope's total is known)."""
    code, _, err = export(project, "--format", "nquads", "--progress")
    lines = [line for line in err.splitlines() if line.startswith("acms: export")]
    assert code == 0 and len(lines) == 1 and " done (" in lines[0]
    done, total = lines[0].split()[2].split("/")
    assert int(done) == int(total) > 400
    code, _, err = export(project, "--format", "nquads", "--quiet")
    assert code == 0 and "acms: export" not in err
