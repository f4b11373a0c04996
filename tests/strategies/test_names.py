"""The walk's name resolution across languages, over a small project the tests index: a name in Python
code resolves among Python definitions, so a vendored JavaScript namesake neither answers for it nor
makes it ambiguous; a name that two Python definitions bear stays unresolved."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from acms.assembly.protocol import parse_request
from acms.retrieval.search import Searcher
from acms.service.assembly import AssemblyResult, assemble
from acms.strategies.expand import _kin
from acms.strategies.registry import StrategyRegistry
from .walks import indexed_searcher

# save() calls store.flush_pending() through an attribute no static call edge follows: only the name
# leads there. The vendored script defines flush_pending and render_rows too; render_rows has a second
# Python definition, so it stays ambiguous whatever the script holds.
CORE = '''"""The store."""


class Store:
    """Rows kept until flushed."""

    def flush_pending(self):
        """Write the rows not yet written."""
        return []


def render_rows(rows):
    """Rows as text."""
    return "\\n".join(rows)
'''
REPORT = '''"""Reports."""


def render_rows(rows, width=80):
    """Rows as text of a width."""
    return "\\n".join(r[:width] for r in rows)
'''
APP = '''"""The app."""


def save(store, rows):
    """Save the rows."""
    store.flush_pending()
    return render_rows(rows)
'''
VENDOR = """function flush_pending(queue) { return queue.splice(0); }
function render_rows(rows) { return rows.join("\\n"); }
"""


@pytest.fixture(scope="module")
def searcher(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Searcher]:
    root = tmp_path_factory.mktemp("names") / "proj"
    for path, text in {"pkg/__init__.py": "", "pkg/core.py": CORE, "pkg/report.py": REPORT, "pkg/app.py": APP,
                       "pkg/static/vendor.js": VENDOR}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    yield from indexed_searcher(root)


def run(searcher: Searcher) -> AssemblyResult:
    return assemble(parse_request({
        "version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": "saving should retry",
        "request_id": "r1", "strategy": "arce", "focus": ["pkg/app.py::save"],
        "budgets": {"tokens_max": 1500, "time_ms": 10000}}), searcher, StrategyRegistry.default())


def test_languages_are_kin_by_family() -> None:
    assert _kin("a/b.py") == "python" and _kin("x.ts") == _kin("y.js") == "javascript"
    assert _kin("docs/guide.md") is None  # prose may name any code


def test_a_python_name_resolves_among_python_definitions(searcher: Searcher) -> None:
    reasons = {p.candidate.name: p.candidate.reason for p in run(searcher).assembled.items}
    assert reasons.get("pkg.core.Store.flush_pending", "").startswith("pkg.app.save names it")
    named = {n for n, why in reasons.items() if "names it" in why}
    assert not any(n.startswith("pkg.static") for n in named)  # the script's namesakes
    assert not any(n.endswith("render_rows") for n in named)  # two Python definitions: ambiguous
