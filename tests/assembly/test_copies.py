"""One copy of the code in a context: on a project that ships a copy of its ``src/`` tree, the copies give
way to the originals, which name them, and files marked generated or vendored come after source."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acms.api import Index
from acms.assembly.copies import collapse_copies
from acms.assembly.model import Candidate
from acms.assembly.protocol import parse_request
from acms.strategies.engine import RunContext, run_strategy

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "copies_project"
TASKS = (
    "polygon area with the shoelace formula",
    "normalize a vector to unit length",
    "clamp a number between low and high",
    "grid layout position of a cell with gutters",
    "perimeter of a polygon",
    "request the polygon area from the service",
)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    root = tmp_path_factory.mktemp("copies") / "copies_project"
    shutil.copytree(FIXTURE, root)
    with Index.open(root, embed_on_index=False, record_use=False) as idx:
        idx.index()
        yield idx


def _request(task: str, strategy: str = "auto", budget: int = 3000) -> dict:
    return {"version": "v0", "id": "00000000-0000-4000-8000-000000000001", "request_id": "copies", "intent": task,
            "budgets": {"tokens_max": budget, "time_ms": 10000}, "strategy": strategy}


def _candidates(index: Index, task: str) -> list[Candidate]:
    """The default strategy's candidates as it proposes them, before any filter."""
    request = parse_request(_request(task))
    registry = index.registry
    strategy = registry.get("arce")
    ctx = RunContext(searcher=index.searcher, registry_folder=registry.get, engines=registry.engines,
                     request=request, deadline=time.perf_counter() + 10)
    return sorted(run_strategy(strategy, ctx), key=lambda c: (-c.score, c.fragment))


def _files(cands: list[Candidate], n: int = 10) -> list[str]:
    return list(dict.fromkeys(c.path for c in cands[:n]))


def _original(path: str) -> str:
    return path.replace("deno/lib/", "src/", 1)


def test_copies_take_no_place_and_more_files_fit_in_the_first_ten(index: Index) -> None:
    """Counted over the tasks, in the first ten candidates: distinct files (a copy counted as its
    original) and distinct entities. Measured: files 17 -> 24, entities 39 -> 59, copies 21 -> 0."""
    files_before = files_after = entities_before = entities_after = copies_before = 0
    for task in TASKS:
        cands = _candidates(index, task)
        collapsed = sorted(collapse_copies(cands, index.searcher.store), key=lambda c: (-c.score, c.fragment))
        assert not any(c.path.startswith("deno/") for c in collapsed)
        copies_before += sum(c.path.startswith("deno/") for c in cands[:10])
        files_before += len({_original(p) for p in _files(cands)})
        files_after += len(_files(collapsed))
        entities_before += len({(_original(c.path), c.name.rsplit(".", 1)[-1], c.lod) for c in cands[:10]})
        entities_after += len({(c.path, c.name.rsplit(".", 1)[-1], c.lod) for c in collapsed[:10]})
        # nothing the copies offered is lost: each copied entity is there from the original
        names = {c.name.rsplit(".", 1)[-1] for c in collapsed}
        assert {c.name.rsplit(".", 1)[-1] for c in cands if c.path.startswith("deno/")} <= names
    assert copies_before > 0  # the copies did take places
    assert files_after > files_before
    assert entities_after > entities_before


def test_a_context_shows_the_original_and_names_its_copies_once(index: Index) -> None:
    for fmt in ("markdown", "text"):
        result = index.render(parse_request({**_request(TASKS[0]), "format": fmt}))
        paths = [i.candidate.path for i in result.assembled.items]
        assert paths and not any(p.startswith("deno/") for p in paths)
        assert "deno/lib/geometry/polygon.ts" not in result.assembled.rendered.replace(
            "copies, not shown: deno/lib/geometry/polygon.ts", "")
        assert result.assembled.rendered.count("copies, not shown: deno/lib/geometry/polygon.ts") == 1
    reply = index.render(parse_request(_request(TASKS[0])), output="json").reply
    assert any("copies: deno/lib/geometry/polygon.ts" in f["reason"] for f in reply["fragments"])


def test_marked_files_come_after_source(index: Index) -> None:
    for task in ("request the polygon area from the service", "polygon area"):
        items = index.render(parse_request(_request(task, budget=6000))).assembled.items
        paths = [i.candidate.path for i in items]
        marked = [i for i, p in enumerate(paths) if p in ("gen/api_client.ts", "third/tiny_polygon_area.ts")]
        source = [i for i, p in enumerate(paths) if p not in ("gen/api_client.ts", "third/tiny_polygon_area.ts")]
        assert marked and source and max(source) < min(marked), paths
        assert "gen/handwritten.ts" in paths  # ``-linguist-generated``: its own source again


def test_an_index_without_copies_or_marks_leaves_the_candidates_alone(indexed_sample: Path) -> None:
    with Index.open(indexed_sample, mode="read", refresh="off") as idx, idx.reading() as store:
        cands = [Candidate(fragment="f", entity="e", name="n", kind="Function", lod="micro", text="t",
                           path="pkg/mod.py", start_line=1, end_line=2, score=1.0, strategy="s", reason="")]
        assert collapse_copies(cands, store) is cands


def test_search_hits_give_way_to_the_originals_too(index: Index) -> None:
    for task in TASKS:
        result = index.search(task, mode="keyword", k=10)
        assert result.hits and not any(h.path.startswith("deno/") for h in result.hits)
        assert all(h.keyword > 0 for h in result.hits)  # a hit standing for a copy's keeps its signal
    raw = index.searcher.search("normalize a vector to unit length", k=10)
    assert any(h.path.startswith("deno/") for h in raw.hits)  # what the Searcher alone gives
