"""``.gitattributes`` linguist marks, read by git's rules."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from acms.ingest.attributes import Attributes, marks_for, parse_attributes
from acms.ingest.walker import SkipReason, list_files


def _marks(tmp_path: Path, files: dict[str, str], paths: list[str]) -> dict[str, dict[str, bool]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return marks_for(tmp_path, paths)


def test_set_cleared_and_unspecified_values(tmp_path: Path) -> None:
    got = _marks(tmp_path, {".gitattributes": (
        "gen/** linguist-generated\n"
        "gen/keep.ts -linguist-generated\n"
        "gen/also.ts linguist-generated=false\n"
        "gen/again.ts !linguist-generated\n"
        "third/* linguist-vendored=true\n"
        "odd.ts linguist-generated=maybe\n"
        "*.md text eol=lf\n")},
        ["gen/a.ts", "gen/deep/b.ts", "gen/keep.ts", "gen/also.ts", "gen/again.ts", "third/x.ts",
         "third/sub/y.ts", "odd.ts", "README.md", "src/main.ts"])
    assert got == {
        "gen/a.ts": {"generated": True}, "gen/deep/b.ts": {"generated": True},
        "gen/keep.ts": {"generated": False}, "gen/also.ts": {"generated": False},
        "third/x.ts": {"vendored": True},  # ``*`` stops at a folder
    }


def test_a_folder_pattern_does_not_reach_its_files_and_negative_patterns_are_ignored(tmp_path: Path) -> None:
    got = _marks(tmp_path, {".gitattributes": "src/ linguist-vendored\ndist linguist-generated\n!x.ts linguist-generated\n"},
                 ["src/a.ts", "dist/b.js", "dist", "x.ts"])
    assert got == {"dist": {"generated": True}}  # a file named dist is matched; files inside a folder are not


def test_a_deeper_file_and_info_attributes_win(tmp_path: Path) -> None:
    got = _marks(tmp_path, {
        ".gitattributes": "*.ts linguist-generated\n",
        "pkg/.gitattributes": "*.ts -linguist-generated\nmodels.ts linguist-generated\n",
        ".git/info/attributes": "pkg/last.ts linguist-vendored\n",
    }, ["a.ts", "pkg/b.ts", "pkg/models.ts", "pkg/last.ts"])
    assert got == {"a.ts": {"generated": True}, "pkg/b.ts": {"generated": False},
                   "pkg/models.ts": {"generated": True}, "pkg/last.ts": {"generated": False, "vendored": True}}


def test_quoted_patterns_comments_and_macros() -> None:
    rules = parse_attributes('# comment\n[attr]gen linguist-generated\n"with space.ts" linguist-generated\n', "sub/")
    assert len(rules) == 1
    assert rules[0].matches("sub/with space.ts")
    assert not rules[0].matches("with space.ts")  # the rule's folder


def test_no_attributes_no_marks(tmp_path: Path) -> None:
    assert marks_for(tmp_path, ["a.py"]) == {}


@pytest.mark.parametrize("git", [False, True])
def test_a_vendored_folder_lists_the_files_marked_not_vendored(tmp_path: Path, git: bool) -> None:
    """``-linguist-vendored`` makes a file under a folder acms skips as vendored the project's own, as
    GitHub counts it; the rest of the folder stays skipped, and a folder no rule reaches is pruned whole."""
    files = {".gitattributes": "vendor/ours/** -linguist-vendored\nnode_modules/patched.js linguist-vendored=false\n",
             "vendor/ours/a.js": "a\n", "vendor/ours/deep/b.js": "b\n", "vendor/theirs.js": "t\n",
             "node_modules/patched.js": "p\n", "node_modules/other.js": "o\n", "third_party/x.js": "x\n",
             "src/main.js": "m\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    if git:
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    listing = list_files(tmp_path)
    assert listing.used_git is git
    assert sorted(f.path for f in listing.files) == ["node_modules/patched.js", "src/main.js", "vendor/ours/a.js",
                                                     "vendor/ours/deep/b.js"]
    vendored = listing.skipped[SkipReason.VENDORED]
    assert "vendor/theirs.js" in vendored and "node_modules/other.js" in vendored and "third_party/" in vendored
    assert marks_for(tmp_path, [f.path for f in listing.files])["vendor/ours/a.js"] == {"vendored": False}


def test_marks_for_asks_each_folder_once_and_only_ruled_folders_per_file(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A refresh marks every listed file again: a folder no rule reaches costs one look, not one per file."""
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / ".gitattributes").write_text("*.py linguist-generated\n")
    paths = [f"src/m{i}.py" for i in range(50)] + [f"gen/g{i}.py" for i in range(3)]
    asked: list[str] = []
    real = Attributes._rules_for
    monkeypatch.setattr(Attributes, "_rules_for", lambda self, path: asked.append(path) or real(self, path))
    marks = marks_for(tmp_path, paths)
    assert marks == {f"gen/g{i}.py": {"generated": True} for i in range(3)}
    assert len([p for p in asked if p.startswith("src/")]) == 1
