"""The compiled checks run in Python over a batch held as N-Triples text: how ingestion validates.

Why: Oxigraph evaluates a compiled check at ≈ 2 µs per focus node whatever the query's shape (merging
a shape's checks into one query saved nothing), so a streamed group of the standard library (117k
quads, 11k focus nodes, 261 checks) cost 0.85 s of CPU in the checks plus 0.3 s to stage the group in
a store. Here each term stays the N-Triples text the emitter wrote (a group's lines, or ``str(term)``
for quads): no store, no term object per quad, and a check is a loop over the focus nodes' values.

Exactness. The checks' SPARQL (``validation.shapes``) defines what a violation is. A value is decided
here only in the forms whose meaning needs no RDF machinery: IRIs; a literal's datatype, read from
its text; sameTerm of literals without escapes, language tags or an explicit ``^^xsd:string``;
``xsd:integer`` lexical forms that fit in 64 bits and date-times in the common form; patterns in
the subset where Python's ``re`` and the Rust regex Oxigraph runs agree. Anything else leaves the
focus node undecided for that check, and the check's own SPARQL runs on a store holding just those
nodes' triples. ``tests/validation`` compares both validators on every fixture and on generated batches.

Classes (``sh:class``, ``sh:or``, the targets) follow ``rdf:type`` / ``rdfs:subClassOf*`` over what
the batch holds plus the classes its links' targets have (``add_types``), as the staged store did.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from functools import cache

import pyoxigraph as ox

from acms.validation.shapes import CheckSpec, CompiledCheck, Violation, shipped_checks, validate_store
from acms.vocab import RDF_NS, RDFS_NS, XSD_NS

_TYPE = f"<{RDF_NS}type>"
_SUBCLASS = f"<{RDFS_NS}subClassOf>"
_STRING = f"<{XSD_NS}string>"
_STRING_SUFFIX = f'"^^{_STRING}'
_LANG_STRING = f"<{RDF_NS}langString>"
_LITERAL = f"<{RDFS_NS}Literal>"
_UNDECIDED = object()
_FALLBACK_GRAPH = ox.NamedNode("urn:acms:validation:undecided")

# Lexical forms Oxigraph certainly accepts (a subset: anything else is left to Oxigraph itself).
_INT = r"-?(?:0|[1-9][0-9]{0,17})"
_FAST_LEXICAL = {
    f"<{XSD_NS}integer>": re.compile(_INT),
    f"<{XSD_NS}boolean>": re.compile(r"true|false"),
    f"<{XSD_NS}decimal>": re.compile(_INT + r"(?:\.[0-9]{1,17})?"),
    f"<{XSD_NS}dateTime>": re.compile(
        r"[1-9][0-9]{3}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
        r"(?:\.[0-9]{1,9})?(?:Z|[+-](?:0[0-9]|1[0-3]):[0-5][0-9])?"),
}
_CASTABLE = {f"<{XSD_NS}{t}>" for t in ("integer", "decimal", "float", "double", "boolean", "dateTime", "date",
                                          "time")}
_INT_LITERAL = re.compile(f'"({_INT})"\\^\\^<{re.escape(XSD_NS)}integer>')
_BRACE = re.compile(r"\{(?![0-9]+(?:,[0-9]*)?\})")
_UCHAR = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
# Pattern text both engines read the same way: literals, classes, groups, alternation, quantifiers,
# \d and escaped punctuation. "$" becomes "\Z": Rust's "$" is the end of the text only, Python's is
# also just before a final newline.
_SAFE_PATTERN = re.compile(r"(?:[A-Za-z0-9 _:,/@#=!%&;<>'\"~^$.\[\](){}|*+?-]|\\[d.\-\\/()\[\]{}^$|*+?])*")


class BatchTriples:
    """A batch's triples as N-Triples text: subject -> predicate -> objects, plus the classes known."""

    def __init__(self) -> None:
        self.out: dict[str, dict[str, str | list[str]]] = {}  # one value as itself, more as a list
        self.typed: dict[str, list[str]] = {}  # the batch's own rdf:type triples (these make focus nodes)
        self.types: dict[str, set[str]] = {}  # those plus the classes of linked nodes (sh:class, sh:or)
        self.supers: dict[str, set[str]] = {}  # rdfs:subClassOf in the batch
        self._linked: set[str] = set()
        self._closure: dict[str, frozenset[str]] = {}
        self._focus: dict[tuple[str, ...], list[tuple[str, dict[str, str | list[str]]]]] = {}
        self._summaries: dict[tuple[str, ...], _Summary] = {}
        self._classed: dict[tuple[str, ...], list[tuple[str, dict[str, str | list[str]]]]] | None = None

    # ------------------------------------------------------------------------------------ building
    @classmethod
    def from_lines(cls, lines: Iterable[str], graph: ox.NamedNode) -> BatchTriples | None:
        """From N-Quads lines all in ``graph`` (a streamed group's); None when one is in another graph."""
        suffix = f" {graph} .\n"
        cut = len(suffix)
        batch = cls()
        add, out, linked = batch.add, batch.out, batch._linked
        for line in lines:
            if not line.endswith(suffix):
                return None
            s, p, rest = line.split(" ", 2)
            o = rest[:-cut]
            if p == _TYPE or p == _SUBCLASS or "\\" in line:  # noqa: PLR1714
                add(s, p, o)
                continue
            # ``add`` inlined for the common line (~2.3M calls a standard library)
            if o[0] == "<":
                linked.add(o)
            by_p = out.get(s)
            if by_p is None:
                out[s] = {p: o}
                continue
            values = by_p.get(p)
            if values is None:
                by_p[p] = o
            elif type(values) is str:
                by_p[p] = [values, o]
            else:
                values.append(o)
        return batch

    @classmethod
    def from_quads(cls, quads: Iterable[ox.Quad | ox.Triple]) -> BatchTriples:
        """From quads (graph names ignored: every one is the batch's data)."""
        batch = cls()
        for q in quads:
            batch.add(str(q.subject), str(q.predicate), str(q.object))
        return batch

    def add(self, s: str, p: str, o: str) -> None:
        if "\\" in s or "\\" in p:
            s, p = _iri(s), _iri(p)
        if o[0] == "<":
            if "\\" in o:
                o = _iri(o)
            if p != _TYPE:
                self._linked.add(o)
        by_p = self.out.get(s)
        if by_p is None:
            by_p = self.out[s] = {}
        values = by_p.get(p)
        if values is None:  # most predicates have one value: a list only from the second
            by_p[p] = o
        elif type(values) is str:
            by_p[p] = [values, o]
        else:
            values.append(o)
        if p == _TYPE:
            self.typed.setdefault(s, []).append(o)
            self.types.setdefault(s, set()).add(o)
            if self._classed is not None:  # a node typed after focus nodes were found (not as ingestion builds batches)
                self._focus, self._summaries, self._classed = {}, {}, None
        elif p == _SUBCLASS:
            self.supers.setdefault(s, set()).add(o)

    def linked(self) -> list[str]:
        """IRIs the batch links to (objects of anything but rdf:type) without typing them: those it does
        not describe, and those it describes without a class. An edge may start from an unchanged file's
        entity (a name two entities share, a module's ``.py`` and ``.pyi``, goes to the greatest IRI): the
        store's class of it is what a link to it is checked against, as for any node the batch does not
        describe (a refresh quarantined the valid files that linked to it)."""
        typed = self.typed
        return sorted(n for n in self._linked if n not in typed)

    def add_types(self, pairs: Iterable[tuple[str, str]], *, data: bool = False) -> None:
        """(node, class) pairs, N-Triples text. ``data``: they are the batch's own triples (their nodes
        become focus nodes), not only what its links' targets are."""
        for node, cls in pairs:
            if data:
                self.add(node, _TYPE, cls)
            else:
                self.types.setdefault(node, set()).add(cls)

    # ------------------------------------------------------------------------------------ classes
    def closure(self, cls: str) -> frozenset[str]:
        """``cls`` and its superclasses (rdfs:subClassOf*)."""
        found = self._closure.get(cls)
        if found is None:
            seen, todo = {cls}, [cls]
            while todo:
                for sup in self.supers.get(todo.pop(), ()):
                    if sup not in seen:
                        seen.add(sup)
                        todo.append(sup)
            found = self._closure[cls] = frozenset(seen)
        return found

    def is_a(self, node: str, classes: frozenset[str]) -> bool:
        return any(not classes.isdisjoint(self.closure(t)) for t in self.types.get(node, ()))

    def focus_values(self, targets: tuple[str, ...]) -> list[tuple[str, dict[str, str | list[str]]]]:
        """(focus node, its predicate -> objects) for a shape with these targets: the instances (in the
        batch) of them or of a subclass, found once per target set."""
        found = self._focus.get(targets)
        if found is None:
            if self._classed is None:  # the nodes grouped by their classes, once: a file has few such groups
                self._classed = {}
                for s, ts in self.typed.items():
                    self._classed.setdefault(tuple(ts), []).append((s, self.out[s]))
            wanted = frozenset(targets)
            found = []
            for ts, nodes in self._classed.items():
                if any(not wanted.isdisjoint(self.closure(t)) for t in ts):
                    found.extend(nodes)
            self._focus[targets] = found
        return found

    def summary(self, targets: tuple[str, ...]) -> _Summary:
        """How many of the targets' focus nodes have each predicate, and which have several values of it:
        most count constraints are decided from these without a loop over the nodes per constraint."""
        found = self._summaries.get(targets)
        if found is None:
            having: dict[str, int] = {}
            several: dict[str, list[tuple[str, list[str]]]] = {}
            for f, by_p in self.focus_values(targets):
                for p, values in by_p.items():
                    having[p] = having.get(p, 0) + 1
                    if type(values) is not str:
                        several.setdefault(p, []).append((f, values))  # type: ignore[arg-type]
            found = self._summaries[targets] = _Summary(having, several)
        return found


