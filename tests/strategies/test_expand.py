"""The default pipeline's walk over the sample project's real index: anchors from a task's stack trace,
what the seeds use as signatures, the level of detail by depth, the budget filled, and the phase's data
checked like the rest of a strategy."""

from __future__ import annotations

import pytest

from acms.errors import ConfigError
from acms.service.assembly import assemble
from acms.strategies.anchors import Frame, frames, literal_part, messages
from acms.strategies.descriptor import parse_descriptor
from acms.strategies.expand import ExpandOptions, identifiers
from acms.tokens import count

from .test_assembly import project, request, session  # noqa: F401  (module fixtures: one index)

TRACE = """Parsing fails on a header without a colon.

Traceback (most recent call last):
  File "/srv/app/main.py", line 3, in <module>
    run()
  File "/srv/app/.venv/lib/python3.11/site-packages/pkg/mod.py", line 27, in parse_all
    return [self.parse_header(line) for line in lines if line and path]
  File "/srv/app/.venv/lib/python3.11/site-packages/pkg/mod.py", line 22, in parse_header
    name, _, value = line.partition(":")
ValueError: not enough values to unpack (expected 3, got 1)
"""


def test_frames_name_indexed_files_most_recent_first() -> None:
    indexed = ["pkg/mod.py", "pkg/util.py", "docs/guide.md"]
    assert frames(TRACE, indexed) == [Frame("pkg/mod.py", 22), Frame("pkg/mod.py", 27)]
    js = "TypeError: x is undefined\n    at parse (src/lib/parse.ts:12:5)\n    at main (node_modules/y/index.js:3:1)"
    assert frames(js, ["src/lib/parse.ts", "src/main.ts"]) == [Frame("src/lib/parse.ts", 12)]
    assert frames("see pkg/mod.py:22 and util.py:7", ["pkg/mod.py", "a/util.py", "b/util.py"]) == [
        Frame("pkg/mod.py", 22)]  # util.py names two indexed files: no anchor


def test_error_messages_and_their_verbatim_part() -> None:
    assert messages(TRACE) == ["not enough values to unpack (expected 3, got 1)"]
    assert literal_part("not enough values to unpack (expected 3, got 1)") == "not enough values to unpack"
    assert literal_part("invalid literal for int() with base 10: 'x'") == "invalid literal for int"
    assert literal_part("'x' is bad") == ""  # too short before its first variable part to be telling


def test_identifiers_tell_self_from_bare_names() -> None:
    bare, own = identifiers("def f(self):\n    # helper() in a comment\n    return normalize(self.strict) + x.url\n")
    assert {"normalize", "url", "f"} <= bare and "helper" not in bare
    assert own == {"strict"}


def test_a_trace_anchors_the_walk(session) -> None:  # noqa: F811
    searcher, reg = session
    result = assemble(request(TRACE, budget=2000), searcher, reg)
    items = result.assembled.items
    first = [i.candidate for i in items[:2]]
    assert [c.name for c in first] == ["pkg.mod.Parser.parse_header", "pkg.mod.Parser.parse_all"]
    assert all(c.lod == "micro" and "trace" in c.reason for c in first)


def test_depth_sets_the_level_of_detail_and_the_budget_fills(session) -> None:  # noqa: F811
    searcher, reg = session
    result = assemble(request("parse header lines", budget=600, focus=["pkg/mod.py::Parser.parse_header"]),
                      searcher, reg)
    items = result.assembled.items
    assert items[0].candidate.name == "pkg.mod.Parser.parse_header" and items[0].candidate.lod == "micro"
    reached = {i.candidate.name: i for i in items if i.candidate.lod == "macro"}
    normalize = reached["pkg.util.normalize"].candidate  # the focus calls it: a signature, not a body
    assert normalize.text.startswith("def normalize(text: str) -> str:") and "Lower-case" in normalize.text
    assert (normalize.start_line, normalize.end_line) == (6, 7)  # the lines it shows, not the body's
    assert count(result.assembled.rendered) <= 600
    assert result.assembled.used_tokens >= 0.6 * 600 or not result.assembled.dropped


def test_expand_options_are_checked(tmp_path) -> None:
    with pytest.raises(ConfigError, match="unknown expand option.*breath"):
        ExpandOptions.parse("mine", {"breath": 2})
    with pytest.raises(ConfigError, match="bodies \\+ signatures <= 1"):
        ExpandOptions.parse("mine", {"bodies": 0.8, "signatures": 0.5})
    desc = parse_descriptor('name = "mine"\nquality = 0.5\n[[phase]]\nengine = "rank"\nquery = "r.rq"\n'
                            '[[phase]]\nengine = "expand"\ndepth = 1\n[phase.edges_out]\ncalls = 0.5\n',
                            tmp_path, builtin=False)
    opts = ExpandOptions.parse(desc.name, desc.phases[1].options)
    assert opts.depth == 1 and opts.edges_out == {"calls": 0.5}


def test_one_hop_runs_by_hand_from_the_rq_file(session) -> None:  # noqa: F811
    """The guide's example: expand-out.rq with its inputs typed as ``--bind`` types them."""
    from acms import resources
    from acms.sparql.bind import term_from_text

    searcher, _ = session
    text = (resources.asset("queries", "strategies") / "arce" / "expand-out.rq").read_text(encoding="utf-8")
    node = next(r["entity"] for r in searcher.store.select(
        "SELECT ?entity WHERE { GRAPH ?g { ?entity uko:qualifiedName 'pkg.mod.Parser.parse_header' } }"))
    raw = {"nodeScore": "1", "edge": "<https://w3id.org/acms/uko#calls>", "weight": "1", "decay": "0.8",
           "most": "150"}
    rows = searcher.store.select(text, {"node": node, **{k: term_from_text(k, v) for k, v in raw.items()}})
    scores = {e.rsplit("#", 1)[-1]: float(r["score"].value) for r in rows for e in r["entities"].value.split()}
    assert scores == {"pkg.util.normalize": pytest.approx(0.8)}
