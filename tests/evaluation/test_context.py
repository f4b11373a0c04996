"""Needed-context evaluation: exact metrics on constructed contexts, the bm25-dedup packing, the fixture's
gold against its files, and ``acms eval --json`` end to end."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from acms.api import Index
from acms.cli.main import cli
from acms.evaluation.context import (BASELINE, METRICS, Chunks, ContextCase, Files, Range, Site, baseline_ranges,
                                     is_context_fixture, load_context_cases, score)
from acms.tokens import count

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PROJECT = FIXTURES / "copies_project"
GOLD = FIXTURES / "copies_project.context.jsonl"


def _r(path: str, start: int, end: int, text: str = "x", shown: set[int] | None = None) -> Range:
    return Range(path, start, end, text, frozenset(range(start, end + 1)) if shown is None else frozenset(shown))


CASE = ContextCase(
    "c", "q",
    edit_sites=(Site("a.py", "f", 10, 20, 10), Site("b.py", "g", 1, 5, 1)),
    deps=(Site("c.py", "h", 30, 40, 31), Site("c.py", "k", 50, 60, 50), Site("d.py", "m", 5, 9, 5)),
    callees=(Site("c.py", "h", 30, 40, 31), Site("e.py", "n", 100, 120, 101)),
)


def test_metrics_on_a_known_context() -> None:
    ranges = [
        _r("a.py", 18, 25),  # overlaps edit site f
        _r("c.py", 32, 32, shown={32}),  # the header window of h is 30..32 (recall), its def line 31 not shown
        _r("e.py", 103, 110),  # after n's header 101..103: overlaps its last header line
        _r("c.py", 45, 49),  # ends just before k
    ]
    got = score(CASE, ranges, budget=100)
    assert got["edit_recall"] == 0.5
    assert got["dep_recall"] == pytest.approx(1 / 3)
    assert got["dep_shown"] == 0.0
    assert got["callee_recall"] == 1.0
    assert got["callee_shown"] == 0.0  # 101 is not in 103..110
    assert got["complete"] == 0.0  # b.py's site is missing
    assert got["tokens"] == 4 * count("x")
    assert got["budget_used"] == pytest.approx(4 * count("x") / 100)
    whole = [_r("a.py", 1, 30), _r("b.py", 1, 1), _r("c.py", 30, 31), _r("c.py", 50, 50)]
    got = score(CASE, whole, budget=100)
    assert got["edit_recall"] == 1.0 and got["complete"] == 1.0  # 2 of 3 deps: at least half
    assert got["dep_shown"] == pytest.approx(2 / 3)


def test_a_task_without_gold_of_a_kind_is_left_out_of_that_average() -> None:
    got = score(ContextCase("c", "q", (), (Site("a.py", "f", 1, 2, 1),), ()), [], budget=10)
    assert got["edit_recall"] is None and got["complete"] is None and got["callee_recall"] is None
    assert got["dep_recall"] == 0.0 and got["tokens"] == 0.0


def test_an_outline_shows_only_the_lines_its_text_reproduces(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("class A:\n    x = 1\n\n    def f(self):\n        return 2\n")
    files = Files(tmp_path)
    assert files.shown("m.py", 1, 5, "class A:\n    def f(self):  # its doc line", verbatim=False) == {1, 4}
    assert files.shown("m.py", 1, 5, "class A:\n    def f(self)", verbatim=False) == {1}  # not the whole line
    assert files.shown("m.py", 1, 5, "", verbatim=True) == {1, 2, 3, 4, 5}


def test_the_focus_of_each_mode() -> None:
    case = load_context_cases(GOLD)[0]
    assert case.focus_for("task") == ()
    assert case.focus_for("focus") == ("src/geometry/polygon.ts::Polygon.area",)


def test_the_fixture_gold_points_at_its_definitions() -> None:
    """Every gold line of the fixture is the line that defines the named symbol, so the fixture cannot
    drift from its files unnoticed."""
    cases = load_context_cases(GOLD)
    assert is_context_fixture(GOLD) and not is_context_fixture(FIXTURES.parent.parent / "eval" / "acms-self.jsonl")
    assert any(c.deps for c in cases) and any(c.callees for c in cases) and any(not c.edit_sites for c in cases)
    for case in cases:
        for site in case.edit_sites + case.deps + case.callees:
            lines = (PROJECT / site.file).read_text().splitlines()
            short = site.name.rsplit(".", 1)[-1]
            assert re.search(rf"\b{re.escape(short)}\b", lines[site.def_line - 1]), (case.id, site)
            assert site.start <= site.def_line <= site.end <= len(lines)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("context") / "copies_project"
    shutil.copytree(PROJECT, root)
    with Index.open(root, embed_on_index=False, record_use=False) as idx:
        idx.index()
    yield root


@pytest.mark.parametrize("budget", [120, 400])
def test_bm25_dedup_pays_once_for_a_line_and_keeps_the_budget(project: Path, budget: int) -> None:
    with Index.open(project, mode="read", refresh="off") as idx:
        files = Files(idx.root)
        chunks = Chunks(files, idx.searcher.caches.ranking().files)
        assert chunks.chunks and all(not p.endswith((".md", ".json")) for p, _, _ in chunks.chunks)
        assert all(end - start + 1 <= 40 for _, start, end in chunks.chunks)
        for case in load_context_cases(GOLD):
            for mode in ("task", "focus"):
                ranges = baseline_ranges(chunks, files, case, budget, mode)
                assert sum(count(r.text) for r in ranges) <= budget
                lines = [(r.path, n) for r in ranges for n in range(r.start, r.end + 1)]
                assert len(lines) == len(set(lines))  # no line twice
                assert all(not r.path.endswith((".md", ".json")) for r in ranges)
                if mode == "focus" and case.edit_sites:
                    site = case.edit_sites[0]
                    assert (ranges[0].path, ranges[0].start) == (site.file, site.start)


def test_acms_eval_json_reports_both_modes_beside_the_baseline(project: Path) -> None:
    result = CliRunner().invoke(cli, ["eval", str(GOLD), "--json", "--budget", "400", "--project", str(project),
                                      "--strategy", "auto"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["kind"] == "context" and data["cases"] == 5 and data["budget"] == 400
    assert data["gold"] == {"cases": 5, "with_edit_sites": 4, "edit_sites": 4, "with_deps": 3, "deps": 4,
                            "with_callees": 4, "callees": 8}
    for table in (data["strategies"]["auto"], data["baseline"][BASELINE]):
        assert set(table) == {"task", "focus"}
        for metrics in table.values():
            assert set(METRICS) <= set(metrics)
            assert all(0.0 <= metrics[m] <= 1.0 for m in METRICS if m != "tokens")
            assert 0 < metrics["tokens"] <= 400
    # the acms context holds the edit sites the task names, which the test fixture makes easy
    assert data["strategies"]["auto"]["task"]["edit_recall"] == 1.0
    table = CliRunner().invoke(cli, ["eval", str(GOLD), "--budget", "400", "--project", str(project),
                                     "--strategy", "auto", "--mode", "task"])
    assert table.exit_code == 0, table.output
    assert "bm25-dedup (baseline)" in table.output and "callee_recall" in table.output
    assert " focus " not in table.output


def test_a_bad_context_fixture_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "q", "edit_sites": [{"file": "a.py"}]}\n')
    result = CliRunner().invoke(cli, ["eval", str(bad), "--project", str(tmp_path)])
    assert result.exit_code != 0 and "bad.jsonl:1" in result.output
