"""The evaluation harness: exact metrics on a constructed ranking, and an end-to-end run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from acms.assembly.model import Candidate, Packed
from acms.cli.main import cli
from acms.config import Settings
from acms.evaluation.harness import (BASELINE, BASELINE_FILES, RATIO_KEYS, Case, Evaluation, StrategyScore,
                                     baseline_items, is_path, overlap_matcher, score_case, symbol_spans, units)
from acms.retrieval.search import Searcher
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore
from acms.tokens import count
from tests.conftest import run_index


def _item(name: str, path: str = "x.py", text: str = "word " * 10) -> Packed:
    c = Candidate(fragment=name, entity=name, name=name, kind="Function", lod="micro", text=text, path=path,
                  start_line=1, end_line=1, score=1.0, strategy="s", reason="")
    return Packed(c, text, 1, False, 10)


def test_metrics_on_a_known_ranking() -> None:
    s = StrategyScore("s")
    items = [_item("a.noise"), _item("pkg.good"), _item("b.noise"), _item("other", path="docs/gold.md")]
    score_case(items, Case("q", ("good", "docs/gold.md")), used_tokens=40, s=s)
    summary = s.summary()
    assert summary["recall@1"] == 0.0 and summary["recall@5"] == 1.0
    assert summary["mrr"] == 0.5 and summary["p@5"] == 0.4
    assert summary["token_efficiency"] == pytest.approx(2 * count("word " * 10) / 40)
    ideal = 1 + 1 / 1.584962500721156
    assert summary["ndcg@10"] == pytest.approx((1 / 1.584962500721156 + 1 / 2.321928094887362) / ideal, abs=1e-4)


def test_eval_command_end_to_end(indexed_sample: Path, tmp_path: Path) -> None:
    fixtures = tmp_path / "cases.jsonl"
    fixtures.write_text(
        json.dumps({"query": "split a header line into name and value", "gold": ["pkg.mod.Parser.parse_header"]}) + "\n"
        + json.dumps({"query": "lower-case and strip", "gold": ["pkg/util.py::normalize"]}) + "\n")
    out = CliRunner().invoke(cli, ["eval", str(fixtures), "-C", str(indexed_sample), "--strategy", "simple-keyword",
                                   "--strategy", "auto", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["cases"] == 2
    assert data["strategies"]["simple-keyword"]["recall@5"] == 1.0
    assert set(data["strategies"]) == {"simple-keyword", "auto"}
    # every run also scores the bm25-windows baseline on the same index, and each strategy's ratio to it
    assert set(data) == {"cases", "budget", "strategies", "baseline", "ratio"}
    assert set(data["baseline"]) == {"bm25-windows"}
    base = data["baseline"]["bm25-windows"]
    assert set(RATIO_KEYS) <= set(base) and "ndcg@10" in base
    # the baseline returns line ranges named after their files, so it is scored by line overlap: the name
    # gold pkg.mod.Parser.parse_header (lines 20-23) and the symbol gold pkg/util.py::normalize (lines 6-8)
    # each lie in the first window the baseline returns
    assert base["recall@10"] == 1.0 and base["mrr"] == 1.0
    assert base["overlap_mrr"] == 1.0 and base["overlap_recall@1"] == 1.0
    assert set(data["ratio"]) == {"simple-keyword", "auto"}
    for name, ratios in data["ratio"].items():
        row = data["strategies"][name]
        assert ratios == {k: (round(row[k] / base[k], 3) if base[k] else None) for k in RATIO_KEYS}
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json}\n")
    out = CliRunner().invoke(cli, ["eval", str(bad), "-C", str(indexed_sample)])
    assert out.exit_code == 2 and "bad.jsonl:1" in out.stderr


def test_eval_json_ratio_to_the_baseline_on_path_gold(indexed_sample: Path, tmp_path: Path) -> None:
    """With file gold the baseline scores too, and ``ratio`` is each strategy's figure over the baseline's."""
    fixtures = tmp_path / "cases.jsonl"
    fixtures.write_text(json.dumps({"query": "lower-case and strip", "gold": ["pkg/util.py"]}) + "\n"
                        + json.dumps({"query": "split a header line into name and value", "gold": ["pkg/mod.py"]}) + "\n")
    out = CliRunner().invoke(cli, ["eval", str(fixtures), "-C", str(indexed_sample), "--strategy", "simple-keyword",
                                   "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    base = data["baseline"][BASELINE]
    assert base["recall@10"] == 1.0 and base["mrr"] > 0
    assert "overlap_mrr" not in base  # no symbol gold
    row = data["strategies"]["simple-keyword"]
    assert data["ratio"] == {"simple-keyword": {k: (round(row[k] / base[k], 3) if base[k] else None)
                                                for k in RATIO_KEYS}}
    assert data["ratio"]["simple-keyword"]["recall@10"] == round(row["recall@10"], 3)  # baseline recall@10 is 1
    text = CliRunner().invoke(cli, ["eval", str(fixtures), "-C", str(indexed_sample), "--strategy", "simple-keyword"])
    assert text.exit_code == 0, text.output
    assert f"{BASELINE} (baseline)" in text.stdout and f"ratio to {BASELINE}" in text.stdout


# -- ranks over distinct files and entities --------------------------------------------------------

def _frag(entity: str, path: str, start: int = 1, end: int = 10, name: str | None = None,
          shown_end: int | None = None) -> Packed:
    """A packed fragment of ``entity`` in ``path`` (lines start-end; ``shown_end`` when truncated)."""
    c = Candidate(fragment=f"{entity}#{start}", entity=entity, name=name or entity, kind="Function", lod="micro",
                  text="word " * 10, path=path, start_line=start, end_line=end, score=1.0, strategy="s", reason="")
    return Packed(c, c.text, end if shown_end is None else shown_end, shown_end is not None, 10)


def _scored(items: list[Packed], gold: tuple[str, ...], spans: dict[str, tuple[str, int, int]] | None = None
            ) -> dict[str, float]:
    """The summary of one scored case."""
    s = StrategyScore("s")
    score_case(items, Case("q", gold), used_tokens=100, s=s, spans=spans)
    return s.summary()


def test_units_are_distinct_files_for_path_gold_and_distinct_entities_otherwise() -> None:
    """Path gold groups every fragment of a file into one unit (first appearance order); name gold by entity."""
    a1, a2, b, a3 = _frag("e1", "a.py"), _frag("e2", "a.py"), _frag("e3", "b.py"), _frag("e1", "a.py", 20, 30)
    items = [a1, a2, b, a3]
    assert units(items, Case("q", ("b.py", "docs/x.md"))) == [[a1, a2, a3], [b]]
    assert units(items, Case("q", ("good",))) == [[a1, a3], [a2], [b]]
    assert units(items, Case("q", ("b.py", "good"))) == [[a1, a3], [a2], [b]]  # mixed gold: entities
    assert units([], Case("q", ("b.py",))) == []


def test_a_file_shown_twice_does_not_push_the_next_file_down() -> None:
    """Two fragments of one wrong file, then the gold file: the gold is file #2 (MRR 1/2), not item #3 (1/3)."""
    items = [_frag("n1", "pkg/noise.py"), _frag("n2", "pkg/noise.py", 20, 30), _frag("g", "pkg/gold.py")]
    summary = _scored(items, ("pkg/gold.py",))
    assert summary["mrr"] == 0.5
    assert summary["recall@1"] == 0.0 and summary["recall@5"] == 1.0
    assert summary["ndcg@10"] == pytest.approx(1 / math.log2(3), abs=1e-4)
    assert summary["p@5"] == 0.2