class _Summary:
    __slots__ = ("having", "several")

    def __init__(self, having: dict[str, int], several: dict[str, list[tuple[str, list[str]]]]) -> None:
        self.having, self.several = having, several


# ---------------------------------------------------------------------------------------- running
def validate(batch: BatchTriples, checks: Iterable[CompiledCheck] | None = None) -> list[Violation]:
    """The batch's violations, as ``validate_store`` on the staged batch would report them."""
    found: set[Violation] = set()
    undecided: list[tuple[CompiledCheck, set[str]]] = []
    for check in shipped_checks() if checks is None else checks:
        spec = check.spec
        if not batch.focus_values(spec.targets):  # most of a file's checks: no node of their classes
            continue
        unsure: set[str] = set()
        rule = _rule_for(spec.component, spec.arg)
        if rule is None:  # not decidable here: Oxigraph decides every focus node
            unsure.update(f for f, _ in batch.focus_values(spec.targets))
        else:
            if isinstance(rule, frozenset):  # sh:class / sh:or: the classes this batch knows
                rule = _class_rule(batch, rule)
            decided = list(_run(batch, spec, rule, unsure))  # a node Oxigraph decides is left to it whole
            found.update(_violation(check, f, value) for f, value in decided if f not in unsure)
        if unsure:
            undecided.append((check, unsure))
    for check, nodes in undecided:
        found.update(_in_oxigraph(batch, check, nodes))
    return sorted(found, key=lambda v: (*v.key(), v.value or ""))


