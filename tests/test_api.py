"""The public surface: __all__ is honest, and the façade runs the main job end to end."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import acms
from acms.errors import QueryRejected, UsageError
from acms.tokens import count


def test_all_matches_exports() -> None:
    public = {n for n in dir(acms) if not n.startswith("_") and n not in {"annotations"}}
    modules = {n for n in public if type(getattr(acms, n)).__name__ == "module"}
    assert set(acms.__all__) - {"__version__"} == public - modules
    # what the façade's methods return is importable from acms itself
    assert {"Index", "IndexReport", "SearchResult", "AssemblyResult", "QueryResult", "Description",
            "EntityHistory", "AcmsError"} <= set(acms.__all__)


def test_facade_index_search_assemble(sample_project: Path) -> None:
    with acms.Index.open(sample_project) as idx:
        report = idx.index()
        assert report.files_indexed >= 5 and report.embedded > 0
        assert idx.search("parse header", k=3).hits[0].name.startswith("pkg.mod.Parser")
        result = idx.assemble("how are header lines parsed", budget=800, privacy_mode="redact")
        assert count(result.assembled.rendered) <= 800 and result.assembled.items
        assert idx.query("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?c a uko:Class } }")[0]["n"].value == "2"


def test_readme_python_example_runs_as_written(sample_project: Path) -> None:
    """The README's Python API example, run as written in a project folder."""
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- example: python, run by tests/test_api.py -->\n```python\n(.*?)```", readme, re.S)
    assert block, "the README lost its Python API example"
    out = subprocess.run([sys.executable, "-c", block.group(1)], cwd=sample_project, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert re.fullmatch(r"\d+ files indexed", lines[0]) and int(lines[0].split()[0]) >= 5
    assert re.match(r"pkg/mod\.py:\d+-\d+ pkg\.mod\.Parser", lines[1])
    assert "# Context for: how are header lines parsed" in out.stdout and "def parse_header" in out.stdout
    assert "['https://w3id.org/acms/id/sample/code/pkg/mod.py#pkg.mod.Base'," in out.stdout
    assert lines[-1].startswith("['pkg.mod.Parser.parse_all  pkg/mod.py:")


def test_shared_index_reads_beside_a_writer(indexed_sample: Path) -> None:
    """A shared Index holds no lock between calls: a writer (another Index here) indexes in between,
    and the shared one's next call sees the new state with its caches rebuilt."""
    reader = acms.Index.open(indexed_sample, mode="shared", wait=5)
    try:
        assert not reader.search("zebra_stripes", mode="keyword", k=3).hits
        (indexed_sample / "pkg" / "zebra.py").write_text("def zebra_stripes(n):\n    return n\n")
        with acms.Index.open(indexed_sample, wait=5) as writer:
            assert writer.index().files_indexed == 1
        hits = reader.search("zebra_stripes", mode="keyword", k=3).hits
        assert hits and hits[0].source_ref == "pkg/zebra.py:1-2"
        assert reader.sparql("ASK { GRAPH ?g { ?f uko:name \"zebra_stripes\" } }").boolean is True
        with pytest.raises(QueryRejected):
            reader.sparql("SELECT * WHERE { SERVICE <http://example.org/s> { ?s ?p ?o } }")
        with pytest.raises(UsageError, match="near matches: pkg.mod.Parser.parse_header"):
            reader.describe("parse_headr")
    finally:
        reader.close()
