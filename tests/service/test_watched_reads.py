"""While a watcher follows the project, a read checks the indexed files by a stat each instead of walking
the project: an edit is still answered fresh at once (the read refreshes before the watcher does), a
deleted file too, and a new file arrives through the watcher."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Collection
from pathlib import Path

import pytest

from acms import api
from acms.api import Index
from acms.results import Refreshed
from acms.service.freshness import Manifest, last_run, look_by_stats

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SETTINGS = {"embed_on_index": False, "record_use": False, "watch_debounce_ms": 300}


class Looks(list[str]):
    """The threads that walked the project; ``stats``: those that looked by a stat of each listed file."""

    def __init__(self) -> None:
        super().__init__()
        self.stats: list[str] = []


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
    walks = Looks()
    real, real_stats = api.check, api.look_by_stats

    def counted(project: Path, *args: object) -> object:
        walks.append(threading.current_thread().name)
        return real(project, *args)  # type: ignore[arg-type]

    def counted_stats(project: Path, *args: object) -> object:
        walks.stats.append(threading.current_thread().name)
        return real_stats(project, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(api, "check", counted)
    monkeypatch.setattr(api, "look_by_stats", counted_stats)
    heard: list[Refreshed] = []  # what the follower reported
    with Index.open(root, mode="shared", **SETTINGS) as idx:  # as acms serve and acms mcp hold it
        following = idx.follower(heard.append).start()
        assert following.ready.wait(10)
        yield idx, root, walks, heard
        following.stop()


def _followers(walks: Looks) -> int:
    """The watcher's looks so far: walks and looks by a stat of each listed file."""
    return walks.count("acms-follower") + walks.stats.count("acms-follower")


def _settle(walks: Looks) -> bool:
    """Wait for the watcher's catch-up look (in its own thread, at the start)."""
    deadline = time.monotonic() + 20
    while "acms-follower" not in walks and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    return "acms-follower" in walks


def test_reads_do_not_walk_the_project_while_nothing_changed(watched) -> None:
    idx, _root, walks, _heard = watched
    idx.search("make_parser", "keyword", 3)
    idx.describe("pkg.mod.make_parser")
    assert threading.current_thread().name not in walks  # the watcher's own catch-up looks, in its thread


def test_an_edit_is_answered_fresh_before_the_watcher_refreshes(watched) -> None:
    """The read refreshes the saved file without a walk: the listing comes from the manifest, which
    keeps what the walk had skipped and whether git listed the files."""
    idx, root, walks, _heard = watched
    before = Manifest.load(idx.layout.cache)
    assert before is not None and before.skipped
    path = root / "pkg" / "mod.py"
    path.write_text(path.read_text().replace("def make_parser()", "# a\n# b\ndef make_parser()", 1))
    found = idx.describe("pkg.mod.make_parser")  # at once: the watcher may not have heard of it yet
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.startswith("def make_parser"))
    assert found.location is not None and found.location.startswith(f"pkg/mod.py:{line}-")
    assert threading.current_thread().name not in walks
    after = Manifest.load(idx.layout.cache)
    assert after is not None and after.run != before.run
    assert (after.skipped, after.used_git, set(after.files)) == (before.skipped, before.used_git, set(before.files))


def test_a_deleted_file_is_gone_from_the_next_answer(watched) -> None:
    idx, root, _walks, _heard = watched
    (root / "pkg" / "mod.py").unlink()
    hits = idx.search("make_parser", "keyword", 5).hits
    assert not any(h.path == "pkg/mod.py" for h in hits)


def test_a_new_file_arrives_through_the_watcher(watched) -> None:
    idx, root, walks, _heard = watched
    (root / "pkg" / "added.py").write_text("def brand_new_helper_name():\n    return 1\n")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if any(h.path == "pkg/added.py" for h in idx.search("brand_new_helper_name", "keyword", 3).hits):
            break
        time.sleep(0.2)
    else:
        pytest.fail("the new file never reached the index")
    assert "acms-follower" in walks  # the watcher's refresh looked for it


def test_the_watcher_does_not_look_again_at_saves_a_read_already_refreshed(watched) -> None:
    """A read refreshed the saved file first: the watcher's report of the same save finds it in the index
    as it is (a stat of the reported file) and neither refreshes nor walks the project again."""
    idx, root, walks, heard = watched
    assert _settle(walks)
    walked, stated, reports = walks.count("acms-follower"), walks.stats.count("acms-follower"), len(heard)
    path = root / "pkg" / "mod.py"
    path.write_text(path.read_text().replace("def make_parser()", "# c\ndef make_parser()", 1))
    found = idx.describe("pkg.mod.make_parser")
    assert found.location is not None and found.location.startswith("pkg/mod.py:")
    time.sleep(1.5)  # the watcher's report (300 ms of quiet) has come and gone
    assert walks.stats.count("acms-follower") > stated and walks.count("acms-follower") == walked
    assert len(heard) == reports and idx.look().paths == []