Rule = Callable[[str], object]  # a value -> True (conforms), False (violates) or _UNDECIDED


def _class_rule(batch: BatchTriples, classes: frozenset[str]) -> Rule:
    return lambda v: v[0] != '"' and batch.is_a(v, classes)


def _run(batch: BatchTriples, spec: CheckSpec, rule: Rule | tuple[str, object], unsure: set[str]
         ) -> Iterable[tuple[str, str | None]]:
    """(focus, value or None) per violation; undecided focus nodes go into ``unsure``."""
    nodes, path = batch.focus_values(spec.targets), spec.path
    if isinstance(rule, tuple):  # counts and the comparison with another path need all of a node's values
        kind, arg = rule
        if kind == "lte":
            for f, by_p in nodes:
                others = _values(by_p, arg)  # type: ignore[arg-type]
                for value in (_values(by_p, path) if path else (f,)):
                    verdict = _at_most(value, others)
                    if verdict is _UNDECIDED:
                        unsure.add(f)
                    elif not verdict:
                        yield f, value
            return
        n = int(arg)  # type: ignore[call-overload]  (counts always have a path: the compiler says so)
        summary = batch.summary(spec.targets)
        if kind == "max" and n >= 1:  # only nodes with more values than allowed can have too many distinct ones
            suspects = [(f, values) for f, values in summary.several.get(path, ()) if len(values) > n]
        elif kind == "max":
            suspects = [(f, _values(by_p, path)) for f, by_p in nodes if path in by_p]
        elif n <= 1:
            suspects = ([] if summary.having.get(path, 0) == len(nodes) else
                        [(f, ()) for f, by_p in nodes if path not in by_p])
        else:
            suspects = [(f, _values(by_p, path)) for f, by_p in nodes]
        for f, values in suspects:
            verdict = _count(values, kind, n)
            if verdict is _UNDECIDED:
                unsure.add(f)
            elif not verdict:
                yield f, None
        return
    for f, by_p in nodes:
        values = by_p.get(path) if path else f
        for value in (() if values is None else (values,) if type(values) is str else values):
            verdict = rule(value)
            if verdict is not True:
                if verdict is _UNDECIDED:
                    unsure.add(f)
                else:
                    yield f, value