def test_ndcg_is_never_above_one_when_a_gold_file_is_shown_many_times() -> None:
    """Each gold counts once: six fragments of the one gold file give nDCG 1 (not a sum over six hits)."""
    items = [_frag(f"g{i}", "pkg/gold.py", 10 * i + 1, 10 * i + 5) for i in range(6)]
    summary = _scored(items, ("pkg/gold.py",))
    assert summary["ndcg@10"] == 1.0 and summary["mrr"] == 1.0 and summary["recall@1"] == 1.0
    assert summary["p@5"] == 0.2  # one relevant unit among the (at most) five ranked
    # two gold files, the first shown four times after a wrong one: units noise, gold, other gold
    items = [_frag("n", "x.py"), *(_frag(f"g{i}", "a/gold.py", i, i) for i in range(4)), _frag("o", "b/gold.py")]
    summary = _scored(items, ("a/gold.py", "b/gold.py"))
    ideal = 1 + 1 / math.log2(3)
    assert summary["ndcg@10"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(4)) / ideal, abs=1e-4)
    assert summary["ndcg@10"] <= 1.0 and summary["recall@5"] == 1.0
    # name gold: two entities of that name (in two modules) are two units, but the gold counts once
    items = [_frag("urn:a", "a.py", name="a.parse"), _frag("urn:b", "b.py", name="b.parse")]
    summary = _scored(items, ("parse",))
    assert summary["ndcg@10"] == 1.0 and summary["p@5"] == 0.2


