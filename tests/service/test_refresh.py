"""A live refresh: what a look at the files finds, and that refreshing after edits, renames, moves and
deletions leaves the graph a first index of the new files would make, with true line numbers."""

from __future__ import annotations

import os
import random
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from acms.api import Index
from acms.errors import ConfigError, UsageError
from acms.ingest.symbols import SymbolRows
from acms.service.freshness import Manifest, last_run
from acms.sparql import catalog
from acms.temporal import tiers
from acms.vocab import GRAPH_META, TIER_COLD, TIER_HOT

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
_TIME = re.compile(r'"[0-9]{4}-[0-9]{2}-[0-9]{2}T[^"]*"\^\^<http://www.w3.org/2001/XMLSchema#dateTime>')
SETTINGS = {"embed_on_index": False, "record_use": False}


def project(tmp_path: Path, name: str = "proj") -> Path:
    """The sample Python package and the polyglot project side by side, in a folder named ``name``."""
    root = tmp_path / name
    shutil.copytree(FIXTURES / "sample_project", root)
    shutil.copytree(FIXTURES / "polyglot_project", root / "poly")
    return root


def current(idx: Index) -> set[str]:
    """The project's current triples (hot and warm as one: a tier is policy, not content), times and the
    root folder blanked."""
    root = str(idx.root)
    with idx.reading() as store:
        return {_TIME.sub('"T"', f"{q.subject} {q.predicate} {q.object}").replace(root, "ROOT")
                for q in store.quads() if q.graph_name not in (GRAPH_META, TIER_COLD)}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def write_files(root: Path, files: dict[str, str]) -> None:
    """``files`` (path -> text) written under ``root``, folders made as needed."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def fresh_graph(root: Path, tmp_path: Path) -> set[str]:
    """A first index of a copy of ``root`` (same folder name: same IRIs)."""
    copy = tmp_path / "fresh" / root.name
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".acms"))
    with Index.open(copy, **SETTINGS) as idx:
        idx.index()
        return current(idx)


def test_a_look_finds_edits_additions_deletions_and_files_turned_binary(tmp_path: Path) -> None:
    root = project(tmp_path)
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        assert Manifest.load(idx.layout.cache) is not None
        assert not idx.look().stale
        edit(root / "pkg" / "util.py", "Small helpers.", "Small helpers, edited.")
        (root / "pkg" / "new.py").write_text("def fresh():\n    return 1\n")
        (root / "notes.txt").unlink()
        (root / "docs" / "guide.md").write_bytes(b"\x00\x01binary now\x00" * 10)
        looked = idx.look()
        assert looked.changed == ["pkg/util.py"]
        assert looked.added == ["pkg/new.py"]
        assert looked.removed == ["docs/guide.md", "notes.txt"]
        assert looked.hashed <= 3  # only the files whose size or mtime moved were read


def test_a_look_reads_only_what_moved_and_sees_an_edit_that_kept_size_and_mtime(tmp_path: Path) -> None:
    root = project(tmp_path)
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        util = root / "pkg" / "util.py"
        manifest = Manifest.load(idx.layout.cache)
        assert manifest is not None
        # the listing is long past: a file whose size and mtime are as recorded is not read
        manifest.listed_ns = time.time_ns() + 10**10
        manifest.save(idx.layout.cache)
        looked = idx.look()
        assert not looked.stale and looked.hashed == 0
        # same size, same mtime, other bytes: changed within the racy window of the listing, so hashed
        st = util.stat()
        util.write_text(util.read_text().replace("Lower-case", "Upper-case"))
        os.utime(util, ns=(st.st_atime_ns, st.st_mtime_ns))
        manifest.listed_ns = st.st_mtime_ns + 1  # the listing saw this mtime: a later edit could keep it
        manifest.save(idx.layout.cache)
        assert idx.look().changed == ["pkg/util.py"]


def test_files_a_look_had_to_read_are_recorded_and_not_read_again(tmp_path: Path) -> None:
    """Files a run listed within the racy window of their writes (a formatter run indexed at once) and a
    file touched without a change: a look reads them and finds them unchanged, and records them as of its
    listing, as git refreshes its index. A file still racy as of that listing is read again; past the
    window the next look reads none of them, and an edit after that is still found."""
    root = project(tmp_path)
    formatted = sorted((root / "pkg").glob("*.py"))
    with Index.open(root, **SETTINGS) as idx:
        for path in formatted:
            path.write_text(path.read_text() + "# formatted\n")
        idx.index()  # lists them within 2 s of their writes: a later edit could keep size and mtime
        os.utime(root / "notes.txt")  # touched now: its mtime moved, its text did not
        at_once = idx.look()
        assert not at_once.stale and at_once.hashed == len(formatted) + 1
        assert idx.look().hashed >= 1  # the touch is racy as of the look that recorded it: read again
        time.sleep(2.1)  # past every write's racy window
        assert not idx.look().stale
        settled = idx.look()
        assert not settled.stale and settled.hashed == 0
        edit(root / "pkg" / "util.py", "Small helpers.", "Small helpers, edited.")
        looked = idx.look()
        assert looked.changed == ["pkg/util.py"] and looked.hashed == 1


def test_a_manifest_of_another_state_is_not_trusted(tmp_path: Path) -> None:
    root = project(tmp_path)
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        manifest = Manifest.load(idx.layout.cache)
        assert manifest is not None
        util = root / "pkg" / "util.py"
        edit(util, "Small helpers.", "Small helpers!")
        # a manifest claiming the edited file's stat for another run's state: hashing decides
        manifest.files["pkg/util.py"] = (util.stat().st_size, util.stat().st_mtime_ns, "0" * 64)
        manifest.run = "https://example.org/another-run"
        manifest.save(idx.layout.cache)
        looked = idx.look()
        assert looked.changed == ["pkg/util.py"] and looked.hashed > 1


def test_turning_store_secrets_on_makes_every_file_stale(tmp_path: Path) -> None:
    """The graph's hashes say whether texts were scrubbed: a manifest of the other kind is not trusted."""
    root = project(tmp_path)
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
    with Index.open(root, mode="read", store_secrets=True, refresh="warn", **SETTINGS) as idx:
        looked = idx.look()
        assert "pkg/util.py" in looked.changed and len(looked.changed) > 10


