"""bench/refresh.py's parts on a tiny project, so the benchmark cannot rot unseen: the commands it times
return numbers, an edit it writes is a valid one that the next index re-reads, and a server's answer
shows it. The timings themselves come from running the benchmark on the standard library."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"

MODULES = {
    "shapes.py": '''"""Shapes and their areas."""


def area(width: float, height: float) -> float:
    """The area of a rectangle."""
    return width * height


def perimeter(width: float, height: float) -> float:
    total = width + height
    return 2 * total
''',
    "words.py": '''"""Counting words."""


def count_words(text: str) -> int:
    words = text.split()
    return len(words)


class Counter:
    def add(self, text: str) -> None:
        """Count one more text."""
        self.total = getattr(self, "total", 0) + count_words(text)
''',
    "README.md": "# tiny\n\nA project for the refresh benchmark's test.\n",
}


@pytest.fixture
def refresh(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))
    sys.modules.pop("refresh", None)
    import refresh

    return refresh


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    for name, text in MODULES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_an_edit_is_a_new_first_statement_and_stays_valid_python(refresh: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(MODULES["words.py"], encoding="utf-8")
    line = refresh.edit_function(path, "probe_one")
    text = path.read_text(encoding="utf-8")
    ast.parse(text)
    assert text.splitlines()[line - 1].strip().startswith(refresh.needle("probe_one"))
    assert refresh.insertion_point("x = 1\n") is None
    assert refresh.pct([3.0, 1.0, 2.0], 0.5) == 2.0


def test_the_timed_commands_and_a_server_see_an_edit(refresh: ModuleType, project: Path, tmp_path: Path) -> None:
    first = refresh.acms_index(project, timeout=120)
    assert first.wall > 0 and first.peak_mb > 0 and first.cpu >= 0
    assert first.json()["files_indexed"] == 3
    assert refresh.phases(first) and refresh.indexed(first, 3) == "" and refresh.indexed(first, 4)

    probes = refresh.Probes(["shapes.py", "words.py"])
    module, ident = probes.next()
    refresh.edit_function(project / module, ident)
    answer = refresh.assemble_cli(project, refresh.task_for(ident), "auto", timeout=120)
    assert refresh.needle(ident) in answer.out  # the read re-indexed the edit before answering
    assert answer.wall > 0 and answer.peak_mb > 0

    with refresh.watching([refresh.ACMS], project) as watcher:  # section 6's reads through a watcher
        module, ident = probes.next()
        refresh.edit_function(project / module, ident)
        relayed = refresh.assemble_cli(project, refresh.task_for(ident), "auto", timeout=120)
        assert refresh.needle(ident) in relayed.out
        assert refresh.peak_rss_mb(watcher.pid) > 0
    socket = sys.modules[refresh.watching.__module__].answering_at(project)  # the watcher's, gone with it
    assert socket is not None and not socket.exists()

    served = refresh.serve_session(project, probes, 1, False, tmp_path, timeout=60, idle=1)
    agent = refresh.mcp_session(project, probes, 1, True, tmp_path, timeout=60, idle=1)
    for session in (served, agent):  # each: an answer with no change, then one that showed a save
        assert not session.failed, session.failed + session.log
        assert len(session.latencies) == 1 and session.latencies[0] > 0 and session.idle[0] > 0
        assert session.peak_mb > 0 and session.start > 0