def test_symbol_gold_ranks_over_distinct_entities() -> None:
    """``path::Qualified.name`` gold: the class shown in two fragments is one unit, so the method is #2; a
    same-named method in another file does not count."""
    items = [_frag("urn:e:Other", "pkg/other.py", name="other.Parser.parse_header"),
             _frag("urn:e:Parser", "pkg/mod.py", 7, 12, name="pkg.mod.Parser"),
             _frag("urn:e:Parser", "pkg/mod.py", 13, 19, name="pkg.mod.Parser"),
             _frag("urn:e:parse_header", "pkg/mod.py", 20, 23, name="pkg.mod.Parser.parse_header")]
    summary = _scored(items, ("pkg/mod.py::Parser.parse_header",))
    assert summary["mrr"] == pytest.approx(1 / 3, abs=1e-4)  # summaries round to 4 places
    assert summary["recall@1"] == 0.0 and summary["recall@5"] == 1.0
    assert "overlap_mrr" not in summary  # no spans given: no line-overlap figures


def test_dotted_name_gold_ranks_over_distinct_entities() -> None:
    """Gold ``pkg.mod.Parser.parse_header`` names an entity: the class before it in the same file is rank 1."""
    items = [_frag("urn:e:Parser", "pkg/mod.py", 7, 12, name="pkg.mod.Parser"),
             _frag("urn:e:parse_header", "pkg/mod.py", 20, 23, name="pkg.mod.Parser.parse_header")]
    assert _scored(items, ("pkg.mod.Parser.parse_header",))["mrr"] == 0.5


def test_line_overlap_rule_for_symbol_gold() -> None:
    """With ``spans``, an item counts for a symbol when it is in the symbol's file and shares a line with it,
    judged on the lines actually shown: another file, an adjacent range, a truncation before it do not count."""
    gold = "pkg/mod.py::Parser.parse_header"
    spans = {gold: ("pkg/mod.py", 20, 23)}
    items = [_frag("pkg/util.py", "pkg/util.py", 1, 40),  # right lines, wrong file
             _frag("pkg/mod.py", "pkg/mod.py", 1, 19),  # the lines just before
             _frag("pkg/mod.py", "pkg/mod.py", 1, 40, shown_end=19),  # would overlap, but truncated at 19
             _frag("pkg/mod.py", "pkg/mod.py", 23, 62)]  # shares line 23
    summary = _scored(items, (gold,), spans)
    assert summary["overlap_mrr"] == 0.25
    assert summary["overlap_recall@1"] == 0.0 and summary["overlap_recall@5"] == 1.0
    assert summary["mrr"] == 0.0  # by name nothing matches: windows are named after their file
    assert _scored(items, (gold,), {})["overlap_mrr"] == 0.0  # a symbol not found in the index
    assert "overlap_mrr" not in _scored(items, ("pkg/mod.py",), spans)  # path gold: no overlap figures