def _values(by_p: dict[str, str | list[str]], p: str) -> Sequence[str]:
    values = by_p.get(p)
    return () if values is None else (values,) if type(values) is str else values


def _count(values: Sequence[str], kind: str, n: int) -> object:
    """COUNT(DISTINCT value) against sh:minCount / sh:maxCount ``n``."""
    if kind == "min" and (n <= 1 or len(values) < n):
        return len(values) >= n
    if kind == "max" and len(values) <= n:
        return True
    if any(not _canonical(v) for v in values):
        return _UNDECIDED
    distinct = len(set(values))
    return distinct >= n if kind == "min" else distinct <= n


def _at_most(value: str, others: Iterable[str]) -> object:
    a = _INT_LITERAL.fullmatch(value)
    for other in others:
        b = _INT_LITERAL.fullmatch(other)
        if a is None or b is None:
            return _UNDECIDED
        if int(a.group(1)) > int(b.group(1)):
            return False
    return True


@cache
def _rule_for(component: str, arg: object) -> Rule | tuple[str, object] | frozenset[str] | None:
    """The Python form of one constraint (None: none here, Oxigraph decides)."""
    if component in ("MinCount", "MaxCount"):
        return ("min" if component == "MinCount" else "max", arg)
    if component == "LessThanOrEquals":
        return ("lte", arg)
    if component == "Datatype":
        return _datatype_rule(str(arg))
    if component in ("Class", "Or"):
        return frozenset(arg)  # type: ignore[arg-type]
    if component == "NodeKind":
        starts = {"IRI": "<", "BlankNode": "_", "Literal": '"', "BlankNodeOrIRI": "_<",
                  "BlankNodeOrLiteral": '_"', "IRIOrLiteral": '<"'}[str(arg)]
        return lambda v: v[0] in starts
    if component == "In":
        allowed = frozenset(arg)  # type: ignore[arg-type]
        return lambda v: True if v in allowed else (False if _canonical(v) else _UNDECIDED)
    if component in ("MinInclusive", "MaxInclusive"):
        bound = _INT_LITERAL.fullmatch(str(arg))
        if bound is None:
            return None
        limit, below = int(bound.group(1)), component == "MinInclusive"

        def in_bounds(v: str) -> object:
            m = _INT_LITERAL.fullmatch(v)
            if m is None:
                return _UNDECIDED
            return int(m.group(1)) >= limit if below else int(m.group(1)) <= limit
        return in_bounds
    if component == "Pattern":
        pattern, flags = arg  # type: ignore[misc]
        regex = _python_pattern(pattern, flags)
        if regex is None:
            return None

        def matches(v: str) -> object:
            if v[0] == "_":
                return False
            if "\\" in v:
                return _UNDECIDED
            text = v[1:-1] if v[0] == "<" else v[1:v.rindex('"')]
            return regex.search(text) is not None
        return matches
    return None


