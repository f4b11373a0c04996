"""The keyword and ranking caches built in one pass over the corpus's texts, tokenised once (issue 14),
are the ones built from the corpus rows' texts: every saved file byte for byte."""

from __future__ import annotations

import shutil
from pathlib import Path

from acms.api import Index
from acms.index.keyword import KeywordIndex
from acms.ranking.index import CONTAINER, NESTING, FragmentRow, RankingIndex
from acms.retrieval.caches import BUILD_STEPS, DerivedCaches
from acms.sparql import catalog

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _files(directory: Path) -> dict[str, bytes]:
    """Every file, but the names of the token numbering the caches' pass built from (a text-based
    build has none: its numbering is its own), which only an update reads."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file() and p.name not in ("numbers.npy", "numbering.txt")}


def test_one_pass_caches_are_the_corpus_caches(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    shutil.copytree(FIXTURES / "adr_project" / "docs", root / "more")
    (root / "pkg" / "long.py").write_text("".join(f"def f{i}(x_{i}):\n    return HTTPServer{i}(x_{i})\n\n\n"
                                                  for i in range(40)), encoding="utf-8")
    (root / "pkg" / "deco.py").write_text(
        "def retried(times):\n    \"\"\"Retry a call.\"\"\"\n    def wrap(fn):\n        return fn\n    return wrap\n",
        encoding="utf-8")
    (root / "web").mkdir()
    (root / "web" / "adapter.js").write_text(
        "function adapter(config) {\n  return new Promise(function dispatch(resolve) {\n    resolve(config);\n  });\n}\n",
        encoding="utf-8")
    with Index.open(root, embed_on_index=False) as idx:
        idx.index()
        steps: list[int] = []
        caches = DerivedCaches(idx.store, idx.layout, progress=steps.append)
        shutil.rmtree(idx.layout.cache, ignore_errors=True)
        caches.keyword()
        caches.ranking()
        assert steps == list(range(1, BUILD_STEPS + 1)) and caches.rebuilt == ["keyword", "ranking"]
        rows = caches.corpus
        paths = {r["file"].value: r["path"].value for r in idx.store.select(catalog.text("search/file-paths"))}
        kinds = {r["frag"].value: r["kind"].value.rsplit("#", 1)[-1]
                 for r in idx.store.select(catalog.text("search/class-fragments"))}
        outlines = {r["frag"].value: r["outline"].value
                    for r in idx.store.select(catalog.text("search/class-outlines"))}
        nesting = {r["frag"].value: r["outline"].value
                   for r in idx.store.select(catalog.text("search/function-outlines"))}
        # a Python function that defines one comes with its outline; a JavaScript
        # function around a callback is not one
        assert [(paths[r.file], r.qn.rsplit(".", 1)[-1]) for r in rows if r.frag in nesting] == [("pkg/deco.py", "retried")]
        body, outline = next(iter(nesting.items()))  # the same owner's macro fragment
        assert outline.rsplit("/", 2)[0] == body.rsplit("/", 2)[0] and "/macro/" in outline and "/micro/" in body
        keyword = KeywordIndex.build([r.frag for r in rows], [f"{r.name or ''} {r.qn or ''}\n{r.text}" for r in rows])
        ranking = RankingIndex.build(
            FragmentRow(r.frag, paths[r.file], r.start, r.end, r.text,  # type: ignore[arg-type]
                        CONTAINER.get(kinds.get(r.frag, ""), 0) or (NESTING if r.frag in nesting else 0),
                        (r.name or "") if r.qn is not None else "", outlines.get(r.frag) or nesting.get(r.frag, ""),
                        r.qn or "")
            for r in rows if r.file is not None and r.file in paths)
        keyword.save(tmp_path / "keyword", key=caches.text_key)
        ranking.keyword_rows = ranking.aligned(keyword)[:, 4].copy()  # the caches save where each document sits
        ranking.save(tmp_path / "ranking", key=caches.text_key)
        assert len(rows) > 50 and len(ranking.windows) > len(ranking.files)
        assert _files(idx.layout.cache_dir("keyword")) == _files(tmp_path / "keyword")
        assert _files(idx.layout.cache_dir("ranking")) == _files(tmp_path / "ranking")
        fresh = DerivedCaches(idx.store, idx.layout)
        fresh.keyword(), fresh.ranking()
        assert fresh.rebuilt == []  # both saved under the graph's state


def test_a_cache_swapped_away_while_read_back_is_used_as_built(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Two processes rebuild the same stale cache (a reader beside a writer): one's directory swap can
    catch the other reading its cache back. That reader keeps the index it built (it exited 4 with
    "the keyword index ... is unreadable" in tests/test_concurrency.py)."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    with Index.open(root, embed_on_index=False) as idx:
        idx.index()
        want = DerivedCaches(idx.store, idx.layout).keyword().scores("parse header")
        shutil.rmtree(idx.layout.cache, ignore_errors=True)
        save_keyword, save_ranking = KeywordIndex.save, RankingIndex.save

        def swapped(save):  # noqa: ANN001, ANN202 - the other process's swap: a file of the new directory gone
            def run(self, directory: Path, *, key: str = "") -> None:  # noqa: ANN001
                save(self, directory, key=key)
                next(p for p in sorted(Path(directory).rglob("*.json")) if p.name != "manifest.json").unlink()
            return run

        monkeypatch.setattr(KeywordIndex, "save", swapped(save_keyword))
        monkeypatch.setattr(RankingIndex, "save", swapped(save_ranking))
        caches = DerivedCaches(idx.store, idx.layout)
        assert (caches.keyword().scores("parse header") == want).all()
        assert caches.ranking().files and caches.rebuilt == ["keyword", "ranking"]


def test_an_index_run_keys_the_text_caches_by_its_run_and_a_new_model_keeps_them(tmp_path: Path) -> None:
    """The keyword and ranking caches are built before the run's embeddings (issue 14) and keyed by
    the run alone: the embeddings that follow leave them current, and so does a model migration, which
    changes no text; the vector cache is keyed by the model too and is rebuilt for the new one."""
    from acms.retrieval.embedding_store import migrate

    root = tmp_path / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    with Index.open(root, embedding_dims=4) as idx:
        report = idx.index()
        assert report.embedded > 0
        caches = DerivedCaches(idx.store, idx.layout)
        caches.keyword(), caches.ranking()
        assert caches.rebuilt == []  # built by the run before its embeddings, still current after them
        old_state, old_text = caches.state_key, caches.text_key
    with Index.open(root, embedding_dims=8) as idx:  # another model
        migrate(idx.store, idx.layout, idx.settings, "lsa")
        after = DerivedCaches(idx.store, idx.layout)
        after.keyword(), after.ranking()
        assert after.rebuilt == [] and after.text_key == old_text
        assert after.state_key != old_state  # the vectors' key follows the model