def test_overlap_recall_counts_each_symbol() -> None:
    """Two symbol gold entries, one overlapped at rank 1: overlap recall 1/2, overlap MRR 1."""
    spans = {"a.py::f": ("a.py", 1, 5), "a.py::g": ("a.py", 50, 60)}
    summary = _scored([_frag("a.py", "a.py", 1, 40)], ("a.py::f", "a.py::g"), spans)
    assert summary["overlap_recall@1"] == 0.5 and summary["overlap_mrr"] == 1.0


@pytest.mark.parametrize(("gold", "path"), [
    ("pkg/util.py", True), ("setup.py", True), ("README.md", True), ("docs/notes", True),
    ("pkg.mod.Parser.parse_header", False), ("util.normalize", False), ("normalize", False),
    ("pkg/util.py::normalize", False),
])
def test_is_path_tells_files_from_qualified_names(gold: str, path: bool) -> None:
    """A folder or a known file extension makes a path; a dotted qualified name is not one."""
    assert is_path(gold) is path


@pytest.mark.parametrize("gold", ["requirements.txt", "setup.cfg", "tox.ini", "app.rb"])
def test_a_top_level_file_with_an_unlisted_extension_is_a_path(gold: str) -> None:
    """Gold naming a file of the index at the project root is a path whatever its extension, so the
    baseline can match it (the evaluation passes the index's files)."""
    files = {gold, "pkg/mod.py"}
    assert is_path(gold, files)
    assert overlap_matcher({}, files)(_frag(gold, gold, 1, 40), gold)


def test_overlap_matcher_matches_paths_by_path_and_names_by_line_overlap() -> None:
    """The baseline's rule: path gold by path, name and ``path::name`` gold by sharing a line with their span."""
    hit = overlap_matcher({"pkg.mod.Parser.parse_header": ("pkg/mod.py", 20, 23),
                           "pkg/util.py::normalize": ("pkg/util.py", 6, 8)})
    window = _frag("pkg/mod.py", "pkg/mod.py", 1, 31)
    assert hit(window, "pkg/mod.py") and not hit(window, "pkg/util.py")
    assert hit(window, "pkg.mod.Parser.parse_header")
    assert not hit(_frag("pkg/mod.py", "pkg/mod.py", 24, 40), "pkg.mod.Parser.parse_header")  # just after it
    assert not hit(_frag("pkg/mod.py", "pkg/mod.py", 1, 31, shown_end=19), "pkg.mod.Parser.parse_header")
    assert hit(_frag("pkg/util.py", "pkg/util.py", 8, 12), "pkg/util.py::normalize")
    assert not hit(window, "pkg.mod.unknown")  # a name without a span never matches
    # used as score_case's rule, a window counts as the named entity it contains
    s = StrategyScore("base")
    score_case([_frag("pkg/util.py", "pkg/util.py", 1, 12), window], Case("q", ("pkg.mod.Parser.parse_header",)),
               0, s, match=hit)
    assert s.summary()["mrr"] == 0.5


def test_symbol_spans_resolves_symbols_and_names(indexed_sample: Path) -> None:
    """``path::Qualified.name`` by its file; a bare or dotted name by the shortest qualified name ending with it;
    paths and unknown names are left out."""
    store, searcher = _searcher(indexed_sample)
    try:
        gold = ("pkg/util.py::normalize", "pkg.mod.Parser.parse_header", "Parser.parse_header", "describe",
                "pkg/mod.py::Parser", "pkg/mod.py", "no_such_function")
        spans = symbol_spans(searcher, [Case("q", gold)])
    finally:
        store.close()
    assert spans == {"pkg/util.py::normalize": ("pkg/util.py", 6, 8),
                     "pkg.mod.Parser.parse_header": ("pkg/mod.py", 20, 23),
                     "Parser.parse_header": ("pkg/mod.py", 20, 23),
                     "describe": ("pkg/mod.py", 10, 11),
                     "pkg/mod.py::Parser": ("pkg/mod.py", 14, 27)}


# -- the baseline and the ratio --------------------------------------------------------------------

