"""Raw Python names to project qualnames: the second pass, once every file has been extracted.

Resolution is static and best-effort: it follows Python's scoping (local definitions, module
globals, imports), ``self``/``cls`` to the enclosing class and its bases, and re-exports through
package ``__init__`` modules; anything it cannot pin to a project symbol is dropped rather than guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from collections.abc import Set as AbstractSet

from acms.ingest.model import CodeSymbol, Edge, Extraction, SymbolKind

_MAX_DEPTH = 40  # nested re-export/inheritance hops; far below the recursion limit


def resolve_edges(extractions: Mapping[str, Extraction], known: Collection[str],
                  context: Callable[[str], Extraction | None] | None = None) -> list[Edge]:
    """Imports, references, calls and inherits edges whose targets are all in ``known``.

    ``known`` may be a mapping qualname -> kind (``SymbolKind`` or its value); that tells modules
    from other symbols for names indexed outside ``extractions``. With a plain collection such
    names are taken as non-modules.

    ``context``: module name -> the extraction of a project module outside ``extractions`` (None when
    there is none), asked for when a lookup passes through it. A run that extracts only some files (a
    refresh) resolves their names as a first index would: what another module's imports bind (``from a
    import X`` where ``a/__init__.py`` imports ``X`` from ``b.c``) and its classes' bases (a method
    inherited from a class defined elsewhere) are read from that module, which has no edges of its own
    made here. Without it an edited file lost its calls to every re-exported name.
    """
    return _Resolver(extractions, known, context).edges()


class _Resolver:
    def __init__(self, extractions: Mapping[str, Extraction], known: Collection[str],
                 context: Callable[[str], Extraction | None] | None = None) -> None:
        self.known: Collection[str] = known if isinstance(known, (AbstractSet, Mapping)) else set(known)
        self.exts = [
            ext
            for _, ext in sorted(extractions.items(), key=lambda item: item[0])
            if _resolvable(ext)
        ]
        self.symbols: dict[str, CodeSymbol] = {}
        self.module_of: dict[str, str] = {}
        self.aliases: dict[str, dict[str, list[str]]] = {}  # module -> local name -> dotted targets
        self.stars: dict[str, list[str]] = {}  # module -> star-imported modules
        self.context = context
        self.asked: set[str] = {ext.module or "" for ext in self.exts}  # modules read, or asked for in context
        for ext in self.exts:
            self._add(ext)
        self.base_cache: dict[str, list[str]] = {}
        self.memo: dict[str, str | None] = {}
        self.depth = 0

    def _add(self, ext: Extraction) -> None:
        """The module's symbols, and the names its imports bind, for lookups."""
        module = ext.module or ""
        for sym in ext.symbols:
            self.symbols.setdefault(sym.qualname, sym)
            self.module_of.setdefault(sym.qualname, module)
        names = self.aliases.setdefault(module, {})
        stars = self.stars.setdefault(module, [])
        for imp in ext.imports:
            if imp.name == "*":
                stars.append(imp.module)
                continue
            if imp.name is not None:
                target = f"{imp.module}.{imp.name}"
            elif imp.alias == imp.module.split(".")[0]:
                target = imp.alias  # "import a.b" binds "a", the top package
            else:
                target = imp.module
            names.setdefault(imp.alias, [])
            if target not in names[imp.alias]:
                names[imp.alias].append(target)

    def _read_context(self, dotted: str) -> None:
        """Read, from ``context``, the project modules ``dotted`` passes through that are not read yet."""
        if self.context is None:
            return
        parts = dotted.split(".")
        for i in range(1, len(parts)):
            module = ".".join(parts[:i])
            if module not in self.asked:
                self.asked.add(module)
                ext = self.context(module)
                if ext is not None and _resolvable(ext) and ext.module == module:
                    self._add(ext)

    def edges(self) -> list[Edge]:
        out: set[Edge] = set()
        for ext in self.exts:
            module = ext.module or ""
            for source, kind, target in self._import_edges(ext, module):
                out.add(Edge(source, kind, target))
            for sym in ext.symbols:
                for raw in sym.calls:
                    target = self.resolve(raw, sym, module)
                    if target is not None:
                        out.add(Edge(sym.qualname, "calls", target))
                if sym.kind is SymbolKind.CLASS:
                    for base in self.bases(sym.qualname):
                        out.add(Edge(sym.qualname, "inherits", base))
        return sorted((e for e in out if e.source != e.target), key=lambda e: (e.source, e.kind, e.target))

    def _import_edges(self, ext: Extraction, module: str) -> Iterator[tuple[str, str, str]]:
        for imp in ext.imports:
            if imp.name is None or imp.name == "*":
                if imp.module in self.known:
                    yield module, "imports", imp.module
                continue
            full = f"{imp.module}.{imp.name}"
            if full in self.known and self.is_module(full):
                yield module, "imports", full
                continue
            if imp.module in self.known:
                yield module, "imports", imp.module
            target = self.lookup(full)
            if target is not None:
                if self.is_module(target):
                    yield module, "imports", target
                else:
                    yield module, "references", target

    def is_module(self, qualname: str) -> bool:
        sym = self.symbols.get(qualname)
        if sym is not None:
            return sym.kind is SymbolKind.MODULE
        if isinstance(self.known, Mapping):
            return self.known.get(qualname) == SymbolKind.MODULE.value
        return False

    def resolve(self, raw: str, scope: CodeSymbol, module: str) -> str | None:
        """The project qualname ``raw`` names when written in ``scope``'s own code, if any."""
        head, _, rest = raw.partition(".")
        if head in ("self", "cls"):
            cls = self._enclosing_class(scope)
            return self.lookup(f"{cls.qualname}.{rest}") if cls is not None and rest else None
        suffix = f".{rest}" if rest else ""
        for prefix in self._bindings(head, scope, module):
            target = self.lookup(prefix + suffix)
            if target is not None:
                return target
        return None

    def _bindings(self, head: str, scope: CodeSymbol, module: str) -> Iterator[str]:
        """Candidate qualnames for a bare name, in Python's lookup order."""
        sym: CodeSymbol | None = scope
        while sym is not None and sym.kind is not SymbolKind.MODULE:
            # A class body's names are not visible from functions nested in it.
            if sym is scope or sym.kind is not SymbolKind.CLASS:
                local = f"{sym.qualname}.{head}"
                if local in self.symbols or local in self.known:
                    yield local
            sym = self.symbols.get(sym.parent) if sym.parent else None
        top = f"{module}.{head}"
        if top in self.symbols or top in self.known:
            yield top
        yield from self.aliases.get(module, {}).get(head, [])
        for star in self.stars.get(module, []):
            yield f"{star}.{head}"

    def _enclosing_class(self, scope: CodeSymbol) -> CodeSymbol | None:
        sym: CodeSymbol | None = scope
        while sym is not None:
            if sym.kind is SymbolKind.CLASS:
                return sym
            sym = self.symbols.get(sym.parent) if sym.parent else None
        return None

    def lookup(self, dotted: str) -> str | None:
        """``dotted`` if known, else through re-exports of extracted modules and members of base classes.

        Memoised: star-imports re-exporting star-imports (asyncio's ``__init__``) branch widely,
        and cycles between modules are common; a name being resolved counts as unresolved.
        """
        if dotted in self.known:
            return dotted
        if dotted in self.memo:
            return self.memo[dotted]
        self.memo[dotted] = None
        found = self._follow(dotted) if self.depth < _MAX_DEPTH else None
        self.memo[dotted] = found
        return found

    def _follow(self, dotted: str) -> str | None:
        self.depth += 1
        try:
            self._read_context(dotted)
            parts = dotted.split(".")
            for i in range(len(parts) - 1, 0, -1):
                prefix, head, rest = ".".join(parts[:i]), parts[i], parts[i + 1 :]
                sym = self.symbols.get(prefix)
                if prefix in self.aliases:
                    # A name imported into an extracted module, reached as module.name.
                    candidates = list(self.aliases[prefix].get(head, []))
                    candidates += [f"{star}.{head}" for star in self.stars.get(prefix, [])]
                elif sym is not None and sym.kind is SymbolKind.CLASS:
                    candidates = [f"{base}.{head}" for base in self.bases(prefix)]
                else:
                    continue
                # Only the longest extracted prefix counts: reading "a.b.c" as "a" + "b.c" once "a.b"
                # is a known module would follow star-imports into ever longer names.
                for candidate in candidates:
                    found = self.lookup(".".join([candidate, *rest]))
                    if found is not None:
                        return found
                return None
            return None
        finally:
            self.depth -= 1

    def bases(self, class_qualname: str) -> list[str]:
        """Resolved bases of an extracted class, looked up in the scope that encloses the class."""
        cached = self.base_cache.get(class_qualname)
        if cached is not None:
            return cached
        self.base_cache[class_qualname] = []  # guards against inheritance cycles
        sym = self.symbols[class_qualname]
        outer = self.symbols.get(sym.parent) if sym.parent else None
        module = self.module_of[class_qualname]
        resolved: list[str] = []
        for raw in sym.bases if outer is not None else []:
            target = self.resolve(raw, outer, module)
            if target is not None and target != class_qualname and target not in resolved:
                resolved.append(target)
        self.base_cache[class_qualname] = resolved
        return resolved


def _resolvable(ext: Extraction) -> bool:
    return ext.language == "python" and bool(ext.module) and not ext.parse_error
