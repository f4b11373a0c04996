"""Definitions and their line ranges for any language acms reads, by file name: what history maps
diff hunks onto (``temporal.git_history``). Python through ``ast`` (``python_extractor.symbol_spans``),
the languages of languages/languages.toml through tree-sitter; the qualified names are the ones
ingest gives, so a hunk lands on the entity the index holds."""

from __future__ import annotations

from collections.abc import Collection

from acms.ingest.python_extractor import Span, module_name_for, symbol_spans
from acms.ingest.ts_extractor import module_name, tree_sitter_spans
from acms.ingest.ts_languages import languages
from acms.ingest.walker import language_for

__all__ = ["Span", "has_spans", "spans_for"]


def has_spans(path: str) -> bool:
    """Whether acms finds definitions in this file (its language has a symbol extractor)."""
    language = language_for(path)
    return language == "python" or language in languages()


def spans_for(path: str, text: str, known_paths: Collection[str]) -> list[Span]:
    """The file's classes, functions and methods (not its module); empty for other files."""
    language = language_for(path)
    paths = set(known_paths) | {path}
    if language == "python":
        return symbol_spans(path, text, module_name_for(path, paths))
    if language in languages():
        return tree_sitter_spans(path, text, language, module_name(path, paths))
    return []
