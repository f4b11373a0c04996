"""The outlines a run keeps (``cache/link-outlines.db``) give linking what parsing the module gives it."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from acms.ingest import link_outlines as outlines_module
from acms.ingest.extractors import python_extraction
from acms.ingest.link_outlines import LinkOutlines, link_outline, link_outline_key

SRC = Path(__file__).resolve().parents[2] / "src" / "acms"
STDLIB = Path(sysconfig.get_paths()["stdlib"])


def _modules() -> list[tuple[str, str]]:
    """(path, text) of acms's own modules and two standard library packages (relative imports, a
    package's ``__init__``, classes with bases, a file that does not parse)."""
    found = [(f"acms/{p.relative_to(SRC).as_posix()}", p.read_text(encoding="utf-8")) for p in sorted(SRC.rglob("*.py"))]
    for package in ("json", "email"):
        found += [(p.relative_to(STDLIB).as_posix(), p.read_text(encoding="utf-8"))
                  for p in sorted((STDLIB / package).rglob("*.py"))]
    return [*found, ("broken.py", "def f(:\n    pass\n")]


def test_a_kept_outline_is_what_parsing_the_module_gives_linking(tmp_path: Path) -> None:
    modules = _modules()
    paths = {p for p, _ in modules}
    parsed = {}
    for path, text in modules:
        ext = python_extraction(path, text, paths)
        parsed[link_outline_key(f"h{len(parsed)}", ext.module or "", path)] = link_outline(ext)
    assert any(e.parse_error for e in parsed.values()) and any(e.imports for e in parsed.values())
    assert any(s.bases for e in parsed.values() for s in e.symbols)
    kept = LinkOutlines(tmp_path)
    kept.put(parsed)
    kept.close()
    again = LinkOutlines(tmp_path)
    assert again.get([*parsed, "unknown key"]) == parsed
    again.close()


def test_outlines_of_another_extractor_version_are_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one = link_outline(python_extraction("m.py", "import os\n\n\nclass A(os.PathLike):\n    pass\n", {"m.py"}))
    kept = LinkOutlines(tmp_path)
    kept.put({"k": one})
    kept.close()
    monkeypatch.setattr(outlines_module, "extractor_version", lambda: "another")
    other = LinkOutlines(tmp_path)
    assert other.get(["k"]) == {}
    other.close()


def test_rows_of_texts_no_file_has_are_dropped_once_they_outnumber_the_live_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outlines_module, "PRUNE_FROM", 3)
    one = link_outline(python_extraction("m.py", "x = 1\n", {"m.py"}))
    kept = LinkOutlines(tmp_path)
    kept.put({link_outline_key(f"d{i}", "m", "m.py"): one for i in range(6)})
    kept.prune(["d0", "d1", "d2"])  # 6 rows, not more than 2 x 3 live + 3: kept
    assert len(kept.get(link_outline_key(f"d{i}", "m", "m.py") for i in range(6))) == 6
    kept.prune(["d0"])  # 6 rows > 2 x 1 + 3: the dead go
    assert list(kept.get(link_outline_key(f"d{i}", "m", "m.py") for i in range(6))) == [link_outline_key("d0", "m", "m.py")]
    kept.close()


def test_a_cache_it_cannot_open_costs_only_the_parsing(tmp_path: Path) -> None:
    (tmp_path / "link-outlines.db").mkdir()
    kept = LinkOutlines(tmp_path)
    kept.put({"k": link_outline(python_extraction("m.py", "x = 1\n", {"m.py"}))})
    assert kept.get(["k"]) == {}
    kept.prune([])
    kept.close()
