"""No file in the repository points at a path outside it: a clone must read whole. Every relative link
in a Markdown file resolves to a file or folder inside the repository, and no file names the team's
folders beside the checkout (the shared folder one level up, the reference seeds)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIP = {".git", ".venv", ".acms", "node_modules", ".pytest_cache", ".hypothesis", "__pycache__", "out", "vendor"}
LINK = re.compile(r"\]\(([^)\s]+)\)")
BESIDE = "sha" + "red"  # spelt in two parts so that this guard does not name the folder itself
OUTSIDE = re.compile(rf"\.\./{BESIDE}\b|(?<![\w/])seeds/\d|\bROOT\.parent\b")  # ROOT: the checkout


def _generated() -> set[Path]:
    """The reference pages tools/docgen.py adds to the site at build time (never written into docs/)."""
    spec = importlib.util.spec_from_file_location("docgen", ROOT / "tools" / "docgen.py")
    assert spec and spec.loader
    docgen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(docgen)
    return {ROOT / "docs" / docgen.PREFIX / name for name in docgen.PAGES}


def _files(*suffixes: str) -> list[Path]:
    return [p for p in ROOT.rglob("*") if p.is_file() and p.suffix in suffixes
            and not SKIP & set(p.relative_to(ROOT).parts[:-1])]


def test_markdown_links_stay_inside_the_repository() -> None:
    generated = _generated()
    bad = []
    for doc in _files(".md"):
        if "fixtures" in doc.relative_to(ROOT).parts:  # ADR fixtures link to each other by design
            continue
        prose = re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.S))
        for target in LINK.findall(prose):  # links in code (examples of ADR syntax) are not links
            if re.match(r"[a-z]+:|#", target):  # a URL or an anchor
                continue
            path = (doc.parent / target.split("#", 1)[0]).resolve()
            if not path.is_relative_to(ROOT) or not (path.exists() or path in generated):
                bad.append(f"{doc.relative_to(ROOT)}: {target}")
    assert bad == []


def test_no_file_names_a_folder_beside_the_checkout() -> None:
    this = Path(__file__).resolve()
    bad = [f"{p.relative_to(ROOT)}:{n}" for p in _files(".md", ".py", ".toml", ".json", ".yaml", ".rq", ".ttl", ".txt")
           if p != this for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
           if OUTSIDE.search(line)]
    assert bad == []
