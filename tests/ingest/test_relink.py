"""Which unchanged Python files a moved name can reach (``python_reach``), and the texts relinking keeps
(for a run, and across the runs of a long-lived process)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from acms.ingest.relink import FIND_AT_MOST, Texts, Words, python_reach
from acms.ingest.walker import list_files

FILES = {
    "pkg/__init__.py": "from .m import helper\n",
    "pkg/m.py": "def helper():\n    return 1\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/deep.py": "from .. import other\n",
    "user.py": "from pkg import helper\n",
    "chain.py": "import user\n",
    "alone.py": "def helper():\n    return run()\n",
    "elsewhere/__init__.py": "",
    "elsewhere/near.py": "from . import helper\n",
}


def _project(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_a_module_is_reached_by_the_files_that_name_it_and_through_them(tmp_path: Path) -> None:
    root = _project(tmp_path)
    files = [f for f in list_files(root).files if f.path != "pkg/m.py"]  # the module whose names moved
    paths = {f.path for f in list_files(root).files}
    # pkg re-exports from pkg.m, user imports from pkg, chain imports user: each may resolve through pkg.m;
    # below pkg, a relative import reaches pkg's names without naming it. alone and elsewhere say
    # "helper", but nothing they import leads to pkg.m.
    assert python_reach(files, {"pkg.m"}, paths) == {"pkg/__init__.py", "user.py", "chain.py",
                                                      "pkg/sub/__init__.py", "pkg/sub/deep.py"}
    # a module nothing names is reached by no file, however near; its package's names are reached unnamed
    assert python_reach(files, {"elsewhere.gone"}, paths) == set()
    assert python_reach(files, {"elsewhere"}, paths) == {"elsewhere/near.py"}


def test_texts_over_the_budget_are_read_again_from_disk(tmp_path: Path) -> None:
    root = _project(tmp_path)
    by_path = {f.path: f for f in list_files(root).files}
    texts = Texts(budget=30)
    assert texts.get(by_path["alone.py"], None) == FILES["alone.py"]  # 36 characters: not kept
    assert texts.get(by_path["pkg/m.py"], None) == FILES["pkg/m.py"]  # 29: kept
    (root / "alone.py").write_text("changed\n")
    (root / "pkg" / "m.py").write_text("changed\n")
    assert texts.get(by_path["alone.py"], None) == "changed\n"
    assert texts.get(by_path["pkg/m.py"], None) == FILES["pkg/m.py"]


def test_a_long_lived_process_keeps_unchanged_texts_across_runs_and_never_a_changed_one(tmp_path: Path) -> None:
    root = _project(tmp_path)
    old = time.time() - 60
    os.utime(root / "user.py", (old, old))
    first = {f.path: f for f in list_files(root).files}
    assert Texts().get(first["user.py"], None) == FILES["user.py"]
    assert Texts().get(first["chain.py"], None) == FILES["chain.py"]  # written just now: not kept
    (root / "user.py").unlink()
    (root / "chain.py").unlink()
    assert Texts().get(first["user.py"], None) == FILES["user.py"]  # a later run's: kept, not read again
    assert Texts().get(first["chain.py"], None) is None  # read again: gone
    (root / "user.py").write_text("import chain\n")  # a new size and mtime: the listing tells
    assert Texts().get({f.path: f for f in list_files(root).files}["user.py"], None) == "import chain\n"


# letters, digits and underscore of several scripts (``\w``), ``$``, and characters that end a word
_CHARS = st.sampled_from(list("abgetrunAZ_09$ .-(\n") + ["é", "ß", "٣", "²", "Ω", "\u00a0"])
_NAMES = st.lists(st.text(_CHARS, min_size=1, max_size=4), min_size=1, max_size=2 * FIND_AT_MOST + 8)


@settings(max_examples=400, deadline=None)
@given(names=_NAMES, text=st.text(_CHARS, max_size=120))
def test_a_whole_word_is_found_where_the_bounded_regex_finds_it(names: list[str], text: str) -> None:
    """Relinking reads a file again when its text names a moved name as a whole word; the test it uses
    (str.find for a few names, the text's words for more) answers as the regex it replaced."""
    regex = re.compile(r"(?<![\w$])(?:" + "|".join(map(re.escape, sorted(set(names), key=lambda n: (-len(n), n))))
                       + r")(?![\w$])")
    assert Words(names).found_in(text) == (regex.search(text) is not None)