def _datatype_rule(dt: str) -> Rule:
    fast = _FAST_LEXICAL.get(dt)
    castable = dt in _CASTABLE

    def conforms(v: str) -> object:
        if v[0] != '"':
            return False
        if dt == _LITERAL:
            return True
        if _datatype_of(v) != dt:
            return False
        if not castable:
            return True
        if fast is not None and fast.fullmatch(v, 1, v.rindex('"')):
            return True
        return _UNDECIDED
    return conforms


def _datatype_of(literal: str) -> str:
    end = literal[-1]
    if end == '"':
        return _STRING
    if end == ">":
        return literal[literal.rindex('"^^<') + 3:]
    return _LANG_STRING


def _canonical(v: str) -> bool:
    """Whether equal terms have this one text (no escapes, language tags or explicit xsd:string)."""
    if "\\" in v:
        return False
    return v[0] != '"' or v[-1] == '"' or (v[-1] == ">" and not v.endswith(_STRING_SUFFIX))


@cache
def _python_pattern(pattern: str, flags: str | None) -> re.Pattern[str] | None:
    """``re`` for a pattern both engines read alike; None for any other (and for one Oxigraph rejects)."""
    if flags or "(?" in pattern or _BRACE.search(pattern) or not _SAFE_PATTERN.fullmatch(pattern):
        return None
    probe = ox.Store().query(f'SELECT (REGEX("", {ox.Literal(pattern)}) AS ?ok) {{}}')
    if next(iter(probe))["ok"] is None:  # type: ignore[index, call-overload]
        return None
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        elif c == "$" and not in_class:
            c = r"\Z"
        out.append(c)
        i += 1
    try:
        return re.compile("".join(out))
    except re.error:
        return None


def _iri(text: str) -> str:
    """An IRI's text with its \\u escapes decoded, the one form pyoxigraph writes."""
    return _UCHAR.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), text)


# ---------------------------------------------------------------------------------------- results
def _violation(check: CompiledCheck, focus: str, value: str | None) -> Violation:
    return Violation(_term_text(focus), check.shape, check.path, check.constraint, check.message,
                     None if value is None else _term_text(value))


def _term_text(term: str) -> str:
    """As ``shapes.term_text`` prints the term: IRIs bare, literals as pyoxigraph writes them."""
    if term[0] == "<":
        return term[1:-1]
    if term[0] == "_":
        return term
    parsed = next(iter(ox.parse(f"<urn:s> <urn:p> {term} .", format=ox.RdfFormat.N_TRIPLES)))
    return str(parsed.object)


def _in_oxigraph(batch: BatchTriples, check: CompiledCheck, nodes: set[str]) -> list[Violation]:
    """The check's own SPARQL over a store holding the undecided nodes' triples (and the batch's
    subclass links): what the staged batch would have answered for them."""
    graph = f" {_FALLBACK_GRAPH} .\n"
    lines = [f"{s} {p} {o}{graph}" for s in sorted(nodes) for p in batch.out[s] for o in _values(batch.out[s], p)]
    lines += [f"{s} {_SUBCLASS} {o}{graph}" for s, sups in batch.supers.items() for o in sups]
    store = ox.Store()
    store.load("".join(lines).encode("utf-8"), format=ox.RdfFormat.N_QUADS)
    return validate_store(store, _FALLBACK_GRAPH, [check])
