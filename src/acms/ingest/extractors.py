"""Language extractors by language name (``walker.language_for`` names a file's language).

An extractor turns one source file into its symbols or sections (an ``Extraction``) and the fragments
cut from them. The built-in ones register through ``Registry.register`` (:mod:`acms.registry`) like any
other; a language registered twice is a ``ConfigError``, never a silent replacement. A file whose language has
no extractor is cut into text windows (``window_lines``).

A file larger than ``PARSE_MAX_BYTES`` is not parsed, whatever ``max_file_bytes`` lets in: a parser's
tree costs hundreds of times the file (an 8 MB generated Python file took 2.2 GB and 161 s to index,
and an extraction worker went past 10 GB on larger ones). It is cut into text windows of at most
``WINDOW_MAX_CHARS`` characters instead, and says so (its ``parse_error``: the report's "indexed as
text" line and ``uko:parseError``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from acms.ingest.doc_extractor import extract_markdown, extract_rst
from acms.ingest.fragments import FragmentSpec, code_fragments, doc_fragments, window_fragments
from acms.ingest.model import Extraction, SourceFile
from acms.ingest.python_extractor import extract_python, module_name_for
from acms.ingest.python_fallback import extract_python_fallback
from acms.ingest.ts_extractor import extract_tree_sitter, module_name
from acms.ingest.ts_languages import languages
from acms.registry import Registry

__all__ = ["EXTRACTORS", "PARSE_MAX_BYTES", "WINDOW_MAX_CHARS", "ExtractorSpec", "builtin_extractors", "extract",
           "python_extraction"]

PARSE_MAX_BYTES = 1 << 20  # larger files are windowed, not parsed (4x the default max_file_bytes)
WINDOW_MAX_CHARS = 1 << 16  # a large file's window (and any line of it) holds at most this many characters

Extracted = tuple[Extraction | None, list[FragmentSpec]]
Extract = Callable[[SourceFile, set[str], int], Extracted]  # source, every listed path, window lines


@dataclass(frozen=True)
class ExtractorSpec:
    language: str
    summary: str
    extract: Extract


def python_extraction(path: str, text: str, all_paths: set[str]) -> Extraction:
    """A Python file's extraction: ast's; when ast rejects it (Python 2, a syntax error), tree-sitter's
    definitions if it finds any, else ast's, with its parse error."""
    ext = extract_python(path, text, module_name_for(path, all_paths))
    if ext.parse_error is None:
        return ext
    return extract_python_fallback(path, text, ext.module or "") or ext


def _python(source: SourceFile, all_paths: set[str], window: int) -> Extracted:
    ext = python_extraction(source.path, source.text, all_paths)
    return ext, (window_fragments(source, window) if ext.parse_error else code_fragments(source, ext))


def _markdown(source: SourceFile, all_paths: set[str], window: int) -> Extracted:
    ext = extract_markdown(source.path, source.text)
    return ext, doc_fragments(source, ext, window)


def _rst(source: SourceFile, all_paths: set[str], window: int) -> Extracted:
    ext = extract_rst(source.path, source.text)
    return ext, doc_fragments(source, ext, window)


def _tree_sitter(source: SourceFile, all_paths: set[str], window: int) -> Extracted:
    """Any language of languages/languages.toml; text windows when its grammar cannot load here."""
    ext = extract_tree_sitter(source.path, source.text, source.language, module_name(source.path, all_paths))
    if ext is None:
        return None, window_fragments(source, window)
    return ext, code_fragments(source, ext, gaps=window)  # top-level code outside definitions too


BUILTIN_EXTRACTORS = (
    ExtractorSpec("python", "ast symbols (tree-sitter when ast rejects the file), calls, imports", _python),
    ExtractorSpec("markdown", "sections by heading", _markdown),
    ExtractorSpec("rst", "sections by title", _rst),
    *(ExtractorSpec(name, f"tree-sitter ({spec.query_file}): types, functions, methods, calls, imports", _tree_sitter)
      for name, spec in languages().items()),
)


def builtin_extractors() -> Registry[ExtractorSpec]:
    return Registry.of_builtins("extractor for language", {spec.language: spec for spec in BUILTIN_EXTRACTORS})


EXTRACTORS = builtin_extractors()


def extract(source: SourceFile, all_paths: set[str], window: int,
            registry: Mapping[str, ExtractorSpec] = EXTRACTORS) -> Extracted:
    """The file's extraction and fragments by its language's extractor; text windows without one, or
    when the file is too large to parse (bounded windows, with the reason)."""
    if source.size > PARSE_MAX_BYTES:
        note = (f"not parsed: {source.size / 2**20:.1f} MB is over the {PARSE_MAX_BYTES >> 20} MB a file may "
                f"have to be parsed; indexed as text windows")
        ext = Extraction(language=source.language, parse_error=note) if source.language in registry else None
        return ext, window_fragments(source, window, WINDOW_MAX_CHARS)
    spec = registry.get(source.language)
    if spec is None:
        return None, window_fragments(source, window)
    return spec.extract(source, all_paths, window)