def test_refreshes_after_edits_renames_moves_and_deletions_equal_a_first_index(tmp_path: Path) -> None:
    root = project(tmp_path)
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        with idx.reading() as store:  # a first index leaves the store's symbol table for the next run
            run = last_run(store)
            left = SymbolRows.load(idx.layout.cache, run)
            assert left is not None and left.rows == SymbolRows.from_store(store, run).rows
        # a body edit, and lines inserted above a function
        edit(root / "pkg" / "util.py", 'return text.strip().lower()', 'return text.strip().lower().strip()')
        edit(root / "pkg" / "mod.py", "def make_parser()", "# one\n# two\n# three\ndef make_parser()")
        assert idx.refresh() is not None
        # a function renamed: its caller in another file is edited, a caller left unchanged relinks
        edit(root / "pkg" / "util.py", "def join_parts(", "def join_all(")
        assert idx.refresh() is not None
        edit(root / "pkg" / "mod.py", "util.join_parts(", "util.join_all(")
        report = idx.refresh()
        assert report is not None
        # a file calling what does not exist yet, then the definition it calls: the caller is unchanged
        (root / "pkg" / "user.py").write_text("from pkg.util import later\n\n\ndef use():\n    return later()\n")
        idx.refresh()
        edit(root / "pkg" / "util.py", "def normalize(", "def later() -> int:\n    return 2\n\n\ndef normalize(")
        idx.refresh()
        # a class moved to another file; a new file; a deleted file
        mod = root / "pkg" / "mod.py"
        text = mod.read_text()
        base = text[text.index("class Base:"):text.index("class Parser(")]
        mod.write_text(text.replace(base, "").replace("from . import util", "from . import util\nfrom pkg.base import Base"))
        (root / "pkg" / "base.py").write_text('"""The base."""\n\n\n' + base)
        (root / "notes.txt").unlink()
        (root / "poly" / "shapes" / "util.go").unlink()
        report = idx.refresh()
        assert report is not None and report.files_removed == 2
        assert idx.refresh() is None  # nothing left to do
        assert not idx.look().stale
        live = current(idx)
        with idx.reading() as store:  # the symbol table the runs kept is the store's
            run = last_run(store)
            kept = SymbolRows.load(idx.layout.cache, run)
            assert kept is not None and kept.rows == SymbolRows.from_store(store, run).rows
    assert live == fresh_graph(root, tmp_path)


def _project_files(root: Path) -> list[Path]:
    """The project's files, sorted, without walking into its index."""
    found: list[Path] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".acms")
        found += [Path(folder) / n for n in names]
    return sorted(found)


def _random_changes(root: Path, rnd: random.Random) -> None:
    """Edits as an agent makes them, picked at random: lines inserted, a definition renamed or deleted, a
    file deleted, moved, copied under a new name; an ``__init__`` removed or a module's stub added."""
    files = _project_files(root)  # not .acms: the index removes what it replaced there in a thread
    code = [p for p in files if p.suffix in (".py", ".pyi", ".go", ".ts", ".js", ".rb", ".md")]
    for path in rnd.sample(code, min(8, len(code))):
        lines = path.read_text().splitlines(keepends=True)
        defs = [i for i, line in enumerate(lines) if re.match(r"\s*(def|class|func|function) \w+", line)]
        kind = rnd.choice(["insert", "rename", "delete"] if defs else ["insert"])
        if kind == "insert":
            lines.insert(rnd.randrange(len(lines) + 1), "\n")
        elif kind == "rename":
            i = rnd.choice(defs)
            lines[i] = re.sub(r"(def|class|func|function) (\w+)", r"\1 \2_v2", lines[i], count=1)
        else:
            i = rnd.choice(defs)
            lines[i] = re.sub(r"(def|class|func|function) (\w+)", r"\1 _gone_\2", lines[i], count=1)
        path.write_text("".join(lines))
    rest = [p for p in code if p.exists()]
    gone, moved, copied = rnd.sample(rest, 3)
    gone.unlink()
    moved.rename(moved.with_name("moved_" + moved.name))
    copied.with_name("copy_" + copied.name).write_text(copied.read_text())
    inits = [p for p in _project_files(root) if p.name == "__init__.py"]
    if inits and rnd.random() < 0.5:
        rnd.choice(inits).unlink()
    modules = [p for p in _project_files(root) if p.suffix == ".py" and p.name != "__init__.py"]
    if modules:
        stubbed = rnd.choice(modules)
        stubbed.with_suffix(".pyi").write_text("def stub() -> int: ...\n")


