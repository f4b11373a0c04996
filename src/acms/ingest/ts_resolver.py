"""Calls, bases and imports of tree-sitter languages to project entities, once every file is known.

The same rules for every language (nothing here names one): a name written in a definition is looked
up in its enclosing definitions (nested functions, members of the enclosing type), then at the top of
its file, then among the names its imports bind, then at the top of the files of its folder (a Go or
Java package); ``a.b`` through an import alias (``utils.forEach``, ``binding.JSON``) or a type
(``Helper.scale``); ``this.m`` (``self``, ``Self``, ``@``) in the enclosing type and its bases. A call
on a value whose type is unknown (``c.Next()``) goes to the one method of that name in the file, else
in the folder. A level with two or more candidates is ambiguous, and the name is dropped, not guessed.

Imports name project files: ``./x`` and ``../x`` relative to the file; otherwise (an import style
"path" language) the files or folder whose path ends with the import path (``github.com/o/r/binding``
-> ``binding/``, ``com.example.Helper`` -> ``.../com/example/Helper.java``, ``util/helper.h``), or its
parent with the last part a name in it (``crate::config::Config``, a static import).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from posixpath import basename, dirname, normpath, splitext

from acms.ingest.model import CLASS_LIKE, CLASS_LIKE_NAMES, CodeSymbol, Edge, Extraction, ImportRef, SymbolKind
from acms.ingest.ts_extractor import module_name
from acms.ingest.ts_languages import extension_map, languages

__all__ = ["resolve_tree_sitter_edges"]

_MODULE = SymbolKind.MODULE.value
_METHOD = SymbolKind.METHOD.value
_MAX_BASE_DEPTH = 4


def resolve_tree_sitter_edges(extractions: Mapping[str, Extraction], known: Mapping[str, str],
                              all_paths: Collection[str]) -> list[Edge]:
    """Edges of the tree-sitter files among ``extractions`` (path -> extraction) whose targets are in
    ``known`` (qualified name -> class local name: every current entity, these files' included)."""
    configured = languages()
    exts = {p: e for p, e in sorted(extractions.items()) if e.language in configured and e.module and not e.parse_error}
    if not exts:
        return []
    kinds = known if isinstance(known, Mapping) else dict.fromkeys(known, "")
    return _Resolver(exts, kinds, all_paths).edges()


class _Resolver:
    def __init__(self, exts: Mapping[str, Extraction], known: Mapping[str, str], all_paths: Collection[str]) -> None:
        self.exts = exts
        self.known = known
        paths = set(all_paths) | set(exts)
        endings, specs = extension_map(), languages()
        self.module_of: dict[str, str] = {}  # path -> module qualified name (tree-sitter files)
        self.family_of: dict[str, str] = {}  # module -> its language's family
        for path in paths:
            language = endings.get(splitext(path)[1].lower())
            if language is not None:
                module = self.module_of[path] = module_name(path, paths)
                self.family_of[module] = specs[language].kin
        # Everything below is per family: a Go file never resolves into a Java file of the same folder.
        self.folder: dict[tuple[str, str], list[str]] = {}  # (folder, family) -> its files' modules
        self.by_stem: dict[tuple[str, str], list[str]] = {}  # ("a/b/c", "a/b/c.ext" or any tail, family) -> paths
        for path, module in sorted(self.module_of.items()):
            family = self.family_of[module]
            self.folder.setdefault((dirname(path), family), []).append(module)
            for key in (splitext(path)[0], path):
                parts = key.split("/")
                for i in range(len(parts)):
                    self.by_stem.setdefault(("/".join(parts[i:]), family), []).append(path)
        self.folders: dict[tuple[str, str], list[str]] = {}  # (any tail of a folder, family) -> folders
        for folder, family in self.folder:
            parts = folder.split("/") if folder else []
            for i in range(len(parts)):
                self.folders.setdefault(("/".join(parts[i:]), family), []).append(folder)
        self.methods: dict[str, list[str]] = {}  # a method's name -> its qualified names
        for qn, kind in known.items():
            if kind == _METHOD:
                self.methods.setdefault(qn.rsplit(".", 1)[-1], []).append(qn)
        self.symbols: dict[str, CodeSymbol] = {s.qualname: s for e in exts.values() for s in e.symbols}
        self.file_of: dict[str, str] = {s.qualname: p for p, e in exts.items() for s in e.symbols}
        self.folder_of: dict[str, str] = {m: dirname(p) for p, m in self.module_of.items()}  # module -> folder

    # -- the edges -------------------------------------------------------------------------------
    def edges(self) -> list[Edge]:
        out: set[Edge] = set()
        for path, ext in self.exts.items():
            module = ext.module or ""
            style = languages()[ext.language].imports
            bindings: dict[str, list[str]] = {}
            for ref in ext.imports:
                for target, name in self._import_targets(path, ref, style, self.family_of.get(module, "")):
                    if target in self.known:
                        out.add(Edge(module, "imports", target))
                    if name is not None:
                        full = f"{target}.{name}"
                        if full in self.known:
                            out.add(Edge(module, "references", full))
                        bindings.setdefault(ref.alias or name, []).append(full)
                    else:
                        alias = ref.alias or splitext(basename(ref.module.rstrip("/")))[0]
                        bindings.setdefault(alias, []).append(target)
            scope = self._scope(path, module, bindings)
            for sym in ext.symbols:
                for raw in sym.calls:
                    target = self._call(raw, sym, scope)
                    if target is not None and target != sym.qualname:
                        out.add(Edge(sym.qualname, "calls", target))
                if sym.kind in CLASS_LIKE:
                    for base in self._bases(sym, scope):
                        out.add(Edge(sym.qualname, "inherits", base))
        return sorted(out, key=lambda e: (e.source, e.kind, e.target))

    # -- imports ----------------------------------------------------------------------------------
    def _import_targets(self, path: str, ref: ImportRef, style: str, family: str) -> list[tuple[str, str | None]]:
        """(module, name or None) for each project module of ``family`` the import names."""
        spec = ref.module
        for prefix, repl in (("crate/", ""), ("self/", "./"), ("super/", "../")):
            if spec.startswith(prefix):
                spec = repl + spec[len(prefix):]
                while spec.startswith("../super/"):
                    spec = "../" + spec[len("../super/"):]
        here = dirname(path)
        relative = spec.startswith(("./", "../"))
        if relative or style == "path":
            found = self._modules_at(normpath(f"{here}/{spec}") if here else normpath(spec), family, exact=True)
            if found:
                return [(m, ref.name) for m in found]
        if relative or style != "path":
            return []
        is_file = splitext(spec)[1].lower() in extension_map()  # "point.h": a file name, never a.b.c
        dotted = "/" not in spec and "." in spec and not is_file
        parts = [p for p in (spec.replace(".", "/") if dotted else spec).split("/") if p]
        for i in range(len(parts)):  # the longest tail that names project files wins
            found = self._modules_at("/".join(parts[i:]), family, exact=False)
            if found:
                return [(m, ref.name) for m in found]
        if ref.name is None and len(parts) > 1 and not is_file:  # a.b.Name: the file a/b, the name Name in it
            for i in range(len(parts) - 1):
                found = self._modules_at("/".join(parts[i:-1]), family, exact=False)
                if found:
                    return [(m, parts[-1]) for m in found]
        return []

    def _modules_at(self, key: str, family: str, exact: bool) -> list[str]:
        """Modules of the file ``key`` names (with or without its extension, or its folder's
        ``index`` file), else of the folder it names; ``exact``: the whole path, else a tail of it."""
        if not key or key in (".", ".."):
            return []
        if exact:
            files = [p for p in self.by_stem.get((key, family), []) if p == key or splitext(p)[0] == key]
            index = f"{key}/index"
            files = files or [p for p in self.by_stem.get((index, family), []) if splitext(p)[0] == index]
            if files:
                return sorted({self.module_of[p] for p in files})
            return list(self.folder.get((key, family), []))
        files = self.by_stem.get((key, family), [])
        if files:
            return sorted({self.module_of[p] for p in files})
        folders = self.folders.get((key, family), [])
        if len(folders) == 1:
            return list(self.folder[(folders[0], family)])
        return []

    # -- names ------------------------------------------------------------------------------------
    def _call(self, raw: str, sym: CodeSymbol, scope: _Scope) -> str | None:
        parts = raw.split(".")
        if parts[0] == "this":
            owner = self._enclosing_type(sym)
            return self._member(owner, parts[1:]) if owner is not None and len(parts) > 1 else None
        if len(parts) == 1:
            return self._name(parts[0], sym.qualname, scope)
        head = self._head(parts[0], sym.qualname, scope)
        for target in head:
            found = self._member(target, parts[1:])
            if found is not None:
                return found
        if head:
            return None
        return self._method_by_name(parts[-1], scope)

    def _name(self, name: str, where: str, scope: _Scope) -> str | None:
        """A bare name written inside ``where`` (a qualified name): the enclosing definitions, types
        and namespaces, the file, the imports, the folder; None when ambiguous."""
        for level in self._levels(name, where, scope):
            hits = sorted({q for q in level if q in self.known})
            if len(hits) == 1:
                return hits[0]
            if hits:
                return None
        return None

    def _levels(self, name: str, where: str, scope: _Scope) -> Iterator[list[str]]:
        prefix = where
        while len(prefix) > len(scope.module) and prefix.startswith(f"{scope.module}."):
            yield [f"{prefix}.{name}"]  # nested definitions, then the type (a method's), namespaces
            prefix = prefix.rsplit(".", 1)[0]
        yield [f"{scope.module}.{name}"]
        yield list(scope.bindings.get(name, []))
        yield [f"{m}.{name}" for m in self.folder.get((scope.folder, scope.family), []) if m != scope.module]

    def _head(self, head: str, where: str, scope: _Scope) -> list[str]:
        """What the first part of ``a.b`` names: imported modules or names, else one type in scope."""
        bound = scope.bindings.get(head)
        if bound:
            return bound
        found = self._name(head, where, scope)
        return [found] if found is not None and self.known.get(found) in CLASS_LIKE_NAMES else []

    def _member(self, owner: str, rest: list[str], depth: int = 0) -> str | None:
        """``owner.rest`` when known, else the same member of the owner's bases (extracted ones)."""
        full = ".".join([owner, *rest])
        if full in self.known:
            return full
        folder = self.folder_of.get(owner)
        if folder is not None:  # a package (Go): any file of the folder holds its top-level names
            tail = ".".join(rest)
            kin = self.folder.get((folder, self.family_of.get(owner, "")), [])
            hits = sorted({q for m in kin if (q := f"{m}.{tail}") in self.known})
            return hits[0] if len(hits) == 1 else None
        sym = self.symbols.get(owner)
        if sym is None or depth >= _MAX_BASE_DEPTH:
            return None
        scope = self._scope_of(sym)
        for base in sym.bases:
            target = self._type(base, sym, scope)
            if target is not None and target != owner:
                found = self._member(target, rest, depth + 1)
                if found is not None:
                    return found
        return None

    def _method_by_name(self, name: str, scope: _Scope) -> str | None:
        """The one method ``name`` of the file, else of the folder (a call on a value of unknown type)."""
        candidates = self.methods.get(name, [])
        if not candidates:
            return None
        mine = [q for q in candidates if q.startswith(f"{scope.module}.") and self._module_of_qn(q) == scope.module]
        if mine:
            return mine[0] if len(mine) == 1 else None
        folder = set(self.folder.get((scope.folder, scope.family), []))
        near = [q for q in candidates if self._module_of_qn(q) in folder]
        return near[0] if len(near) == 1 else None

    def _module_of_qn(self, qn: str) -> str | None:
        parts = qn.split(".")
        for i in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:i])
            if self.known.get(prefix) == _MODULE:
                return prefix
        return None

    def _enclosing_type(self, sym: CodeSymbol) -> str | None:
        current: CodeSymbol | None = sym
        while current is not None:
            if current.kind in CLASS_LIKE:
                return current.qualname
            if current.kind is SymbolKind.METHOD:  # its type: the parent, or the receiver its name holds
                parent = self.symbols.get(current.parent) if current.parent else None
                return parent.qualname if parent is not None and parent.kind in CLASS_LIKE else current.qualname.rsplit(".", 1)[0]
            current = self.symbols.get(current.parent) if current.parent else None
        return None

    def _bases(self, sym: CodeSymbol, scope: _Scope) -> list[str]:
        out: list[str] = []
        for raw in sym.bases:
            target = self._type(raw, sym, scope)
            if target is not None and target != sym.qualname and target not in out:
                out.append(target)
        return out

    def _type(self, raw: str, sym: CodeSymbol, scope: _Scope) -> str | None:
        """A base as written, looked up from the scope around the type (a class is no scope of its own bases)."""
        outer = sym.qualname.rsplit(".", 1)[0]  # a type is no scope of its own bases
        parts = raw.split(".")
        if len(parts) == 1:
            found = self._name(parts[0], outer, scope)
        else:
            found = next((m for t in self._head(parts[0], outer, scope) if (m := self._member(t, parts[1:]))), None)
        return found if found is not None and self.known.get(found) in CLASS_LIKE_NAMES else None

    def _scope_of(self, sym: CodeSymbol) -> _Scope:
        path = self.file_of.get(sym.qualname, "")
        ext = self.exts.get(path)
        return self._scope(path, ext.module or "" if ext is not None else "", {})

    def _scope(self, path: str, module: str, bindings: dict[str, list[str]]) -> _Scope:
        return _Scope(path, module, dirname(path), self.family_of.get(module, ""), bindings)


class _Scope:
    """Where a name is written: the file, its module, its folder and the names its imports bind."""

    __slots__ = ("path", "module", "folder", "family", "bindings")

    def __init__(self, path: str, module: str, folder: str, family: str, bindings: dict[str, list[str]]) -> None:
        self.path = path
        self.module = module
        self.folder = folder
        self.family = family
        self.bindings = bindings
