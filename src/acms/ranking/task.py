"""The words of a task the first stage matches against code.

A change request talks about itself: "Fixed a bug in EnvironHeaders", "fixes issue with ports". Those
words name the kind of change, not the code that changes, yet they match code that says them
(``InternetExplorerFix.run_fixed``, a comment "work around a bug in …") and outrank the file the task
is about. They are dropped when written as plain words; an identifier that contains them
(``fix_headers``, ``fixHeaders``, ``bug.id``, ``fix()``) is code and stays.

Dev set, file MRR of httpx, werkzeug, jinja, attrs, gin, axios / all, first stage alone: without
.759 .666 .622 .802 .777 .674 / .706; with these words dropped .759 .705 .649 .802 .777 .674 / .720.
Adding "now also properly correctly instead should possible way case" (.716) or "added support"
(.715) did not help further; symbol R@10 of the four Python repositories was .578 → .575 (one
werkzeug query lost one of its two symbols).
"""

from __future__ import annotations

import re

__all__ = ["CHANGE_WORDS", "code_terms", "named_symbols", "without_vcs_metadata"]

CHANGE_WORDS = frozenset("fix fixed fixes fixing bug bugs bugfix issue issues".split())

# A plain word: letters only, not part of an identifier (no word character, dot or call around it;
# a full stop that ends a sentence is not an attribute access).
_PLAIN = re.compile(r"(?<![\w.])[A-Za-z]+(?!\w|\(|\.\w)")


# What version control appends to a message: hg-git's "--HG--" block (branch, rebase source) to the
# end, git-svn's "git-svn-id:" line. Words such as "branch", "trunk" and "extra" then matched code.
_VCS_METADATA = re.compile(r"(?s:^--HG--$.*)|^git-svn-id: [^\n]*$", re.M)


def without_vcs_metadata(task: str) -> str:
    """``task`` without the lines a version control tool added to a commit message."""
    return _VCS_METADATA.sub("", task)


def code_terms(task: str) -> str:
    """``task`` without the plain words that describe a change rather than code (nor VCS metadata)."""
    return _PLAIN.sub(lambda m: "" if m.group(0).lower() in CHANGE_WORDS else m.group(0), without_vcs_metadata(task))


# A word as a task writes it: in backticks, or a (dotted) identifier, maybe called.
_WRITTEN = re.compile(r"`([^`\n]+)`|([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(\(\))?")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CAMEL = re.compile(r"[a-z0-9][A-Z]")
MIN_NAMED = 3  # shorter names ("io", "os") are too common to name one symbol


def _is_code(word: str, quoted: bool, called: bool) -> bool:
    """Written as code: quoted, called, dotted, snake_case, camelCase or a dunder; a plain word
    ("cache", "Map" unquoted) is not a name, it is matched as a word."""
    return quoted or called or "." in word or "_" in word.strip("_") or bool(_CAMEL.search(word)) or (
        word.startswith("__") and word.endswith("__") and len(word) > 4)


def named_symbols(task: str) -> frozenset[str]:
    """The symbols ``task`` names as code (``Context.Status``, `` `Map` ``, ``make_runserver``,
    ``werkzeug.BaseResponse.freeze``): each written name, and the tails of two parts or more of a
    dotted one (``BaseResponse.freeze``), since a task may qualify a name with its package and the
    index knows it by its module. A symbol whose qualified name ends with one of them is named.

    Sphinx roles (``:class:`~werkzeug.Map```) and a trailing call (``from_file()``) are cut off.
    """
    out: set[str] = set()
    for m in _WRITTEN.finditer(without_vcs_metadata(task)):
        quoted = m.group(1) is not None
        word = (m.group(1) or m.group(2)).strip().rsplit(":", 1)[-1].lstrip("~").removesuffix("()")
        if not _IDENTIFIER.fullmatch(word) or not _is_code(word, quoted, m.group(3) is not None):
            continue
        parts = word.split(".")
        out.update(".".join(parts[k:]) for k in range(len(parts) - 1))
        out.add(word)
    return frozenset(n for n in out if len(n) >= MIN_NAMED)