@pytest.mark.parametrize("seed", [3, 4, 5, 6])
def test_random_changes_refreshed_equal_a_first_index(tmp_path: Path, seed: int) -> None:
    """Random edits, renames, deletions, moves, copies, a removed ``__init__`` and a new stub, over the
    sample, polyglot and re-exporting projects together: the refreshed graph is a first index's."""
    root = project(tmp_path)
    write_files(root, {"lib/__init__.py": "from lib.core import make\n", "lib/core.py": "def make():\n    return 1\n",
                       "lib/core.pyi": "def make() -> int: ...\n",
                       "tests/test_lib.py": "from lib import make\n\n\ndef test_make():\n    assert make()\n",
                       "tests/contrib/test_lib.py": "import lib.core\n\n\ndef test_core():\n    assert lib.core.make()\n"
                       })
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        _random_changes(root, random.Random(seed))
        report = idx.refresh()
        assert report is not None and report.quarantined == {}
        live = current(idx)
    assert live == fresh_graph(root, tmp_path)


def test_a_renamed_project_folder_keeps_its_iris_and_follows_edits(tmp_path: Path) -> None:
    root = project(tmp_path, "proj")
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
    moved = root.rename(tmp_path / "moved")
    edit(moved / "pkg" / "util.py", "def normalize(", "def normalise(")
    with Index.open(moved, **SETTINGS) as idx:
        assert idx.project_name == "proj"
        report = idx.refresh()
        assert report is not None and report.files_indexed == 1
        live = current(idx)
        assert not any("/id/moved/" in q for q in live)
        plan = idx.plans.create("keep")
        assert plan.startswith("https://w3id.org/acms/id/proj/")
        with idx.reading() as store:
            before = {str(q) for q in store.quads()}
    # the same files indexed first under that name: the tree names the folder as it is now
    copy = tmp_path / "fresh" / "moved"
    shutil.copytree(moved, copy, ignore=shutil.ignore_patterns(".acms"))
    with Index.open(copy, **SETTINGS, project_name="proj") as idx:
        idx.index()
        assert live == current(idx)
    # a setting naming another project is refused, by the run and by a plan's write, and writes nothing
    with Index.open(moved, **SETTINGS, project_name="other") as idx:
        with pytest.raises(ConfigError, match="holds project 'proj'.*says 'other'"):
            idx.index()
        with pytest.raises(ConfigError, match="holds project 'proj'"):
            idx.plans.create("elsewhere")
        with idx.reading() as store:
            assert {str(q) for q in store.quads()} == before


@pytest.mark.parametrize(("users", "kept"), [(0, False), (70, False), (70, True)],
                         ids=["one-file", "parsed-in-workers", "outlines-kept"])