def test_ratio_is_each_strategy_over_the_baseline() -> None:
    """ratio = strategy / baseline per RATIO_KEYS, rounded to 3 places; None where the baseline is 0."""
    base = {"recall@1": 0.25, "recall@5": 0.0, "recall@10": 0.6, "mrr": 0.3, "ndcg@10": 0.5}
    ev = Evaluation({"arce": {"recall@1": 0.5, "recall@5": 0.8, "recall@10": 0.9, "mrr": 0.4, "ndcg@10": 0.6},
                     "simple": {"recall@1": 0.0, "recall@5": 0.0, "recall@10": 0.6, "mrr": 0.1, "ndcg@10": 0.1}},
                    base)
    assert ev.ratio() == {"arce": {"recall@1": 2.0, "recall@5": None, "recall@10": 1.5, "mrr": 1.333},
                          "simple": {"recall@1": 0.0, "recall@5": None, "recall@10": 1.0, "mrr": 0.333}}
    assert set(RATIO_KEYS) == {"recall@1", "recall@5", "recall@10", "mrr"}
    out = ev.as_json()
    assert out["baseline"] == {BASELINE: base} and BASELINE == "bm25-windows"
    assert out["ratio"] == ev.ratio() and out["strategies"] == ev.strategies


def _searcher(root: Path) -> tuple[OxigraphStore, Searcher]:
    """A searcher on an indexed project (close the store after use)."""
    layout = IndexLayout(root / ".acms")
    store = OxigraphStore(layout.graph)
    return store, Searcher(store, layout, Settings())


def test_baseline_items_are_each_files_best_window(indexed_sample: Path) -> None:
    """The baseline answers with distinct files, best window first, each with that window's lines and BM25."""
    store, searcher = _searcher(indexed_sample)
    try:
        index = searcher.caches.ranking()
        items = baseline_items(searcher, "lower-case and strip")
        assert [i.candidate.path for i in items][0] == "pkg/util.py"
        scores = index.windows.scores("lower-case and strip")
        for item in items:
            c = item.candidate
            assert c.strategy == BASELINE and c.kind == "Window" and c.entity == c.name == c.path
            f = index.files.index(c.path)
            best = max((w for w in range(len(scores)) if index.window_file[w] == f), key=lambda w: scores[w])
            assert [c.start_line, c.end_line] == index.window_lines[best].tolist() and item.end_line == c.end_line
            assert c.score == pytest.approx(float(scores[best]))
        assert len({i.candidate.path for i in items}) == len(items)
        assert [i.candidate.score for i in items] == sorted((i.candidate.score for i in items), reverse=True)
        assert baseline_items(searcher, "zebra quokka") == []
    finally:
        store.close()


def test_baseline_picks_the_matching_window_of_a_long_file_and_stops_at_ten_files(tmp_path: Path) -> None:
    """A 100-line file matching best at line 90 is shown once, as its window 61-100; twelve matching files give ten."""
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    lines = [f"filler line number {i} about nothing" for i in range(1, 101)]
    lines[9] = "a gadget is mentioned here too"  # a weaker second window (1-40) of the same file
    lines[89] = "the gadget widget and its gadget frame are configured here"
    (root / "notes.txt").write_text("\n".join(lines) + "\n")
    for i in range(11):
        (root / "pkg" / f"w{i}.py").write_text(f'def make_widget_{i}():\n    """Build widget number {i}."""\n    return {i}\n')
    run_index(root)
    store, searcher = _searcher(root)
    try:
        items = baseline_items(searcher, "gadget widget")
        assert len(items) == BASELINE_FILES == 10
        first = items[0]
        assert (first.candidate.path, first.candidate.start_line, first.candidate.end_line) == ("notes.txt", 61, 100)
        assert len({i.candidate.path for i in items}) == 10
        s = StrategyScore(BASELINE)
        score_case(items, Case("gadget widget", ("notes.txt",)), 0, s)
        assert s.summary()["mrr"] == 1.0 and s.summary()["token_efficiency"] == 0.0  # no tokens used
    finally:
        store.close()
