"""An index run after one edited file leaves the four keyword indexes (the fragments', the ranking
index's windows, paths and names) as their bases, linked from the state before, plus a small delta each,
and they answer as the indexes a full build of the same graph makes; the next edit stacks on them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acms.api import Index
from acms.index.keyword import LAYERED_FORMAT, KeywordIndex
from acms.index.layers import BASE_FILES
from acms.retrieval.caches import DerivedCaches
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore

from .test_splice import same_answers

KEYWORD_DIRS = ("keyword", "ranking/windows", "ranking/paths", "ranking/names")


def _module(i: int) -> str:
    return "".join(f"def handler_{i}_{j}(request, retries={j}):\n    \"\"\"Parse header {j} of module {i}.\"\"\"\n"
                   f"    value = request.headers.get('x-{i}-{j}')\n    return value or retries\n\n\n"
                   for j in range(5))


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Forty modules: one file's fragments, windows, path and names are a few percent of each index."""
    root = tmp_path_factory.mktemp("layered") / "proj"
    (root / "pkg").mkdir(parents=True)
    for i in range(40):
        (root / "pkg" / f"mod{i:02d}.py").write_text(_module(i))
    with Index.open(root) as idx:
        idx.index()
    return root


def _inodes(cache: Path) -> dict[str, int]:
    return {f"{d}/{name}": os.stat(cache / d / name).st_ino
            for d in KEYWORD_DIRS for name in BASE_FILES if (cache / d / name).is_file()}


def _full_build(root: Path, elsewhere: Path) -> dict[str, KeywordIndex]:
    store = OxigraphStore(IndexLayout(root / ".acms").graph, read_only=True)
    try:
        caches = DerivedCaches(store, IndexLayout(elsewhere))
        keyword, ranking = caches.keyword(), caches.ranking()
    finally:
        store.close()
    return {"keyword": keyword, "ranking/windows": ranking.windows, "ranking/paths": ranking.paths,
            "ranking/names": ranking.names}


def test_an_edit_links_the_bases_and_writes_small_deltas(project: Path, tmp_path: Path) -> None:
    cache = project / ".acms" / "cache"
    before = _inodes(cache)
    assert len(before) >= 4 * 8
    for step, (path, added) in enumerate([("pkg/mod07.py", "def brand_new_helper(x):\n    return x\n"),
                                          ("pkg/mod31.py", "def another_fresh_name(y):\n    return y\n")]):
        (project / path).write_text((project / path).read_text() + added)
        with Index.open(project) as idx:
            idx.index()
        assert _inodes(cache) == before  # the first build's files, linked again by each update
        full = _full_build(project, tmp_path / f"full{step}")
        for name in KEYWORD_DIRS:
            manifest = (cache / name / "manifest.json").read_text()
            assert LAYERED_FORMAT in manifest, name
            delta_bytes = sum(p.stat().st_size for p in (cache / name / "delta").iterdir())
            assert delta_bytes < 64 * 1024, (name, delta_bytes)
            same_answers(KeywordIndex.load(cache / name), full[name])
    assert KeywordIndex.load(cache / "keyword").top("another_fresh_name", 3)[0][1] > 0
