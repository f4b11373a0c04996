"""The languages read with tree-sitter: ``languages/languages.toml`` (one line each) and ``languages/NAME.scm``.

Adding a language is adding its capture file and its line; nothing here or in the extractor names a
language. A grammar is a PyPI wheel (``tree_sitter_go``...) that pyproject.toml depends on, loaded on
first use; a grammar that is missing, built for another tree-sitter ABI, or a capture file its node
types reject makes that language unavailable (its files are cut into text windows, as before), never
a failed index: ``problem`` says why.
"""

from __future__ import annotations

import importlib
import threading
import tomllib
from dataclasses import dataclass
from functools import cache
from typing import Any

from acms import resources

__all__ = ["LanguageSpec", "extension_map", "languages", "loaded", "problem"]

IMPORT_STYLES = ("path", "relative")


@dataclass(frozen=True)
class LanguageSpec:
    """One line of languages.toml."""

    name: str
    grammar: str  # "module:function"
    extensions: tuple[str, ...]
    imports: str = "path"  # how an import string names a project file (IMPORT_STYLES)
    queries: str = ""  # the .scm file's stem (default: the language's own name)
    family: str = ""  # languages whose files import and call each other (default: the language itself)

    @property
    def kin(self) -> str:
        return self.family or self.name

    @property
    def query_file(self) -> str:
        return f"{self.queries or self.name}.scm"


@cache
def languages() -> dict[str, LanguageSpec]:
    """Every configured language by name (the shipped languages.toml, read once)."""
    data = tomllib.loads(resources.read_text("languages", "languages.toml"))
    out: dict[str, LanguageSpec] = {}
    for name, entry in data.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("grammar"), str):
            raise RuntimeError(f"languages.toml: {name} needs grammar = \"module:function\"")
        imports = entry.get("imports", "path")
        if imports not in IMPORT_STYLES:
            raise RuntimeError(f"languages.toml: {name}: imports must be one of {', '.join(IMPORT_STYLES)}")
        out[name] = LanguageSpec(name, entry["grammar"], tuple(e.lower() for e in entry.get("extensions", ())),
                                 imports, entry.get("queries", ""), entry.get("family", ""))
    return out


@cache
def extension_map() -> dict[str, str]:
    """File ending -> language, for the walker's endings it does not know itself."""
    return {ext: spec.name for spec in languages().values() for ext in spec.extensions}


@dataclass(frozen=True)
class Loaded:
    """A language ready to parse: its grammar and compiled captures (both immutable, shared by threads)."""

    spec: LanguageSpec
    language: Any  # tree_sitter.Language
    query: Any  # tree_sitter.Query


_lock = threading.Lock()
_loaded: dict[str, Loaded | None] = {}
_problems: dict[str, str] = {}


def loaded(name: str) -> Loaded | None:
    """The grammar and captures of ``name``, or None (not configured, or unavailable: ``problem``)."""
    if name in _loaded:
        return _loaded[name]
    with _lock:
        if name not in _loaded:
            _loaded[name] = _load(name)
    return _loaded[name]


def problem(name: str) -> str | None:
    """Why ``name`` cannot be read with tree-sitter here, once ``loaded`` was asked for it."""
    return _problems.get(name)


def _load(name: str) -> Loaded | None:
    spec = languages().get(name)
    if spec is None:
        return None
    try:
        from tree_sitter import Language, Query

        module, _, function = spec.grammar.partition(":")
        grammar = Language(getattr(importlib.import_module(module), function)())
        query = Query(grammar, resources.read_text("languages", spec.query_file))
    except Exception as exc:  # not installed, another ABI, a capture file the grammar rejects
        _problems[name] = f"{type(exc).__name__}: {exc}"
        return None
    return Loaded(spec, grammar, query)


_local = threading.local()


def parser(lang: Loaded) -> Any:
    """One parser per thread and language (a tree-sitter parser is not thread-safe)."""
    cache_: dict[str, Any] | None = getattr(_local, "parsers", None)
    if cache_ is None:
        cache_ = _local.parsers = {}
    found = cache_.get(lang.spec.name)
    if found is None:
        from tree_sitter import Parser

        found = cache_[lang.spec.name] = Parser(lang.language)
    return found
