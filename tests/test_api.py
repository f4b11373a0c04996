"""The public surface: __all__ is honest, and the façade runs the main job end to end."""

from __future__ import annotations

from pathlib import Path

import acms
from acms.tokens import count


def test_all_matches_exports() -> None:
    public = {n for n in dir(acms) if not n.startswith("_") and n not in {"annotations"}}
    modules = {n for n in public if type(getattr(acms, n)).__name__ == "module"}
    assert set(acms.__all__) - {"__version__"} == public - modules


def test_facade_index_search_assemble(sample_project: Path) -> None:
    with acms.Index.open(sample_project) as idx:
        report = idx.index()
        assert report.files_indexed >= 5 and report.embedded > 0
        assert idx.search("parse header", k=3).hits[0].name.startswith("pkg.mod.Parser")
        result = idx.assemble("how are header lines parsed", budget=800, privacy_mode="redact")
        assert count(result.assembled.rendered) <= 800 and result.assembled.items
        assert idx.query("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?c a uko:Class } }")[0]["n"].value == "2"
