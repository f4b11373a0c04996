"""A git repository built by the tests: commits that add, change, rename and delete symbols."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

SHAPES_V1 = '''"""Shapes."""


def area(r):
    return 3.14 * r * r


def perimeter(r):
    return 2 * 3.14 * r


class Circle:
    def __init__(self, r):
        self.r = r

    def scale(self, k):
        return Circle(self.r * k)
'''

HISTORY = [
    # (message, author, date, {path: text or None to delete}, renames)
    ("Add shapes", "Ada", "2025-01-01T10:00:00+00:00", {"pkg/__init__.py": "", "pkg/shapes.py": SHAPES_V1}, {}),
    ("Use math.pi in area", "Grace", "2025-01-02T10:00:00+00:00",
     {"pkg/shapes.py": SHAPES_V1.replace('"""Shapes."""\n', '"""Shapes."""\nimport math\n')
      .replace("return 3.14 * r * r", "return math.pi * r * r")}, {}),
    ("Rename perimeter to circumference", "Ada", "2025-01-03T10:00:00+00:00", {"pkg/shapes.py": None}, {}),
    ("Drop Circle.scale", "Linus", "2025-01-04T10:00:00+00:00", {"pkg/shapes.py": None}, {}),
    ("Move shapes to geometry", "Grace", "2025-01-05T10:00:00+00:00", {}, {"pkg/shapes.py": "pkg/geometry.py"}),
]


def git(root: Path, *args: str, date: str = "2025-01-01T10:00:00+00:00", author: str = "Ada") -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": f"{author.lower()}@example.org",
           "GIT_COMMITTER_NAME": author, "GIT_COMMITTER_EMAIL": f"{author.lower()}@example.org",
           "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", "-C", str(root), *args], env=env, check=True, capture_output=True,
                          text=True).stdout


def commit(root: Path, message: str, author: str, date: str) -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message, date=date, author=author)
    return git(root, "rev-parse", "HEAD").strip()


def build(root: Path) -> list[str]:
    """The five commits of HISTORY; returns their hashes, oldest first."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    hashes = []
    text = ""
    for message, author, date, files, renames in HISTORY:
        for path, content in files.items():
            target = root / path
            if content is None:  # edit in place, derived from the previous text
                text = target.read_text()
                if message.startswith("Rename"):
                    text = text.replace("def perimeter(r):", "def circumference(r):")
                elif message.startswith("Drop"):
                    text = text.replace("\n    def scale(self, k):\n        return Circle(self.r * k)\n", "")
                target.write_text(text)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content)
        for old, new in renames.items():
            git(root, "mv", old, new)
        hashes.append(commit(root, message, author, date))
    return hashes