def test_a_read_whose_refresh_the_watcher_ran_first_looks_again_without_a_walk(watched) -> None:
    """A read found the saved file changed, and while it waited for the writer's lock the watcher's refresh
    took the file in (another graph state): the read looks again by a stat of each indexed file, as its
    first look did, finds nothing left to refresh, and walks nothing."""
    idx, root, walks, _heard = watched
    assert _settle(walks)
    before = _followers(walks)
    path = root / "pkg" / "mod.py"
    path.write_text(path.read_text().replace("def make_parser()", "# e\ndef make_parser()", 1))
    with idx.reading() as store:
        looked = look_by_stats(root, idx.settings, idx.layout.cache, last_run(store))
    assert looked is not None and looked.changed == ["pkg/mod.py"]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # the watcher's refresh lands: a new graph state
        with idx.reading() as store:
            if last_run(store) != looked.run:
                break
        time.sleep(0.1)
    assert _followers(walks) > before
    mine = walks.count(threading.current_thread().name)
    assert idx.refresh(looked=looked) is None
    assert walks.count(threading.current_thread().name) == mine
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.startswith("def make_parser"))
    assert idx.describe("pkg.mod.make_parser").location.startswith(f"pkg/mod.py:{line}-")  # type: ignore[union-attr]


def test_a_refresh_that_finds_nothing_changed_waits_for_no_reader(watched) -> None:
    """Nothing changed: the look is a reader's, so a refresh (a watcher's catch-up, an agent's call) neither
    waits for the readers of the index nor makes them wait."""
    idx, root, walks, _heard = watched
    assert _settle(walks)
    with Index.open(root, mode="shared", **SETTINGS) as other, other.reading():
        assert idx.refresh(wait=0) is None  # the writer's lock, which a reader's share refuses, is not asked for


def test_a_refresh_another_writer_overtook_walks_again_for_new_files(watched, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refresh's own look (a walk: what finds new files) is overtaken by another writer, one that refreshed
    only the edited file it was told of: the refresh walks the project again under the writer's lock, not a
    stat of the indexed files as a read's look would, so the new file is not left out."""
    idx, root, walks, _heard = watched
    assert _settle(walks)
    (root / "pkg" / "overtaken.py").write_text("def brand_new_overtaken_name():\n    return 1\n")
    path = root / "pkg" / "mod.py"
    path.write_text(path.read_text().replace("def make_parser()", "# f\ndef make_parser()", 1))
    real_look = idx.look
    me = threading.current_thread().name

    def overtaken(wait: float | None = None, *, saved: Collection[str] = ()) -> object:
        got = real_look(wait, saved=saved)
        with Index.open(root, mode="shared", **SETTINGS) as other, other.reading() as store:
            edited = look_by_stats(root, other.settings, other.layout.cache, last_run(store))
        assert edited is not None and edited.changed == ["pkg/mod.py"]
        with Index.open(root, mode="shared", **SETTINGS) as other:
            assert other.refresh(looked=edited) is not None  # lands first: a new graph state
        return got

    monkeypatch.setattr(idx, "look", overtaken)
    mine = walks.count(me)
    idx.refresh()
    assert walks.count(me) - mine == 2  # its own look, and the look again after the other writer
    monkeypatch.undo()
    assert any(h.path == "pkg/overtaken.py" for h in idx.search("brand_new_overtaken_name", "keyword", 3).hits)


def test_a_save_no_read_refreshed_is_refreshed_by_the_watcher_without_a_walk(watched) -> None:
    """The watcher's refresh of saved files the last run listed looks by a stat of each listed file: the
    walk (what finds new files and applies the rules) is not needed for them."""
    idx, root, walks, heard = watched
    assert _settle(walks)
    walked, stated = walks.count("acms-follower"), walks.stats.count("acms-follower")
    path = root / "pkg" / "mod.py"
    path.write_text(path.read_text().replace("def make_parser()", "# d\ndef make_parser()", 1))
    deadline = time.monotonic() + 20
    while not any("pkg/mod.py" in r.paths for r in heard) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert any("pkg/mod.py" in r.paths and r.indexed == 1 for r in heard), heard
    assert walks.count("acms-follower") == walked and walks.stats.count("acms-follower") > stated
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if text.startswith("def make_parser"))
    assert idx.describe("pkg.mod.make_parser").location.startswith(f"pkg/mod.py:{line}-")  # type: ignore[union-attr]


