"""Which unchanged files must be linked again because the names around them changed.

A file's edges depend on its own text and on which qualified names exist elsewhere: when a run adds,
removes or renames a symbol (or a file: its module), an unchanged file that calls, imports or
inherits it may now resolve to another target, or to one it could not reach before. A first index
would link it anew, so an incremental run must too. Which files could be affected is told by their
text: a reference to a symbol names it, so a file that mentions a moved name as a whole word is
extracted and linked again (more than needed at worst, never fewer; a body edit moves no name and
costs nothing here); a Python file only when its imports can reach the module that moved it
(:func:`python_reach`: a new module defining ``run`` is no news to every file that calls a ``run``).
Only files a resolver links by name are looked at
(:func:`acms.ingest.resolve.links_by_name`): a document or a configuration file that mentions the name
has no link that could change. Two more kinds of unchanged file are read again: the module twins of a
file the run reads (their edges share one entity), and the files whose module an added or removed
``__init__`` renames.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet
from posixpath import basename, dirname

from pyoxigraph import Literal

from acms.ingest.kept import ByFileVersion
from acms.ingest.model import Extraction
from acms.ingest.python_extractor import INIT_FILES, module_name_for
from acms.ingest.python_extractor import module_names as names_of_modules
from acms.ingest.ts_languages import languages
from acms.ingest.walker import ListedFile, SkipReason, language_for, read_source
from acms.sparql import catalog
from acms.store.protocol import GraphStore

__all__ = ["Texts", "Words", "mentioning", "module_names", "module_twins", "moved_names", "python_reach", "reaches_python_names",
           "renamed_modules"]


_SEPARATORS = re.compile(r"[./:\\#]+")
_WORDS_AT_ONCE = 512  # names per alternation: one regex over thousands of names compiles slowly
_WORD = re.compile(r"[\w$]+")  # a word: what ``(?<![\w$])`` and ``(?![\w$])`` bound on each side
FIND_AT_MOST = 32  # up to this many names, each is looked for with str.find; past it, a text's words are read once


def short_name(qualname: str) -> str:
    """The last segment of a qualified name (``pkg.mod.Class.method`` -> ``method``, ``src/utils`` -> ``utils``)."""
    parts = [p for p in _SEPARATORS.split(qualname) if p]
    return parts[-1] if parts else ""


def moved_names(before: Collection[str], after: Collection[str]) -> set[str]:
    """Short names of the qualified names only one side has (added, removed, renamed, moved)."""
    return {name for qn in set(before) ^ set(after) if (name := short_name(qn))}


class Texts:
    """The Python files' texts a run's relinking read, kept for its next look at them up to ``budget``
    characters (beyond it, read again from disk: a large project's sources are not all held at once).

    A long-lived process (a server refreshing after every save) also keeps, across runs, the texts of
    files whose size and mtime stay (``PROCESS_TEXTS`` characters, least recently read first out): a
    save that adds or removes a name has every file that could link to it read again, ~1,900 files of
    the standard library, ~0.1-0.25 s of each such refresh. A file written within the racy window is
    not kept (an edit within the clock's tick could keep its size and mtime)."""

    def __init__(self, budget: int = 64 << 20) -> None:
        self._kept: dict[str, str | None] = {}
        self._left = budget

    def get(self, f: ListedFile, max_bytes: int | None) -> str | None:
        """The file's text; None when it cannot be read as text any more."""
        if f.path in self._kept:
            return self._kept[f.path]
        key = _process_texts.key(f, max_bytes)
        text = _process_texts.get(key, None)
        if text is None:
            got = read_source(f, max_bytes)
            if not isinstance(got, SkipReason):
                text = got.text
                _process_texts.keep(key, text, f, got.size)
        if language_for(f.path) == "python" and (text is None or len(text) <= self._left):
            self._kept[f.path] = text
            self._left -= len(text or "")
        return text


PROCESS_TEXTS = 64 << 20  # characters of unchanged files' texts a long-lived process keeps for relinking
_process_texts: ByFileVersion[str] = ByFileVersion(PROCESS_TEXTS, len)


class Words:
    r"""A test for any of ``names`` as a whole word: where ``(?<![\w$])(?:names)(?![\w$])`` would match,
    without that regex, which tries its alternation at every character of a text (a new module
    defining ``run``, ``get``, ``main`` and ``Config``: ~0.65 s over the standard library's Python
    files; 500 names: ~10 s). A name made of word characters matches where it is a whole word of the
    text: a few are found with ``str.find``, more against the text's words read once. Other names (a
    Markdown heading's ``a-b``) keep the regex."""

    def __init__(self, names: Collection[str]) -> None:
        ordered = sorted(names)
        self._plain = [n for n in ordered if _WORD.fullmatch(n)]
        self._set = frozenset(self._plain)
        odd = [n for n in ordered if not _WORD.fullmatch(n)]
        self._patterns = [re.compile(r"(?<![\w$])(?:" + "|".join(map(re.escape, odd[i : i + _WORDS_AT_ONCE])) + r")(?![\w$])")
                          for i in range(0, len(odd), _WORDS_AT_ONCE)]

    def __bool__(self) -> bool:
        return bool(self._plain or self._patterns)

    def found_in(self, text: str) -> bool:
        if self._plain:
            if len(self._plain) <= FIND_AT_MOST:
                if any(_whole_word_at(text, n) for n in self._plain):
                    return True
            elif not self._set.isdisjoint(_WORD.findall(text)):
                return True
        return any(p.search(text) for p in self._patterns)


def _whole_word_at(text: str, name: str) -> bool:
    r"""Whether ``name`` (word characters only) occurs in ``text`` with no word character or ``$`` on
    either side (``\w`` is ``str.isalnum()`` or ``_``, as ``re`` reads it)."""
    size, i = len(name), text.find(name)
    while i >= 0:
        before = text[i - 1] if i else " "
        j = i + size
        after = text[j] if j < len(text) else " "
        if not (before.isalnum() or before in "_$") and not (after.isalnum() or after in "_$"):
            return True
        i = text.find(name, i + 1)
    return False


def mentioning(files: Iterable[ListedFile], names: Collection[str], max_bytes: int | None = None,
               texts: Texts | None = None) -> list[str]:
    """Paths of the files whose text mentions one of ``names`` as a whole word, and of those that cannot
    be read as text any more (the caller's read skips them with their reason). ``texts``: where the
    files' texts are read, and kept for a later look."""
    words = Words(names)
    if not words:
        return []
    found = []
    for f in files:
        text = _text(f, max_bytes, texts)
        if text is None or words.found_in(text):
            found.append(f.path)
    return found


def python_reach(files: Iterable[ListedFile], modules: Collection[str], all_paths: Collection[str],
                 max_bytes: int | None = None, texts: Texts | None = None) -> set[str]:
    """Paths of the Python files among ``files`` whose names may resolve through one of ``modules``: only
    their links can change when those modules' names move, however many files mention a moved name.

    Python's resolver follows a file's own scopes, its imports, and from there other modules' imports and
    classes' bases; a name it resolves into module ``M`` is reached through a file that names ``M``: an
    import of it (``import a.M``, ``from .M import x``, ``from a import M``, ``from M import *``) holds
    its last part, and only a relative import reaches a module unnamed (``from .. import x``), one of the
    file's own packages. So a file reaches ``M`` when its text mentions ``M``'s last part as a word, when
    ``M`` is one of its packages, or when it reaches a module that does (a package re-exporting from
    ``M``): the fixpoint of that, over names, never fewer files than resolution passes through. A new
    file defining ``run``, ``get`` and ``Config`` in the standard library relinked 1,212 files that
    mention those words (171 s); none of them names its module."""
    paths = all_paths if isinstance(all_paths, AbstractSet) else set(all_paths)
    python = [f for f in files if language_for(f.path) == "python"]
    named = names_of_modules([f.path for f in python], paths)
    pending = {f.path: (f, named[f.path]) for f in python}
    through: set[str] = set()  # modules reached (resolution may pass through them)
    leaves_seen: set[str] = set()
    reached: set[str] = set()
    new = set(modules)
    while new:
        through |= new
        leaves = {leaf for m in new if (leaf := short_name(m))} - leaves_seen
        leaves_seen |= leaves
        words = Words(leaves)
        new = set()
        for path, (f, module) in list(pending.items()):
            packages = module.split(".")[:-1]
            if any(".".join(packages[: i + 1]) in through for i in range(len(packages))):
                hit = True
            elif not words:
                continue
            else:
                text = _text(f, max_bytes, texts)
                hit = text is None or words.found_in(text)
            if hit:
                reached.add(path)
                del pending[path]
                if module not in through:
                    new.add(module)
    return reached


def reaches_python_names(qualnames: Iterable[str], paths: Iterable[str]) -> bool:
    """Whether a tree-sitter file's links can reach one of ``qualnames`` (a Python file's): only where one
    begins with the module name of a tree-sitter code file among ``paths`` (both languages name modules
    by path; a tree-sitter file links within its family's modules)."""
    prefixes = {".".join(parts[:i]) for qn in qualnames if (parts := qn.split(".")) for i in range(1, len(parts) + 1)}
    if not prefixes:
        return False
    from acms.ingest.ts_extractor import module_name  # tree-sitter's, imported only when a run relinks

    tree_sitter = languages()
    every = paths if isinstance(paths, AbstractSet) else set(paths)
    return any(module_name(p, every) in prefixes for p in every if language_for(p) in tree_sitter)


def _text(f: ListedFile, max_bytes: int | None, texts: Texts | None) -> str | None:
    """The file's text (None: not readable as text any more)."""
    return (texts or Texts(budget=0)).get(f, max_bytes)


def module_names(paths: Iterable[str], extractions: Mapping[str, Extraction], before: set[str]) -> set[str]:
    """The module names the files define now (their extraction's) and defined before (what their path
    gave among ``before``, the paths the run started from: a removed file's, a file an ``__init__``
    renames)."""
    from acms.ingest.ts_extractor import module_name  # tree-sitter's, imported only when a run relinks

    out: set[str] = set()
    tree_sitter = languages()
    for path in paths:
        ext = extractions.get(path)
        if ext is not None and ext.module:
            out.add(ext.module)
        language = language_for(path)
        if language == "python":
            out.add(module_name_for(path, before))
        elif language in tree_sitter:
            out.add(module_name(path, before))
    return out


def module_twins(store: GraphStore, names: Collection[str]) -> set[str]:
    """Paths of the files that define a module of one of ``names``: with those of the files a run reads or
    removes (``module_names``), their twins, such as a ``.py`` and its ``.pyi`` stub, or ``tests/test_x.py``
    and ``tests/contrib/test_x.py`` without ``__init__``. The edges of all of them start from one entity
    (the greatest IRI takes a name two share): a run that replaced one without the others would lose the
    edges their code put there."""
    if not names:
        return set()
    rows = store.select(catalog.text("ingest/modules-named"), {"name": [Literal(n) for n in sorted(names)]})
    return {r["path"].value for r in rows}


def renamed_modules(added: list[str], removed: list[str], stored: Iterable[str], before: set[str],
                    all_paths: set[str]) -> set[str]:
    """The stored Python files whose module name an added or removed ``__init__`` changes (a folder that
    becomes a package, or stops being one, renames the modules under it): to be read again as if edited,
    their entities' names and IRIs move. ``before``: the paths the run started from; ``all_paths``: now."""
    inits = [p for p in [*added, *removed] if basename(p) in INIT_FILES]
    if not inits:
        return set()
    folders = tuple(f"{dirname(p)}/" if dirname(p) else "" for p in inits)
    return {p for p in stored if p in all_paths and p.startswith(folders) and language_for(p) == "python"
            and module_name_for(p, before) != module_name_for(p, all_paths)}
