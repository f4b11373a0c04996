"""Strategies over the sample project's real index: ranking, auto choice, degradation, privacy, deadline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acms.errors import ConfigError
from acms.service.assembly import assemble
from acms.assembly.protocol import parse_request
from acms.cli.main import cli
from acms.config import Settings
from acms.service.indexing import index_project
from acms.retrieval.search import Searcher
from acms.store.layout import IndexLayout
from acms.store.oxigraph import OxigraphStore
from acms.strategies.registry import StrategyRegistry
from acms.tokens import count

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sample_project"
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _index(root: Path, embed: bool = True) -> None:
    layout = IndexLayout(root / ".acms")
    store = OxigraphStore(layout.graph)
    index_project(root, store, Settings(embed_on_index=embed), layout=layout)
    store.close()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("asm") / "sample"
    shutil.copytree(FIXTURE, root)
    (root / "pkg" / "settings.py").write_text(
        f'"""Service settings."""\n\nGITHUB_TOKEN = "{SECRET}"\n\n\ndef connect_database():\n'
        '    """Open the header database."""\n    return "postgres://admin:hunter2secret@db.local/app"\n'
    )
    _index(root)
    return root


@pytest.fixture(scope="module")
def session(project: Path):
    layout = IndexLayout(project / ".acms")
    store = OxigraphStore(layout.graph)
    yield Searcher(store, layout, Settings()), StrategyRegistry.default()
    store.close()


def request(intent: str, budget: int = 1500, **extra: object):
    data = {"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": intent, "request_id": "r1",
            "budgets": {"tokens_max": budget, "time_ms": 5000}, **extra}
    return parse_request(data)


def test_navigator_puts_callers_and_callees_first(session) -> None:
    searcher, reg = session
    result = assemble(request("what uses normalize", strategy="breadth-depth-navigator", focus=["pkg.util.normalize"]),
                      searcher, reg)
    names = [p.candidate.name for p in result.assembled.items]
    assert names[0] == "pkg.util.normalize"
    assert "pkg.mod.Parser.parse_header" in names  # its caller
    assert names.index("pkg.mod.Parser.parse_header") < min(
        (names.index(n) for n in names if n.startswith(("Guide", "docs", "notes"))), default=len(names))


def test_auto_runs_the_default_pipeline_with_and_without_focus(session) -> None:
    """One default pipeline: a focus is where the walk starts, not another strategy. The focus comes
    first as its body, and what it calls follows as a signature."""
    searcher, reg = session
    with_focus = assemble(request("parse", focus=["pkg/mod.py::Parser.parse_header"]), searcher, reg)
    assert with_focus.strategy == "arce" and "focus" in with_focus.reason
    items = with_focus.assembled.items
    assert items[0].candidate.name == "pkg.mod.Parser.parse_header" and items[0].candidate.lod == "micro"
    reached = {i.candidate.name: i.candidate for i in items[1:]}
    assert "pkg.util.normalize" in reached  # parse_header calls it
    without = assemble(request("how are header lines parsed"), searcher, reg)
    assert without.strategy == "arce"


def test_a_focus_may_be_the_end_of_a_qualified_name(session) -> None:
    """``Parser.parse_header``, as an agent writes it, is the focus ``pkg/mod.py::Parser.parse_header``
    names; an end no entity has is said to match nothing."""
    searcher, reg = session
    scoped = assemble(request("parse", focus=["pkg/mod.py::Parser.parse_header"]), searcher, reg)
    ended = assemble(request("parse", focus=["Parser.parse_header"]), searcher, reg)
    assert ended.assembled.rendered == scoped.assembled.rendered
    assert ended.assembled.items[0].candidate.name == "pkg.mod.Parser.parse_header"
    missing = assemble(request("parse", focus=["Base.parse_header"]), searcher, reg)
    assert "matches no entity" in missing.assembled.rendered


def test_arce_dedupes_by_entity(session) -> None:
    searcher, reg = session
    result = assemble(request("parse header lines", strategy="arce", budget=3000), searcher, reg)
    entities = [p.candidate.entity for p in result.assembled.items]
    assert len(entities) == len(set(entities))
    assert {p.candidate.strategy for p in result.assembled.items} == {"arce"}


def test_arce_needs_no_vectors(tmp_path: Path) -> None:
    """arce's ranking is lexical and structural (the LSA vector signal measured no gain on the dev
    set), so an index without vectors answers in full, with no degraded-signal warning."""
    root = tmp_path / "novec"
    shutil.copytree(FIXTURE, root)
    _index(root, embed=False)
    layout = IndexLayout(root / ".acms")
    store = OxigraphStore(layout.graph)
    try:
        result = assemble(request("parse header", strategy="arce"), Searcher(store, layout, Settings()),
                          StrategyRegistry.default(), output="json")
    finally:
        store.close()
    assert result.reply["fragments"]
    assert not any("vector" in w for w in result.reply["metrics"]["warnings"])
    assert result.reply["fragments"][0]["source_ref"].startswith("pkg/")


def test_redact_and_block(session) -> None:
    searcher, reg = session
    redacted = assemble(request("github token database connect settings", privacy_mode="redact",
                                strategy="simple-keyword"), searcher, reg)
    assert "settings.py" in redacted.assembled.rendered
    assert SECRET not in redacted.assembled.rendered and "hunter2secret" not in redacted.assembled.rendered
    assert "[REDACTED:" in redacted.assembled.rendered
    blocked = assemble(request("normalize parse header", privacy_mode="block", strategy="arce"), searcher, reg,
                       output="json")
    for frag in blocked.reply["fragments"]:
        assert frag["text"].startswith("[BLOCKED]") and "return" not in frag["text"]


def test_deadline_cuts_phases(session) -> None:
    searcher, reg = session
    data = request("parse header", strategy="arce")
    late = parse_request({"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": "parse header", "request_id": "r",
                          "budgets": {"tokens_max": 1000, "time_ms": 1}, "strategy": "arce"})
    result = assemble(late, searcher, reg, output="json")
    assert any(w.startswith("cut:") for w in result.reply["metrics"]["warnings"])
    assert data.time_ms == 5000


def test_filters_and_lod(session) -> None:
    searcher, reg = session
    result = assemble(request("parse header normalize", strategy="simple-keyword",
                              filters={"classes": ["uko:CodeElement"], "paths": ["pkg/*"]}, lod=["atomic"]),
                      searcher, reg)
    assert result.assembled.items
    for p in result.assembled.items:
        assert p.candidate.kind in {"Function", "Method", "Class", "Module"} and p.candidate.path.startswith("pkg/")
        assert p.candidate.lod == "atomic" and p.candidate.end_line - p.candidate.start_line <= 6


def test_user_strategy_from_a_folder(session, tmp_path: Path) -> None:
    folder = tmp_path / "mine" / "docs-only"
    folder.mkdir(parents=True)
    (folder / "strategy.toml").write_text(
        'name = "docs-only"\nquality = 0.2\nsummary = "Keyword search restricted to documentation."\n'
        'requires = ["keyword"]\n[[phase]]\nengine = "keyword"\nshare = 1.0\nquery = "docs.rq"\n')
    (folder / "docs.rq").write_text(
        "# summary: keyword candidates that are document sections\n# param: frag candidate\n"
        "SELECT ?frag ?entity ?kind ?name ?lod ?path ?start ?end ?text ?tier ?score WHERE {\n"
        "  GRAPH ?tier { ?frag uko:text ?text ; uko:lod ?lod ; uko:startLine ?start ; uko:endLine ?end ; uko:inFile ?f .\n"
        "    ?entity uko:hasFragment ?frag ; a ?kind ; uko:name ?name . ?f uko:path ?path . FILTER(?kind = uko:DocSection) }\n"
        "  BIND(fn:keywordScore(?frag) AS ?score) FILTER(?score > 0) } ORDER BY DESC(?score)\n")
    searcher, _ = session
    reg = StrategyRegistry.default([tmp_path / "mine"])
    result = assemble(request("install usage parser", strategy="docs-only"), searcher, reg)
    assert result.assembled.items and all(p.candidate.kind == "DocSection" for p in result.assembled.items)
    out = CliRunner().invoke(cli, ["strategies", "--strategies-dir", str(tmp_path / "mine")])
    assert "docs-only" in out.stdout


def test_a_graph_phase_uses_its_own_strategys_queries(session, tmp_path: Path) -> None:
    """A user graph strategy whose folder has its own neighbour queries walks its own edges (here: none,
    so only the focus), and its phase.query describes the nodes; the navigator is not affected."""
    folder = tmp_path / "mine" / "focus-only"
    folder.mkdir(parents=True)
    (folder / "strategy.toml").write_text(
        'name = "focus-only"\nquality = 0.1\nsummary = "The focus entities and nothing around them."\n'
        'requires = ["graph"]\n[[phase]]\nengine = "graph"\nshare = 1.0\nquery = "outlines.rq"\n')
    nav = Path(__file__).resolve().parents[2] / "queries" / "strategies" / "breadth-depth-navigator"
    for direction in ("neighbors-out.rq", "neighbors-in.rq"):
        (folder / direction).write_text((nav / direction).read_text().replace("FILTER(?edge IN", "FILTER(false && ?edge IN"))
    (folder / "outlines.rq").write_text((nav / "node-fragments.rq").read_text())
    searcher, _ = session
    reg = StrategyRegistry.default([tmp_path / "mine"])
    focus = ["pkg.util.normalize"]
    own = assemble(request("what uses normalize", strategy="focus-only", focus=focus), searcher, reg)
    assert {p.candidate.name for p in own.assembled.items} == {"pkg.util.normalize"}
    navigated = assemble(request("what uses normalize", strategy="breadth-depth-navigator", focus=focus), searcher, reg)
    assert "pkg.mod.Parser.parse_header" in {p.candidate.name for p in navigated.assembled.items}
    (folder / "outlines.rq").unlink()  # phase.query names a file the strategy must have
    with pytest.raises(ConfigError, match="query file not found: outlines.rq"):
        assemble(request("what uses normalize", strategy="focus-only", focus=focus), searcher, reg)


def test_a_user_entry_named_like_a_builtin_is_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "mine" / "nav"
    folder.mkdir(parents=True)
    (folder / "strategy.toml").write_text('name = "breadth-depth-navigator"\nquality = 0.5\n[[phase]]\nengine = "graph"\n')
    with pytest.raises(ConfigError, match="has the name of a built-in strategy"):
        StrategyRegistry.default([tmp_path / "mine"])
    out = CliRunner().invoke(cli, ["strategies", "--strategies-dir", str(tmp_path / "mine")])
    assert out.exit_code == 6 and "breadth-depth-navigator" in out.stderr
    (folder / "strategy.toml").write_text('name = "mine"\nquality = 0.5\n[[phase]]\nengine = "telepathy"\n')
    with pytest.raises(ConfigError, match="unknown phase engine.*telepathy.*known: expand, graph, keyword, query, rank, vector"):
        StrategyRegistry.default([tmp_path / "mine"])
    reg = StrategyRegistry.default()
    with pytest.raises(ConfigError, match="phase engine 'graph' is already registered by a built-in one"):
        reg.register_engine("graph", lambda desc, phase, ctx: [])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.one_of(st.integers(1, 80), st.integers(80, 3000)),
       words=st.lists(st.sampled_from(["parse", "header", "normalize", "usage", "Parser", "strict", "zzz", "é"]),
                      min_size=1, max_size=4),
       strategy=st.sampled_from(["simple-keyword", "semantic-embedding", "breadth-depth-navigator", "arce", "auto"]),
       fmt=st.sampled_from(["markdown", "text", "json"]))
def test_budget_is_never_exceeded(session, budget: int, words: list[str], strategy: str, fmt: str) -> None:
    searcher, reg = session
    from acms.errors import BudgetTooSmall

    req = request(" ".join(words), budget=budget, strategy=strategy)
    try:
        result = assemble(req, searcher, reg, output="json" if fmt == "json" else fmt)
    except BudgetTooSmall:
        return
    if fmt == "json":  # the budget covers the fragments' text; the envelope has its own bound
        from acms.assembly.protocol import envelope_bound

        reply = json.loads(result.assembled.rendered)
        used = sum(count(f["text"]) for f in reply["fragments"])
        assert reply["metrics"]["used_tokens"] == used <= budget
        assert reply["metrics"]["reply_tokens"] == count(result.assembled.rendered) <= used + envelope_bound(reply)
    else:
        assert count(result.assembled.rendered) <= budget


def test_render_command_contract(tmp_path: Path) -> None:
    project = tmp_path / "render"  # its own copy: the module's session holds the other store open
    shutil.copytree(FIXTURE, project)
    _index(project)
    runner = CliRunner()
    good = {"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": "parse header",
            "budgets": {"tokens_max": 2000, "time_ms": 2000}, "request_id": "req-1"}
    f = tmp_path / "req.json"
    f.write_text(json.dumps(good))
    res = runner.invoke(cli, ["render", str(f), "-C", str(project)])
    reply = json.loads(res.stdout)
    assert res.exit_code == 0 and reply["request_id"] == "req-1" and reply["fragments"]
    assert set(reply) >= {"fragments", "kv_policy", "metrics"}
    bad = dict(good, budgets={"tokens_max": -5, "time_ms": 10})
    res = runner.invoke(cli, ["render", "-", "-C", str(project)], input=json.dumps(bad))
    env = json.loads(res.stdout)
    assert res.exit_code == 2 and env["error"]["code"] == "INVALID_REQUEST" and "budgets.tokens_max" in env["error"]["message"]
    tiny = dict(good, budgets={"tokens_max": 2, "time_ms": 1000})  # below any one-line reference
    res = runner.invoke(cli, ["render", "-", "-C", str(project)], input=json.dumps(tiny))
    env = json.loads(res.stdout)
    assert env["error"]["code"] == "BUDGET_TOO_SMALL" and env["error"]["retriable"] is True
    empty = tmp_path / "empty"
    empty.mkdir()
    res = runner.invoke(cli, ["render", "-", "-C", str(empty)], input=json.dumps(good))
    assert json.loads(res.stdout)["error"]["code"] == "STORE_MISSING"