def test_the_watcher_walks_for_a_new_path_or_a_rule_file(watched) -> None:
    """A saved path the last run did not list (a new file) or one of the walker's rule files (what the
    walk lists depends on it) is looked for by the walk: the new file is indexed, the newly ignored one
    goes."""
    idx, root, walks, heard = watched
    assert _settle(walks)
    walked = walks.count("acms-follower")
    (root / "pkg" / "fresh_one.py").write_text("def brand_new_walked_name():\n    return 1\n")
    deadline = time.monotonic() + 20
    while not any("pkg/fresh_one.py" in r.paths for r in heard) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert any("pkg/fresh_one.py" in r.paths for r in heard), heard
    assert walks.count("acms-follower") > walked
    walked = walks.count("acms-follower")
    (root / ".gitignore").write_text("pkg/fresh_one.py\n")
    deadline = time.monotonic() + 20
    while (any(h.path == "pkg/fresh_one.py" for h in idx.search("brand_new_walked_name", "keyword", 3).hits)
           and time.monotonic() < deadline):
        time.sleep(0.2)
    assert walks.count("acms-follower") > walked
    assert not any(h.path == "pkg/fresh_one.py" for h in idx.search("brand_new_walked_name", "keyword", 3).hits)


def test_a_saved_file_left_out_for_what_it_holds_is_named_once_with_its_reason(watched) -> None:
    """A new binary file and an indexed file turned binary are named skipped (the second also removed);
    a hidden file is the project's rule, not news; a file that stays binary is not named again."""
    idx, root, walks, heard = watched
    assert _settle(walks)
    (root / "pkg" / "blob.dat").write_bytes(b"\x00\x01" * 64)
    (root / "pkg" / "mod.py").write_bytes(b"\x00 binary now\n")
    (root / "pkg" / ".notes.swp").write_bytes(b"\x00\x02" * 64)

    def named() -> list[str]:
        return sorted(p for r in list(heard) for reason, ps in r.skipped.items() if reason == "binary" for p in ps)

    deadline = time.monotonic() + 20
    while named() != ["pkg/blob.dat", "pkg/mod.py"] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert named() == ["pkg/blob.dat", "pkg/mod.py"], heard
    removal = next(r for r in heard if "pkg/mod.py" in r.paths)
    assert removal.removed == 1 and "pkg/mod.py (binary)" in removal.line()
    assert not any(h.path == "pkg/mod.py" for h in idx.search("make_parser", "keyword", 5).hits)
    def looks() -> int:  # the watcher's looks, a walk or a stat of each listed file
        return walks.count("acms-follower") + walks.stats.count("acms-follower")

    before = looks()
    (root / "pkg" / "blob.dat").write_bytes(b"\x00\x03" * 64)
    deadline = time.monotonic() + 20
    while looks() == before and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)
    assert looks() > before and named() == ["pkg/blob.dat", "pkg/mod.py"], heard


def test_a_look_told_the_saved_files_stats_only_them(template: Path, tmp_path: Path) -> None:
    """The watcher's refresh looks at the files it saw saved, by a stat each: an edit among them is found,
    a file it was not told of is left to the next read's look (which stats every listed file), and a
    path that is no listed file (new, outside, a rule file) means a walk."""
    root = tmp_path / "proj"
    shutil.copytree(template, root)
    with Index.open(root, mode="shared", **SETTINGS) as idx, idx.session.reading() as store:
        run, settings, cache = last_run(store), idx.settings, idx.layout.cache

    def looked(*paths: Path, saved: bool = True) -> object:
        return look_by_stats(root, settings, cache, run, [str(p) for p in paths] if saved else None)

    mod, other = root / "pkg" / "mod.py", root / "pkg" / "__init__.py"
    assert looked(mod).stale is False  # type: ignore[attr-defined]
    (root / ".gitignore").write_text("*.log\n")  # the walker's own rules: a walk decides
    (root / "pkg" / "new.py").write_text("x = 1\n")
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x = 1\n")
    for path in (root / ".gitignore", root / "pkg" / "new.py", outside, root / "pkg" / "gone.py"):
        assert looked(mod, path) is None, path
    mod.write_text(mod.read_text() + "\n# grown\n")
    other.write_text(other.read_text() + "\n# grown too\n")
    assert looked(mod).paths == ["pkg/mod.py"]  # type: ignore[attr-defined]
    assert looked(mod, saved=False).paths == ["pkg/__init__.py", "pkg/mod.py"]  # type: ignore[attr-defined]
    mod.unlink()
    assert looked(mod).removed == ["pkg/mod.py"]  # type: ignore[attr-defined]
