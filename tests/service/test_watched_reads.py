"""While a watcher follows the project, a read checks the indexed files by a stat each instead of walking
the project: an edit is still answered fresh at once (the read refreshes before the watcher does), a
deleted file too, and a new file arrives through the watcher."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from acms import api
from acms.api import Index

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SETTINGS = {"embed_on_index": False, "record_use": False, "watch_debounce_ms": 300}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("watched") / "proj"
    shutil.copytree(FIXTURES / "sample_project", root)
    with Index.open(root, **SETTINGS) as writer:
        writer.index()
    return root


@pytest.fixture
def watched(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "proj"
    shutil.copytree(template, root)  # files with their times: the index's look finds nothing changed
    walks: list[str] = []  # the threads that walked the project
    real = api.check

    def counted(project: Path, *args: object) -> object:
        walks.append(threading.current_thread().name)
        return real(project, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(api, "check", counted)
    with Index.open(root, mode="shared", **SETTINGS) as idx:  # as acms serve and acms mcp hold it
        following = idx.follower(lambda _refreshed: None).start()
        assert following.ready.wait(10)
        yield idx, root, walks
        following.stop()


def test_reads_do_not_walk_the_project_while_nothing_changed(watched) -> None:
    idx, _root, walks = watched
    idx.search("make_parser", "keyword", 3)
    idx.describe("pkg.mod.make_parser")
    assert threading.current_thread().name not in walks  # the watcher's own catch-up looks, in its thread


def test_an_edit_is_answered_fresh_before_the_watcher_refreshes(watched) -> None:
    idx, root, _walks = watched
    path = root / "pkg" / "mod.py"
    path.write_text(path.read_text().replace("def make_parser()", "# a\n# b\ndef make_parser()", 1))
    found = idx.describe("pkg.mod.make_parser")  # at once: the watcher may not have heard of it yet
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.startswith("def make_parser"))
    assert found.location is not None and found.location.startswith(f"pkg/mod.py:{line}-")


def test_a_deleted_file_is_gone_from_the_next_answer(watched) -> None:
    idx, root, _walks = watched
    (root / "pkg" / "mod.py").unlink()
    hits = idx.search("make_parser", "keyword", 5).hits
    assert not any(h.path == "pkg/mod.py" for h in hits)


def test_a_new_file_arrives_through_the_watcher(watched) -> None:
    idx, root, walks = watched
    (root / "pkg" / "added.py").write_text("def brand_new_helper_name():\n    return 1\n")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if any(h.path == "pkg/added.py" for h in idx.search("brand_new_helper_name", "keyword", 3).hits):
            break
        time.sleep(0.2)
    else:
        pytest.fail("the new file never reached the index")
    assert "acms-follower" in walks  # the watcher's refresh looked for it
