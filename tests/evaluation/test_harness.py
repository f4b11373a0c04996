"""The evaluation harness: exact metrics on a constructed ranking, and an end-to-end run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from acms.assembly.model import Candidate, Packed
from acms.cli.main import cli
from acms.evaluation.harness import Case, StrategyScore, score_case
from acms.tokens import count


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
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json}\n")
    out = CliRunner().invoke(cli, ["eval", str(bad), "-C", str(indexed_sample)])
    assert out.exit_code == 2 and "bad.jsonl:1" in out.stderr
