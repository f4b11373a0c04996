"""The service layer behind acms.Index: session modes, the query guard on every path, one store seam."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import acms
from acms.errors import QueryRejected, StoreMissing, UsageError


def test_index_query_goes_through_the_guard(indexed_sample: Path) -> None:
    with acms.Index.open(indexed_sample, mode="read") as idx:
        with pytest.raises(QueryRejected, match="SERVICE is refused"):
            idx.query("SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }")
        with pytest.raises(QueryRejected, match="nests"):
            idx.query("SELECT * WHERE " + "{" * 100 + "}" * 100)
        assert idx.query("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }")[0]["n"].value != "0"


def test_read_mode_refuses_writes_and_needs_an_index(tmp_path: Path, indexed_sample: Path) -> None:
    with acms.Index.open(indexed_sample, mode="read") as idx:
        with pytest.raises(UsageError, match="read-only"):
            idx.index()
    (tmp_path / "empty").mkdir()
    with pytest.raises(StoreMissing, match="acms index"):
        acms.Index.open(tmp_path / "empty", mode="read")


def test_a_shared_index_lets_a_writer_in_and_sees_its_work(indexed_sample: Path) -> None:
    """``shared`` (acms serve, MCP): the lock per call, so `acms index` in another process runs beside
    it, and the next call sees (and searches) what it wrote."""
    with acms.Index.open(indexed_sample, mode="shared", wait=30) as idx:
        assert not idx.search("zanzibar_quux", mode="keyword").hits
        (indexed_sample / "pkg" / "fresh.py").write_text("def zanzibar_quux():\n    return 'new'\n")
        out = subprocess.run([sys.executable, "-m", "acms", "index", str(indexed_sample), "--wait", "10"],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        hits = idx.search("zanzibar_quux", mode="keyword").hits
        assert hits and hits[0].name.endswith("zanzibar_quux")
        result = idx.assemble("where is zanzibar_quux defined", budget=600)
        assert "zanzibar_quux" in result.assembled.rendered
