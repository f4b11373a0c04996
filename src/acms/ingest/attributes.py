"""``.gitattributes`` marks that say a file is generated or vendored, read as git and GitHub read them.

GitHub's linguist takes ``linguist-generated`` and ``linguist-vendored`` from git attributes: a file
marked generated or vendored is still in the repository, but it is not the project's own source (a
diff collapses it, language statistics leave it out). acms indexes such a file and records the mark
(``uko:generated``, ``uko:vendored``), so that it never outranks source (:mod:`acms.assembly.copies`)
and is never chosen as the canonical one of a set of copies (:mod:`acms.ingest.copies`).

The rules are git's (``gitattributes(5)``), so a project reads the same whether or not it is a checkout:

- every ``.gitattributes`` from the root down, then ``.git/info/attributes``; within a file, later
  lines win; a deeper file wins over a shallower one for the paths below it;
- a pattern follows ``.gitignore`` matching, except that a negative pattern (``!x``) is ignored and a
  pattern that matches a directory does not reach the files inside it (``dist/`` marks nothing, ``dist/**``
  marks everything under ``dist``);
- ``attr`` and ``attr=true`` set the mark, ``-attr`` and ``attr=false`` clear it (an override of a
  broader line, or of acms's own guess), ``!attr`` makes it unspecified again; other values are
  unspecified, as linguist treats them. ``[attr]`` macro lines are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

__all__ = ["MARKS", "AttributeRule", "Attributes", "marks_for", "parse_attributes"]

# linguist attribute -> the mark acms records
MARKS = {"linguist-generated": "generated", "linguist-vendored": "vendored"}
_UNSPECIFIED = object()


@dataclass(frozen=True)
class AttributeRule:
    """One line of an attributes file that names a linguist mark: its pattern, the folder of the file
    it came from ("" or "a/b/") and, per mark, True (set), False (cleared) or None (made unspecified)."""

    prefix: str
    pattern: GitIgnoreSpecPattern
    values: tuple[tuple[str, bool | None], ...]
    text: str = ""  # the pattern as written

    def may_match_below(self, folder: str) -> bool:
        """Whether the rule could match a file under ``folder`` ("a/vendor", no trailing slash): its
        pattern's literal start (up to the first wildcard) and the folder do not part ways."""
        if not (folder + "/").startswith(self.prefix) and not self.prefix.startswith(folder + "/"):
            return False
        pattern = self.text.lstrip("/")
        if "/" not in pattern.rstrip("/"):
            return True  # a bare name matches at any depth
        literal = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
        here = (folder + "/")[len(self.prefix):] if (folder + "/").startswith(self.prefix) else ""
        return literal.startswith(here) or here.startswith(literal)

    def matches(self, path: str) -> bool:
        """Whether the rule applies to the file ``path`` (relative to the project root)."""
        if not path.startswith(self.prefix):
            return False
        regex = self.pattern.regex
        found = regex.match(path[len(self.prefix):]) if regex is not None else None
        # ``ps_d`` is set when the pattern matched a folder above the file: git does not apply
        # attributes of a folder to its contents.
        return found is not None and not found.groupdict().get("ps_d")


_QUOTED = re.compile(r'^"((?:[^"\\]|\\.)*)"\s*(.*)$')


def _split(line: str) -> tuple[str, list[str]] | None:
    """A line's pattern and attribute words (a pattern may be C-quoted, ``"a b.txt" attr``)."""
    quoted = _QUOTED.match(line)
    if quoted:
        pattern = bytes(quoted.group(1), "utf-8").decode("unicode_escape")
        return pattern, quoted.group(2).split()
    words = line.split()
    return (words[0], words[1:]) if words else None


def _value(word: str) -> tuple[str, object]:
    """An attribute word's name and value: True, False, None (``!attr``) or unspecified (another value)."""
    if word.startswith("-"):
        return word[1:], False
    if word.startswith("!"):
        return word[1:], None
    name, eq, value = word.partition("=")
    if not eq or value == "true":
        return name, True
    return name, False if value == "false" else _UNSPECIFIED


def parse_attributes(text: str, prefix: str = "") -> list[AttributeRule]:
    """The linguist rules of one attributes file whose folder is ``prefix`` ("" or "a/b/")."""
    rules: list[AttributeRule] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("[attr]"):
            continue
        split = _split(line)
        if split is None:
            continue
        pattern, words = split
        if pattern.startswith("!"):  # negative patterns are forbidden in attributes files
            continue
        values: list[tuple[str, bool | None]] = []
        for word in words:
            name, value = _value(word)
            if name in MARKS and value is not _UNSPECIFIED:
                values.append((MARKS[name], value))  # type: ignore[arg-type]
        if values:
            rules.append(AttributeRule(prefix, GitIgnoreSpecPattern(pattern), tuple(values), pattern))
    return rules


class Attributes:
    """A project's attributes files, each read once when first needed: the marks of a path, and whether a
    folder acms skips as vendored holds files the attributes call not vendored (``-linguist-vendored``,
    GitHub then counts them as source, and acms lists them)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._by_folder: dict[str, list[AttributeRule]] = {}
        self._info: list[AttributeRule] | None = None

    def _read(self, file: Path, prefix: str) -> list[AttributeRule]:
        try:
            return parse_attributes(file.read_text(encoding="utf-8", errors="replace"), prefix)
        except OSError:
            return []

    def _folder(self, prefix: str) -> list[AttributeRule]:
        if prefix not in self._by_folder:
            file = self.root / prefix / ".gitattributes"
            self._by_folder[prefix] = self._read(file, prefix) if file.is_file() else []
        return self._by_folder[prefix]

    def _rules_for(self, path: str) -> list[AttributeRule]:
        """The rules that can apply to ``path``, lowest precedence first."""
        parts = path.split("/")[:-1]
        rules = list(self._folder(""))
        for depth in range(1, len(parts) + 1):
            rules += self._folder("/".join(parts[:depth]) + "/")
        if self._info is None:
            info = self.root / ".git" / "info" / "attributes"
            self._info = self._read(info, "") if info.is_file() else []
        return rules + self._info

    def marks(self, path: str) -> dict[str, bool]:
        """The marks some rule specifies for the file ``path`` (later and deeper rules win)."""
        found: dict[str, bool | None] = {}
        for rule in self._rules_for(path):
            if rule.matches(path):
                found.update(rule.values)
        return {mark: value for mark, value in found.items() if value is not None}

    def may_unvendor(self, folder: str) -> bool:
        """Whether some rule clears ``vendored`` for a file that may lie under ``folder`` (then the
        folder is walked and its files listed when their marks say not vendored)."""
        return any(("vendored", False) in rule.values and rule.may_match_below(folder)
                   for rule in self._rules_for(folder + "/.gitattributes") + self._folder(folder + "/"))


def marks_for(root: Path, paths: list[str]) -> dict[str, dict[str, bool]]:
    """Per listed path with a specified mark: ``{"generated": bool, "vendored": bool}`` (only the
    marks some rule specifies)."""
    attributes = Attributes(root)
    out: dict[str, dict[str, bool]] = {}
    ruled: dict[str, bool] = {}  # folder -> whether any rule can apply to its files (most: none)
    for path in paths:
        folder = path.rpartition("/")[0]
        if folder not in ruled:
            ruled[folder] = bool(attributes._rules_for(path))
        if ruled[folder] and (found := attributes.marks(path)):
            out[path] = found
    return out