def test_an_edited_file_keeps_its_links_through_unchanged_re_exports_and_bases(
        tmp_path: Path, users: int, kept: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """What an edited file's names resolve through lives in files the refresh does not read again: a
    package's ``__init__`` that re-exports a name, a base class defined elsewhere. The refresh's links are
    a first index's (it lost every call to a re-exported name). ``users``: more edited files, each using
    ``make`` through one of 20 re-exporting modules: enough for the run to parse in worker processes,
    and those modules there too. ``kept``: the outlines the first index kept are read instead, and no
    module is parsed; without them (an index an older acms made), the modules are parsed and kept."""
    from acms.ingest import unchanged_modules

    pools: list[object] = []
    parsed: list[str] = []
    real_parse_one = unchanged_modules._parse_one

    def parse_one(listed: Any, *args: Any) -> Any:
        parsed.append(listed.path)
        return real_parse_one(listed, *args)

    monkeypatch.setattr(unchanged_modules, "_parse_one", parse_one)

    class Pool(unchanged_modules.ProcessPoolExecutor):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            pools.append(self)

    monkeypatch.setattr(unchanged_modules, "ProcessPoolExecutor", Pool)
    root = tmp_path / "reexports"
    for i in range(users):
        write_files(root, {"lib/__init__.py": "", f"lib/m{i % 20}.py": "from b.c import make\n",
                           f"users/u{i}.py": f"from lib.m{i % 20} import make\n\n\ndef use{i}():\n    return make()\n"})
    write_files(root, {
        "b/__init__.py": "",
        "b/c.py": "def make():\n    return 1\n\n\nclass Base:\n    def helper(self):\n        return 2\n",
        "a/__init__.py": "from b.c import make, Base\n",
        "a/star.py": "from b.c import *\n",
        "f.py": "from a import make, Base\nfrom a.star import Base as Again\n\n\nclass Sub(Base):\n"
                "    def run(self):\n        return self.helper() + make()\n\n\ndef other():\n    return Again\n",
    })
    calls = "SELECT ?s ?p ?t WHERE { GRAPH ?g { ?s ?p ?t } VALUES ?p { uko:calls uko:inherits uko:references } }"
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        linked = {tuple(str(t) for t in row.values()) for row in idx.query(calls)}
        assert len(linked) >= 3  # Sub inherits b.c.Base; run calls b.c.make and b.c.Base.helper
        edit(root / "f.py", "        return self.helper()", "        y = 1\n        return self.helper()")
        for i in range(users):
            edit(root / "users" / f"u{i}.py", "    return make()", "    y = 1\n    return make()")
        outlines = root / ".acms" / "cache" / "link-outlines.db"
        assert outlines.is_file()
        if not kept:
            outlines.unlink()
        report = idx.refresh()
        assert report is not None and report.files_indexed == 1 + users
        assert len(pools) == (1 if users and not kept else 0)
        if kept:
            assert parsed == []
        else:  # parsed here, or in the pool's workers
            assert pools or "a/__init__.py" in parsed
        assert {tuple(str(t) for t in row.values()) for row in idx.query(calls)} == linked
        assert current(idx) == fresh_graph(root, tmp_path)
        parsed.clear()
        edit(root / "f.py", "        y = 1\n", "        y = 2\n")
        assert idx.refresh() is not None
        assert parsed == []  # what the last run parsed, it kept
        assert current(idx) == fresh_graph(root, tmp_path / "again")


def test_a_long_lived_process_parses_an_unchanged_module_linking_reads_once_per_version(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server refreshes after every save: the modules a saved file's links pass through are parsed the
    first time only, and again once they change (a module last written within the clock's tick is not
    kept: a later edit could keep its size and mtime). The outlines the runs keep on disk are removed
    before each refresh: this is the process's own memo."""
    from acms.ingest import unchanged_modules

    parsed: list[str] = []
    real = unchanged_modules.python_extraction
    monkeypatch.setattr(unchanged_modules, "python_extraction",
                        lambda path, *rest: parsed.append(path) or real(path, *rest))
    root = tmp_path / "memo"
    write_files(root, {"b/__init__.py": "", "b/c.py": "def make():\n    return 1\n",
                       "a/__init__.py": "from b.c import make\n",
                       "f.py": "from a import make\n\n\ndef use():\n    return make()\n"})
    past = time.time() - 3600
    for path in _project_files(root):
        os.utime(path, (past, past))
    with Index.open(root, **SETTINGS) as idx:
        idx.index()

        def refresh() -> None:
            (idx.layout.cache / "link-outlines.db").unlink(missing_ok=True)
            idx.refresh()

        for i in range(2):
            edit(root / "f.py", "    return make()", f"    x{i} = 1\n    return make()")
            refresh()
        assert parsed.count("a/__init__.py") == 1  # the first refresh parsed it, the second kept it
        edit(root / "a" / "__init__.py", "\n", "\n# edited\n")
        os.utime(root / "a" / "__init__.py", (past + 60, past + 60))
        refresh()  # read by the run itself
        edit(root / "f.py", "    return make()", "    x9 = 1\n    return make()")
        refresh()
        assert parsed.count("a/__init__.py") == 2  # its new version, once
        assert current(idx) == fresh_graph(root, tmp_path)


def test_two_files_of_one_module_name_read_by_one_refresh_link_as_a_first_index(tmp_path: Path) -> None:
    """``tests/test_x.py`` and ``tests/contrib/test_x.py`` (no ``__init__``) are both module ``test_x``;
    a first index links both files' module-level imports to the one of the greatest IRI, and so must a
    refresh that reads both (it linked them to whichever file came last: here the one relinked because
    it mentions the renamed ``check``)."""
    root = tmp_path / "twins"
    write_files(root, {"lib/__init__.py": "", "lib/core.py": "def run():\n    return 1\n",
                       "tests/test_x.py": "from lib.core import run\n\n\ndef check():\n    assert run()\n",
                       "tests/contrib/test_x.py": "import lib.core\n\n\ndef test_b():\n    check = lib.core.run\n"})
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        edit(root / "tests" / "test_x.py", "def check()", "def check_more()")
        report = idx.refresh()
        assert report is not None and report.files_indexed == 1 and report.files_relinked == 1
        assert current(idx) == fresh_graph(root, tmp_path)


def test_a_file_relinked_for_a_name_brings_its_module_twin(tmp_path: Path) -> None:
    """``tests/test_x.py`` holds the edges of ``tests/contrib/test_x.py`` too (module ``test_x``, the
    greatest IRI). A rename relinks it, as it mentions the name; its twin, which does not, is read
    again with it, or its imports' edges are lost with the replaced file's quads."""
    root = tmp_path / "twins"
    write_files(root, {"lib/__init__.py": "", "lib/core.py": "def run():\n    return 1\n",
                       "lib/other.py": "def other():\n    return 2\n",
                       "tests/test_x.py": "from lib.core import run\n\n\ndef test_a():\n    assert run()\n",
                       "tests/contrib/test_x.py": "import lib.other\n\n\ndef test_b():\n    assert lib.other.other()\n"})
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        edit(root / "lib" / "core.py", "def run()", "def walk()")
        report = idx.refresh()
        assert report is not None and report.files_relinked == 2  # test_x.py mentions run; its twin comes along
        assert current(idx) == fresh_graph(root, tmp_path)


def test_a_new_module_relinks_only_the_files_whose_names_can_resolve_through_it(tmp_path: Path) -> None:
    """A new module defining ``run`` relinks no file that merely says ``run``: only those whose imports can
    reach it, directly or through a package re-exporting from it, and those under a package whose own
    names move (``from .. import x`` names no package). Each refresh still equals a first index."""
    root = tmp_path / "reach"
    write_files(root, {"app/__init__.py": "", "app/runner.py": "def run():\n    return 1\n",
                       "app/other.py": "from app.runner import run\n\n\ndef go():\n    return run()\n",
                       "pkg/__init__.py": "from .newmod import helper\n",
                       "use_pkg.py": "from pkg import helper\n\n\ndef use():\n    return helper()\n",
                       "pkg/sub/__init__.py": "",
                       "pkg/sub/deep.py": "from .. import helper2\n\n\ndef deep():\n    return helper2()\n"})
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        write_files(root, {"pkg/newmod.py": "def helper():\n    return run()\n\n\ndef run():\n    return 2\n"})
        report = idx.refresh()
        assert report is not None and report.files_indexed == 1
        assert {"pkg/__init__.py", "use_pkg.py"} <= set(report.changed_paths)  # they reach pkg.newmod
        assert "app/runner.py" not in report.changed_paths and "app/other.py" not in report.changed_paths
        assert current(idx) == fresh_graph(root, tmp_path / "added")
        edit(root / "pkg" / "__init__.py", "\n", "\n\n\ndef helper2():\n    return 3\n")
        report = idx.refresh()
        assert report is not None and "pkg/sub/deep.py" in report.changed_paths  # its package's names moved
        assert "app/other.py" not in report.changed_paths
        assert current(idx) == fresh_graph(root, tmp_path / "edited")


def test_a_python_module_s_names_relink_no_file_of_another_language_that_says_them(tmp_path: Path) -> None:
    """A tree-sitter file links within its own family's modules: a new Python module defining ``run`` and
    ``get`` leaves the JavaScript and Go files that call a ``run`` alone, and the graph is a first index's."""
    root = tmp_path / "polyglot"
    write_files(root, {"web/app.js": "function run() { return get(); }\nfunction get() { return 1; }\n",
                       "cmd/main.go": "package main\n\nfunc run() int { return 1 }\n\nfunc main() { run() }\n",
                       "lib/__init__.py": "", "lib/core.py": "def run():\n    return 1\n"})
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        write_files(root, {"tasks.py": "def run():\n    return get()\n\n\ndef get():\n    return 2\n"})
        report = idx.refresh()
        assert report is not None and report.changed_paths == ["tasks.py"] and report.files_relinked == 0
        assert current(idx) == fresh_graph(root, tmp_path / "added")
        edit(root / "web" / "app.js", "function get()", "function fetch()")  # a JavaScript name moves: Python stays
        report = idx.refresh()
        assert report is not None and report.changed_paths == ["web/app.js"]
        assert current(idx) == fresh_graph(root, tmp_path / "moved")


def test_a_file_linked_again_keeps_its_quads_and_its_hot_entities_links_stay_hot(tmp_path: Path) -> None:
    """A file read again only for its links (its text unchanged) loses its stale links and gets its new
    ones, the rest of it left as stored: a hot entity's links go to the hot tier with it, so no entity
    sits in two tiers, and the graph is a first index's."""
    root = tmp_path / "hot"
    write_files(root, {"lib/__init__.py": "", "lib/core.py": "def make():\n    return 1\n\n\ndef other():\n    return 2\n",
                       "app.py": "from lib.core import make\n\n\ndef build():\n    return make()\n"})
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        edit(root / "app.py", "return make()", "return make() + 1")  # a new version: build is hot now
        idx.refresh()
        with idx.reading() as store:
            hot = {r["e"].value for r in store.select(catalog.text("rules/entities-in-tier"), {"tier": TIER_HOT})}
        assert any(e.endswith("build") for e in hot), hot
        edit(root / "lib" / "core.py", "def make()", "def make_one()")
        report = idx.refresh()
        assert report is not None and "app.py" in report.changed_paths and report.files_relinked == 1
        with idx.reading() as store:
            assert tiers.violations(store) == []
        assert current(idx) == fresh_graph(root, tmp_path / "renamed")
        edit(root / "lib" / "core.py", "def make_one()", "def make()")  # the link comes back, from the hot entity
        idx.refresh()
        with idx.reading() as store:
            assert tiers.violations(store) == []
        assert current(idx) == fresh_graph(root, tmp_path / "back")


def test_an_init_added_or_removed_renames_the_modules_under_it(tmp_path: Path) -> None:
    """Without ``__init__.py``, ``site/urls.py`` is module ``urls``; with it, ``site.urls``. A refresh that
    removes or adds the ``__init__`` reads the files under it again (their entities' names and IRIs move)
    and what imports them, as a first index of the new files would name and link them."""
    root = tmp_path / "packages"
    write_files(root, {"site/__init__.py": "", "site/urls.py": "def route():\n    return 1\n",
                       "site/app.py": "from site.urls import route\nimport urls\n\n\ndef main():\n    return route()\n",
                       "urls_user.py": "import urls\n\n\ndef use():\n    return urls.route()\n"})
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        (root / "site" / "__init__.py").unlink()
        report = idx.refresh()
        assert report is not None and report.files_removed == 1 and report.files_relinked >= 2
        assert current(idx) == fresh_graph(root, tmp_path / "without")
        (root / "site" / "__init__.py").write_text("")
        idx.refresh()
        assert current(idx) == fresh_graph(root, tmp_path / "with")


def test_a_module_s_stub_is_read_with_it_and_nothing_is_quarantined(tmp_path: Path) -> None:
    """``pkg/m.py`` and its stub ``pkg/m.pyi`` are both module ``pkg.m``, whose edges start from the stub's
    entity (the greatest IRI). A refresh that relinks ``m.py`` writes edges from the stub's entity, so the
    stub, its module twin, is read with it. (The refresh quarantined both relinked files, "a module imports
    only modules": the batch described the stub's entity without its class.)"""
    root = tmp_path / "stubs"
    write_files(root, {"pkg/__init__.py": "from .m import f\nfrom .v import g\n",
                       "pkg/m.py": "from .v import g\n\n\ndef f():\n    return g()\n",
                       "pkg/m.pyi": "def f() -> int: ...\n",
                       "pkg/v.py": "def g():\n    return 1\n"})
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        edit(root / "pkg" / "v.py", "def g()", "def g2()")
        report = idx.refresh()
        assert report is not None and report.quarantined == {}
        assert report.files_indexed == 1 and report.files_relinked == 3
        assert current(idx) == fresh_graph(root, tmp_path)


def test_a_rename_relinks_the_unchanged_files_that_call_it(tmp_path: Path) -> None:
    root = project(tmp_path)
    edit(root / "docs" / "guide.md", "\n", "\nText is cleaned by `normalize`.\n")
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        calls = "SELECT ?caller WHERE { GRAPH ?g { ?caller uko:calls ?f } GRAPH ?h { ?f uko:qualifiedName ?qn } }"
        before = idx.query(calls, {"qn": _lit("pkg.util.normalize")})
        assert before  # mod.py calls it
        edit(root / "pkg" / "util.py", "def normalize(", "def normalise(")
        report = idx.refresh()
        assert report is not None and report.files_indexed == 1 and report.files_relinked >= 1
        assert not idx.query(calls, {"qn": _lit("pkg.util.normalize")})
        assert "pkg/mod.py" in report.changed_paths  # it calls the name: read and linked again
        assert "docs/guide.md" not in report.changed_paths  # it mentions it, but no document links by name
        edit(root / "pkg" / "util.py", "def normalise(", "def normalize(")  # back: the call resolves again
        idx.refresh()
        assert idx.query(calls, {"qn": _lit("pkg.util.normalize")}) == before


def test_reads_refresh_first_and_their_lines_are_the_files_lines(tmp_path: Path) -> None:
    root = project(tmp_path)
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        edit(root / "pkg" / "mod.py", "def make_parser()", "# a\n# b\n# c\n# d\ndef make_parser()")
        found = idx.describe("pkg.mod.make_parser")
        line = next(i for i, text in enumerate((root / "pkg" / "mod.py").read_text().splitlines(), 1)
                    if text.startswith("def make_parser"))
        assert found.location is not None and found.location.startswith(f"pkg/mod.py:{line}-")
        hits = idx.search("make_parser", "keyword", 3).hits
        assert any(h.source_ref.startswith(f"pkg/mod.py:{line}-") for h in hits)
        assert idx.stale == ()


def test_an_entity_removed_by_an_edit_is_described_as_gone_with_its_history(tmp_path: Path) -> None:
    root = project(tmp_path)
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        before = idx.describe("pkg.util.normalize")
        assert before.location is not None
        edit(root / "pkg" / "util.py", "def normalize(", "def normalise(")
        gone = idx.describe("pkg.util.normalize")  # the read refreshes first: the function is gone
        assert (gone.entity, gone.name, gone.kind) == (before.entity, "pkg.util.normalize", "Function")
        assert gone.location is None and gone.tier is None and not gone.callers
        assert gone.history["earlier_versions"] == 1
        assert [e.ref for e in idx.history("pkg.util.normalize")[0].events] == [before.location]
        assert idx.describe("pkg.util.normalise").location == before.location
        with pytest.raises(UsageError, match="no entity named 'pkg.util.never'"):
            idx.describe("pkg.util.never")  # neither current nor in the history: refused, as before


def test_warn_answers_from_the_index_and_names_the_stale_files(tmp_path: Path) -> None:
    root = project(tmp_path)
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
    edit(root / "pkg" / "util.py", "Small helpers.", "Small helpers, edited.")
    with Index.open(root, mode="read", refresh="warn", **SETTINGS) as idx:
        result = idx.assemble("normalize text helpers", budget=800)
        assert idx.stale == ("pkg/util.py",)
        assert result.stale == ("pkg/util.py",)
        second = result.assembled.rendered.splitlines()[1]
        assert second.startswith("> stale: 1 file changed on disk since indexed (pkg/util.py)")
        assert result.assembled.used_tokens <= 800
        assert any(w.startswith("stale: ") for w in result.reply["metrics"]["warnings"])
        assert idx.look().stale  # nothing was written
    with Index.open(root, mode="read", refresh="off", **SETTINGS) as idx:
        idx.search("normalize", "keyword", 3)
        assert idx.stale == ()
    with Index.open(root, mode="read", **SETTINGS) as idx:  # auto: a reader lets go of its share to refresh
        idx.search("normalize", "keyword", 3)
        assert idx.stale == () and not idx.look().stale


def test_a_store_that_cannot_be_written_is_answered_as_warn(tmp_path: Path) -> None:
    root = project(tmp_path)
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
    edit(root / "pkg" / "util.py", "Small helpers.", "Small helpers, edited.")
    with Index.open(root, mode="read", **SETTINGS) as idx:
        idx._writable = lambda: False  # type: ignore[method-assign]  # as for a mounted, read-only index
        idx.describe("pkg.util.normalize")
        assert idx.stale == ("pkg/util.py",)


def _lit(text: str) -> object:
    from pyoxigraph import Literal

    return Literal(text)


def test_a_refresh_takes_a_read_s_look_only_while_the_index_is_in_the_state_it_looked_at(tmp_path: Path) -> None:
    """A read looks, then refreshes with that look (one walk of the project, not two); if another writer
    ran in between, the look is of an older state and the files are looked at again."""
    root = project(tmp_path)
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        edit(root / "pkg" / "util.py", "Small helpers.", "Small helpers, edited.")
        looked = idx.look()
        with idx.reading() as store:
            assert looked.changed == ["pkg/util.py"] and looked.run == last_run(store)
        edit(root / "pkg" / "mod.py", "from pkg.util", "import os  # after the look\nfrom pkg.util")
        report = idx.refresh(looked=looked)  # the same state: the look stands, core.py waits for the next
        assert report is not None and report.files_indexed == 1
        assert idx.look().changed == ["pkg/mod.py"]
        edit(root / "pkg" / "util.py", "Small helpers, edited.", "Small helpers, edited twice.")
        stale = idx.look()
        idx.index()  # another run between the look and the refresh
        edit(root / "docs" / "guide.md", "#", "A line added after the run.\n\n#")
        report = idx.refresh(looked=stale)
        assert report is not None and report.files_indexed == 1  # guide.md, from a new look
        assert not idx.look().stale


def test_a_look_does_not_open_the_files_the_last_run_indexed_unchanged(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """The walker sniffs a file's head for binary content; a look takes a file whose size and mtime are as
    the last run listed it as the text it was, so of the indexed files only the edited one is opened."""
    from acms.ingest import walker

    root = project(tmp_path)
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        manifest = Manifest.load(idx.layout.cache)
        assert manifest is not None
        manifest.listed_ns = time.time_ns() + 10**10  # the listing long past: no file within the racy window
        manifest.save(idx.layout.cache)
        sniffed: list[str] = []
        real = walker._cheap_reason

        def cheap_reason(path: str, *args, sniff: bool = True, **kwargs):  # noqa: ANN002, ANN003, ANN202
            if sniff:
                sniffed.append(Path(path).relative_to(idx.root).as_posix())
            return real(path, *args, sniff=sniff, **kwargs)

        monkeypatch.setattr(walker, "_cheap_reason", cheap_reason)
        assert not idx.look().stale
        indexed = {p for p, (_, _, digest) in manifest.files.items() if digest}
        assert sniffed and not indexed & set(sniffed)  # only files the last run did not index as text
        sniffed.clear()
        edit(root / "pkg" / "util.py", "Small helpers.", "Small helpers, edited.")
        (root / "docs" / "guide.md").write_bytes(b"\x00\x01binary now\x00" * 10)
        looked = idx.look()
        assert looked.changed == ["pkg/util.py"] and looked.removed == ["docs/guide.md"]
        assert indexed & set(sniffed) == {"pkg/util.py", "docs/guide.md"}


def test_a_refresh_larger_than_a_batch_is_a_streamed_reindex_that_equals_a_first_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A formatter run or a far branch switch changes more source than one batch holds in bounded memory:
    the run redoes every file streamed, says so, reports the files that changed, archives the versions they
    replace, and leaves what a first index of the new files would; a small change stays a live refresh, and
    so does a large one that is a small share of the project (re-indexing it all would take far longer),
    unless the batch would not fit in the memory available."""
    from acms.service.indexing import run as index_run

    root = project(tmp_path)
    with Index.open(root, **SETTINGS) as idx:
        idx.index()
        edit(root / "pkg" / "util.py", 'return text.strip().lower()', 'return text.strip().lower().strip()')
        small = (root / "pkg" / "util.py").stat().st_size
        monkeypatch.setattr(index_run, "LIVE_BATCH_BYTES", small + 1)
        monkeypatch.setattr(index_run, "STREAM_SHARE", 0.0)
        report = idx.refresh()
        assert report is not None and not report.notes and report.files_indexed == 1
        assert "compacting" not in report.timings
        edit(root / "pkg" / "util.py", "def join_parts(", "def join_all(")  # its unchanged caller links again
        edit(root / "pkg" / "mod.py", "def make_parser()", "# one\n# two\ndef make_parser()")
        (root / "notes.txt").unlink()
        look = idx.look()
        assert index_run.stream_reason(look)
        monkeypatch.setattr(index_run, "STREAM_SHARE", 0.9)  # a small share of a large project: still one batch
        assert index_run.stream_reason(look) is None
        monkeypatch.setattr(index_run, "available_bytes", lambda: 0)  # ... unless the batch would not fit
        assert "available" in (index_run.stream_reason(look) or "")
        monkeypatch.setattr(index_run, "available_bytes", lambda: None)
        monkeypatch.setattr(index_run, "STREAM_SHARE", 0.0)
        report = idx.refresh()
        assert report is not None and len(report.notes) == 1 and "streamed" in report.notes[0]
        assert "compacting" in report.timings  # a whole index rewritten: its files compacted after it landed
        assert report.changed_paths == ["notes.txt", "pkg/mod.py", "pkg/util.py"]
        assert report.files_removed == 1 and report.versions_archived >= 1
        with idx.reading() as store:  # the renamed function's old version is in the cold tier
            assert any(TIER_COLD == q.graph_name and "join_parts" in q.subject.value for q in store.quads())
        assert idx.refresh() is None and not idx.look().stale
        live = current(idx)
        with idx.reading() as store:  # the re-index left the symbol table for the next refresh: the store's
            run = last_run(store)
            kept = SymbolRows.load(idx.layout.cache, run)
            assert kept is not None and kept.rows == SymbolRows.from_store(store, run).rows
    assert live == fresh_graph(root, tmp_path)


def test_a_streamed_refresh_archives_the_versions_a_batch_would(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The streamed re-index tells a changed entity by its fragments' IRIs (level of detail and text hash),
    the batch by their texts: the same entities go to the cold tier (a body edit, a rename, a deletion;
    not lines moved)."""
    from acms.service.indexing import run as index_run

    def archived(root: Path, streamed: bool) -> set[str]:
        with Index.open(root, **SETTINGS) as idx:
            idx.index()
            edit(root / "pkg" / "util.py", 'return text.strip().lower()', 'return text.strip().lower().strip()')
            edit(root / "pkg" / "util.py", "def join_parts(", "def join_all(")
            edit(root / "pkg" / "mod.py", "def make_parser()", "# one\n# two\ndef make_parser()")
            (root / "poly" / "shapes" / "util.go").unlink()
            monkeypatch.setattr(index_run, "LIVE_BATCH_BYTES", 0 if streamed else 1 << 40)
            monkeypatch.setattr(index_run, "STREAM_SHARE", 0.0)
            report = idx.refresh()
            assert report is not None and bool(report.notes) == streamed
            rows = idx.query("SELECT ?e WHERE { GRAPH ?g { ?v a uko:Version ; prov:specializationOf ?e } }")
            return {str(r["e"]) for r in rows}

    batch = archived(project(tmp_path, "proj"), streamed=False)
    other = tmp_path / "other"
    other.mkdir()
    streamed = archived(project(other, "proj"), streamed=True)
    assert batch == streamed and len(batch) >= 3
