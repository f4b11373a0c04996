"""The default pipeline's second step: breadth-depth expansion over the graph from the seeds.

The first stage (``rank``) proposes seeds, the fragments that best match the task. An agent that edits
one needs more than its body: what it calls and uses, the class around it, what calls it. The walk
starts from the request's focus, then the task's anchors (:mod:`acms.strategies.anchors`: stack-trace
frames, quoted error messages), then the seeds an agent will read as bodies, then the ``next_seeds``
best seeds whose bodies did not fit (listed as one-line references, the next candidates for the place
to edit: what they call and use is what a change there needs; a focus's body may leave the seeds no
room at all), and reaches:

- structural edges outward and inward (``expand-out.rq`` / ``expand-in.rq``; the edge kinds and their
  weights are the strategy's data, ``[phase.edges_out]`` / ``[phase.edges_in]``; an edge kind that
  reaches more than ``max_fan`` entities from one node says little and is not followed, nor read: the
  inward edges are counted first, ``expand-in-counts.rq``);
- the names the seeds' code uses: ``self.x`` in a method is its class's ``x``, a bare name counts when
  exactly one definition outside tests and in the code's language family bears it (``defined-names.rq``,
  asked only for the names ``name-counts.rq`` finds few bear: the resolution a reader does, which
  catches what static call edges miss, such as ``response.url`` or a class used only in an annotation);
- what is beside the focus (``beside-members.rq`` / ``beside-file.rq``): its class's other members and
  its file's top level, nearest first, as one-line references; without a focus, beside the best seed;
- a method's namesakes one level up and down its class hierarchy (``overrides-up.rq`` /
  ``overrides-down.rq``, or from the name where the class has more subclasses than the name bearers,
  ``overrides-down-by-name.rq``: a change to a method is often due where it is overridden);
- the constructor of each class it reached (``constructors.rq``), at the class's hop: code that calls a
  class runs it, and its parameters, which the class's declaration does not show, are what a call
  must pass;
- the files that change with the starts' files in history, and of those the definitions the shared
  commits touched most (``cochange-commits.rq`` / ``cochange.rq``, :mod:`acms.strategies.cochange`;
  needs ``acms index --history N``, and costs one empty query without it);
- the current decisions (recorded or ADRs) about what the walk shows or reached at one hop, about the
  class or module around it, or about its file (``decisions-current.rq`` / ``decision-reach.rq``),
  shown whole right after the bodies: why the code is the way it is, next to the code to change (one
  empty query in a project without decisions).

A reached entity scores its seed's score times the edge's weight times ``decay`` per hop (computed in
the query). Levels of detail follow depth, and the budget is planned in this order: bodies for the
focus, the anchors and the best seeds (``bodies`` share); one-line references (the declaration) to the
next-ranked seeds, the next candidates when the first is wrong; signatures of what one hop reached (the
declaration, decorators and the doc string's first line; ``signatures`` share); one-line references for
two hops and the rest. A level's unused share goes to the next and the seeds left over follow, so the
packer fills the budget while material remains; scores are lifted by tier so the output keeps that
order. Below everything, the bodies of the signatures and references are proposed in reserve: when all
that is planned fits with room to spare, the packer shows them in their heads' places
(:func:`acms.assembly.dedupe.fuller_forms`) rather than leave the budget unused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache, partial
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, NamedNode

from acms.assembly.model import Candidate
from acms.errors import ConfigError
from acms.ingest.fragments import leaf_outline
from acms.ingest.ts_languages import languages
from acms.ingest.walker import language_for
from acms.ranking.roles import Role, role_of
from acms.strategies.anchors import frame_bindings, frames, literal_part, messages
from acms.strategies.cochange import CoChangeOptions, co_changed
from acms.store.parallel import run_all
from acms.strategies.descriptor import Phase, StrategyDescriptor
from acms.terms import Term
from acms.tokens import estimate
from acms.vocab import UKO, XSD

if TYPE_CHECKING:
    from acms.strategies.engine import RunContext

_IDENT = re.compile(r"(?<![\w.])(?:(self|cls|this)\.)?([A-Za-z_][A-Za-z0-9_]*)|\.([A-Za-z_][A-Za-z0-9_]*)")
_KINDS = {"Class", "Function", "Method"}
_EXTRACTED = {"python"}  # the languages read by an extractor of their own, not listed in languages.toml
# Words of the languages themselves (and ``self``): never a definition's name worth a lookup.
_NOT_NAMES = frozenset("""and as assert async await break case catch class const continue def del elif else
enum except export extends false final finally fn for from func function go if impl import in interface
is lambda let match mod new nil none not null or package pass pub raise return self static struct super
switch this throw true try type use var void while with yield None True False""".split())
HEADER_TOKENS = 12  # what a packed block's header (path:lines, name) costs beside its text, about
AMBIGUOUS = 6  # a name with more entities than this is left to ``self.name`` resolution
FEW_SUBCLASSES = 8  # up to this many, a class's subclasses are looked through for a namesake (not counted further)
# Output order: bodies, the decisions about them, the next-ranked seeds as one-line references (the next
# candidates for the place to edit, when the first is wrong), the signatures of what the bodies use, the
# other references.
TIER_LIFT = {"body": 4.0, "decision": 3.5, "next": 3.0, "signature": 2.0, "reference": 1.0}
NEXT = 20  # next-ranked seeds listed ahead of the signatures
# Planned text past this many budgets (by estimate) fills any budget: no bodies are proposed in reserve.
FULL = 1.5


@dataclass(frozen=True)
class ExpandOptions:
    """The phase's data (``[[phase]]`` keys of an ``expand`` phase); see the module docstring."""

    seeds: int = 8
    depth: int = 2
    decay: float = 0.8
    bodies: float = 0.6
    signatures: float = 0.3
    names: float = 0.9
    overrides: float = 0.9
    constructors: float = 0.0  # off unless the strategy asks (a strategy copied before it has no query for it)
    anchors: int = 4
    max_fan: int = 150
    max_reached: int = 120
    cochange: float = 0.3
    cochange_max_files: int = 20
    cochange_min_support: int = 2
    cochange_files: int = 3
    cochange_definitions: int = 3
    beside: float = 0.85
    beside_max: int = 40
    beside_seeds: int = 1
    next_seeds: int = 0  # seeds walked from though not shown whole (none unless the strategy asks)
    decisions: float = 0.0  # off unless the strategy asks (a strategy copied before it has no query for it)
    edges_out: Mapping[str, float] = field(default_factory=dict)
    edges_in: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def parse(cls, strategy: str, raw: Mapping[str, Any]) -> ExpandOptions:
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ConfigError(f"strategy {strategy}: unknown expand option(s) {', '.join(unknown)}; "
                              f"known: {', '.join(sorted(known))}")
        try:
            opts = cls(**{k: (dict(v) if k.startswith("edges_") else type(getattr(cls, k, 0.0))(v))
                          for k, v in raw.items()})
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"strategy {strategy}: bad expand option: {exc}") from None
        weights = [*opts.edges_out.values(), *opts.edges_in.values(), opts.decay, opts.names,
                   opts.overrides, opts.constructors, opts.bodies, opts.signatures, opts.cochange, opts.beside, opts.decisions]
        if any(not 0.0 <= float(w) <= 1.0 for w in weights) or opts.bodies + opts.signatures > 1.0:
            raise ConfigError(f"strategy {strategy}: expand weights and shares lie in [0, 1], "
                              "and bodies + signatures <= 1")
        if opts.cochange_max_files < 2 or opts.cochange_min_support < 1 or opts.cochange_files < 0 \
                or opts.cochange_definitions < 1:
            raise ConfigError(f"strategy {strategy}: cochange_max_files >= 2, cochange_min_support >= 1, "
                              "cochange_files >= 0 and cochange_definitions >= 1")
        if opts.beside_max < 0 or opts.beside_seeds < 0 or opts.next_seeds < 0:
            raise ConfigError(f"strategy {strategy}: beside_max >= 0, beside_seeds >= 0 and next_seeds >= 0")
        return opts

    @property
    def co_change(self) -> CoChangeOptions:
        return CoChangeOptions(self.cochange, self.cochange_max_files, self.cochange_min_support,
                               self.cochange_files, self.cochange_definitions)


def _double(value: float) -> Literal:
    return Literal(repr(float(value)), datatype=XSD.double)


def _edge_table(edges: Mapping[str, float]) -> list[tuple[Term, Term]]:
    """``(?edge ?weight)`` rows: ``calls`` is ``uko:calls``; an extension's edge is given as a full IRI."""
    return [(NamedNode(name) if name.startswith(("http://", "https://")) else UKO[name.removeprefix("uko:")],
             _double(weight)) for name, weight in sorted(edges.items())]


def _cost(text: str) -> float:
    return estimate(text, HEADER_TOKENS)


def _short(iri: str) -> str:
    return iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


@cache
def _kin(path: str) -> str | None:
    """The languages a file's code calls into by name (languages.toml's family: TypeScript and JavaScript
    call each other, Python calls Python), or None for prose and data, whose words may name any code.
    A name in Python code is never a function of a vendored JavaScript file, so such a namesake neither
    answers for the name nor makes it ambiguous."""
    language = language_for(path)
    spec = languages().get(language)
    if spec is not None:
        return spec.kin
    return language if language in _EXTRACTED else None


@dataclass
class _Reached:
    score: float
    hop: int
    why: str
    brief: bool = False  # shown as a one-line reference even at one hop (the focus's neighbourhood)


def _reach(reached: dict[str, _Reached], target: str, score: float, hop: int, why: str, brief: bool = False) -> None:
    old = reached.get(target)
    if old is None or score > old.score:
        reached[target] = _Reached(score, hop if old is None else min(hop, old.hop), why, brief)


class _Hits:
    """What one step of the walk reached, in the order it reached it. The first steps run at once
    (:func:`acms.store.parallel.run_all`) and hand theirs to the walk's table after all finished, in
    the order they would have run one after another: the table is the same."""

    def __init__(self) -> None:
        self.hits: list[tuple[str, float, int, str, bool]] = []

    def __call__(self, target: str, score: float, hop: int, why: str, brief: bool = False) -> None:
        self.hits.append((target, score, hop, why, brief))

    def into(self, reached: dict[str, _Reached]) -> None:
        for hit in self.hits:
            _reach(reached, *hit)


def identifiers(text: str) -> tuple[set[str], set[str]]:
    """Names a piece of code uses: bare and attribute names, and those read through ``self``/``cls``/``this``
    (a method of the same class). Comment lines are skipped; a name in a string still counts (cheap,
    and a doc string that names ``Headers`` points at it as well)."""
    bare: set[str] = set()
    own: set[str] = set()
    for line in text.splitlines():
        if line.lstrip().startswith(("#", "//")):
            continue
        for m in _IDENT.finditer(line):
            receiver, name, attr = m.group(1), m.group(2), m.group(3)
            if attr:
                bare.add(attr)
            elif receiver:
                own.add(name)
            else:
                bare.add(name)
    return bare, own


class Expansion:
    """One request's walk: seeds in, planned candidates out."""

    def __init__(self, desc: StrategyDescriptor, phase: Phase, ctx: RunContext, opts: ExpandOptions) -> None:
        self.desc, self.phase, self.ctx, self.opts = desc, phase, ctx, opts
        self.store = ctx.searcher.store

    def query(self, name: str) -> str:
        return self.desc.query_text(Phase("expand", 1.0, name))

    def _each(self, name: str, entities: list[str]) -> list[dict[str, Term]]:
        """The rows of a query that answers each ``?entity`` on its own (``entity-heads.rq``,
        ``entity-places.rq``), asked for two halves of them at once."""
        query, half = self.query(name), (len(entities) + 1) // 2
        parts = run_all(self.store, [partial(self.store.select, query, {"entity": [NamedNode(e) for e in part]})
                                     for part in (entities[:half], entities[half:]) if part])
        return [r for rows in parts for r in rows]

    def optional_query(self, name: str) -> str | None:
        """A query the walk can do without (a strategy folder written before it): None when absent."""
        try:
            return self.query(name)
        except ConfigError:
            return None

    # -- breadth ---------------------------------------------------------------------------------
    def edges(self, frontier: dict[str, float], hop: int, reach: _Hits) -> None:
        """One hop each way; the query scores what it reaches (``?nodeScore * ?weight * ?decay``)."""
        nodes = [(NamedNode(n), _double(frontier[n])) for n in sorted(frontier)]
        ways = [(way, table) for way, table in (("out", self.opts.edges_out), ("in", self.opts.edges_in))
                if table and nodes]
        found = run_all(self.store, [partial(self._hop, way, table, nodes, hop) for way, table in ways])
        for (way, _), rows in zip(ways, found):
            for r in rows:
                edge = _short(r["edge"].value)
                why = (f"{edge} by {_short(r['node'].value)}" if way == "in"
                       else f"{_short(r['node'].value)} {edge} it")
                for target in dict.fromkeys(r["entities"].value.split()):
                    reach(target, float(r["score"].value), hop, why)

    def _hop(self, way: str, table: Mapping[str, float], nodes: list[tuple[Term, Term]], hop: int) -> list[dict[str, Term]]:
        """One way's rows of one hop (``expand-out.rq`` / ``expand-in.rq``); the two ways are asked at once."""
        pairs: dict[str, list[tuple[Term, ...]]] = {"node nodeScore": nodes, "edge weight": _edge_table(table)}
        if way == "in":
            pairs = self._within_fan(nodes, pairs["edge weight"]) or pairs
            if not next(iter(pairs.values())):
                return []
        return self.store.select(self.query(f"expand-{way}.rq"), {
            **pairs, "decay": _double(self.opts.decay ** hop),
            "most": Literal(str(self.opts.max_fan), datatype=XSD.integer)})

    def _within_fan(self, nodes: list[tuple[Term, Term]], edges: list[tuple[Term, Term]]
                    ) -> dict[str, list[tuple[Term, ...]]] | None:
        """The ``(?node ?nodeScore ?edge ?weight)`` rows whose inward edges reach at most ``max_fan``
        entities (``expand-in-counts.rq``): ``expand-in.rq`` answers the same for them, without reading
        the hubs it would drop. None when the strategy's folder has no counting query."""
        query = self.optional_query("expand-in-counts.rq")
        if query is None:
            return None
        counts = {(r["node"].value, r["edge"].value): int(r["n"].value) for r in self.store.select(
            query, {"node": [n for n, _ in nodes], "edge": [e for e, _ in edges]})}
        return {"node nodeScore edge weight": [
            (node, score, edge, weight) for node, score in nodes for edge, weight in edges
            if 0 < counts.get((node.value, edge.value), 0) <= self.opts.max_fan]}

    def names(self, seeds: list[Candidate], weight_of: Mapping[str, float], reach: _Hits) -> None:
        """Name resolution over the seeds' code (see the module docstring): ``self.x`` in a method is its
        class's ``x``; a bare name counts when exactly one definition outside tests bears it."""
        bare: dict[str, list[Candidate]] = {}
        own: dict[str, list[Candidate]] = {}
        for c in seeds:
            names, through_self = identifiers(c.text)
            owner = c.name.rsplit(".", 1)[0] if c.kind == "Method" else c.name
            for n in names | through_self:
                if len(n) > 2 and n not in _NOT_NAMES:
                    bare.setdefault(n, []).append(c)
            for n in through_self:
                own.setdefault(f"{owner}.{n}", []).append(c)
        hits: list[tuple[Candidate, str]] = []
        if own:
            rows = self.store.select(self.query("qualified-names.rq"), {"qn": [Literal(q) for q in sorted(own)]})
            for r in rows:
                hits += [(c, r["entity"].value) for c in own[r["qn"].value]]
        bearers = self._name_counts(sorted(bare)) if bare else None
        few = [n for n in sorted(bare) if bearers is None or 0 < bearers.get(n, 0) <= AMBIGUOUS]
        if few:
            rows = self.store.select(self.query("defined-names.rq"), {
                "name": [Literal(n) for n in few], "most": Literal(str(AMBIGUOUS), datatype=XSD.integer)})
            named = {r["name"].value: r["entities"].value.split() for r in rows}
            keep = sorted({e for es in named.values() for e in es})
            places: dict[str, str] = {}
            if keep:
                for r in self._each("entity-places.rq", keep):
                    if _short(r["kind"].value) in _KINDS:
                        places[r["entity"].value] = r["path"].value
            for name, es in named.items():
                found = sorted({e for e in es if e in places})
                for c in bare[name]:
                    kin = _kin(c.path)
                    same = [e for e in found if kin is None or _kin(places[e]) == kin]
                    source = [e for e in same if role_of(places[e]) is Role.SOURCE] or same
                    if len(source) == 1:
                        hits.append((c, source[0]))
        for seed, target in hits:
            if target != seed.entity:
                s = weight_of[seed.entity] * self.opts.names * self.opts.decay
                reach(target, s, 1, f"{_short(seed.entity)} names it")

    def overrides(self, seeds: list[Candidate], weight_of: Mapping[str, float], reach: _Hits) -> None:
        """Methods of the same name one level up and down the class hierarchy."""
        methods = [c.entity for c in seeds if c.kind == "Method"]
        if not methods or not self.opts.overrides:
            return
        owners = self.store.select(self.query("method-classes.rq"), {"node": [NamedNode(m) for m in methods]})
        if not owners:
            return
        down = [(r["node"], r["cls"], r["name"], r["base"]) for r in owners]
        by_name = self._down_by_name(down)
        calls = [("up", "overrides-up.rq", "node cls name", [(r["node"], r["cls"], r["name"]) for r in owners]),
                 ("down", "overrides-down.rq", "node cls name base", [r for r in down if r[0] not in by_name]),
                 ("down", "overrides-down-by-name.rq", "node cls name base", [r for r in down if r[0] in by_name])]
        for way, query, columns, table in calls:
            if not table:
                continue
            for r in self.store.select(self.query(query), {columns: table}):
                s = weight_of[r["node"].value] * self.opts.overrides * self.opts.decay
                if r["entity"].value != r["node"].value:
                    reach(r["entity"].value, s, 1, f"overrides {_short(r['node'].value)}"
                          if way == "up" else f"overridden from {_short(r['node'].value)}")

    def _down_by_name(self, down: list[tuple[Any, Any, Any, Any]]) -> set[object]:
        """The methods whose subclasses' namesakes are cheaper to find from their name than from their
        class: the class has more than ``FEW_SUBCLASSES`` subclasses and the name fewer bearers than the
        class has subclasses (``subclass-counts.rq``, ``name-counts.rq``; both queries give the same
        answer). A strategy folder without the counting queries looks down from every class."""
        subclasses = self.optional_query("subclass-counts.rq")
        if subclasses is None:
            return set()
        wide = {r["node"]: int(r["n"].value)
                for r in self.store.select(subclasses, {"node cls": [(n, c) for n, c, _, _ in down]})
                if int(r["n"].value) > FEW_SUBCLASSES}
        bearers = self._name_counts(sorted({name.value for n, _, name, _ in down if n in wide})) if wide else None
        if not bearers:
            return set()
        return {n for n, _, name, _ in down if n in wide and bearers.get(name.value, 0) < wide[n]}

    def _name_counts(self, names: list[str]) -> dict[str, int] | None:
        """How many entities outside the cold tier bear each of ``names`` (``name-counts.rq``, counted
        without reading them); None when the strategy's folder has no such query."""
        query = self.optional_query("name-counts.rq")
        if query is None:
            return None
        return {r["name"].value: int(r["n"].value)
                for r in self.store.select(query, {"name": [Literal(n) for n in names]})}

    def constructors(self, reached: dict[str, _Reached]) -> None:
        """A class the walk reached brings its constructor, at its hop (``constructors.rq``): code that calls
        the class runs it, and its parameters are what a caller must pass."""
        if not self.opts.constructors or not reached:
            return
        # of those the plan may keep (``max_reached``, best first): past a few hundred VALUES rows the
        # query scans every class (1,441 reached on the standard library: 2 s, against 16 ms for 240)
        kept = sorted(reached, key=lambda e: (-reached[e].score, e))[: self.opts.max_reached]
        rows = self.store.select(self.query("constructors.rq"), {"node": [NamedNode(e) for e in sorted(kept)]})
        for r in rows:
            cls = reached[r["node"].value]
            _reach(reached, r["entity"].value, cls.score * self.opts.constructors, cls.hop,
                   f"constructs {_short(r['node'].value)}", cls.brief)

    def co_change(self, starts: list[Candidate], weight_of: Mapping[str, float], reach: _Hits) -> None:
        """The definitions of the files that change with the starts' files (:mod:`acms.strategies.cochange`)."""
        seeds = {c.entity: weight_of[c.entity] for c in starts}
        for hit in co_changed(self.store, self.query, seeds, self.opts.decay, self.opts.co_change):
            if hit.entity not in seeds:
                reach(hit.entity, hit.score, 1, hit.why)

    def beside(self, focus: list[Candidate], weight_of: Mapping[str, float], reach: _Hits) -> None:
        """The definitions beside the focus (``beside-members.rq``, ``beside-file.rq``): its class's other
        members, then its file's top-level classes and functions, nearest first, ``beside_max`` of them
        per focus. A change at a focus most often continues in its siblings, and the helpers it will
        call (new ones included, which no edge from its present code reaches) are most often defined
        beside it; the walk lists them as one-line references, scored one hop below the focus and after
        what the focus itself names. Without a focus or an anchor the ``beside_seeds`` best seeds stand
        in: the first stage's best guess at the place to edit, whose neighbours are the next guesses."""
        if not focus or not self.opts.beside or not self.opts.beside_max:
            return
        line = {c.entity: c.start_line for c in focus}
        nodes = {"focus": [NamedNode(e) for e in sorted(line)]}
        by_focus: dict[str, list[tuple[bool, int, str]]] = {}
        for top_level, query in ((False, "beside-members.rq"), (True, "beside-file.rq")):
            for r in self.store.select(self.query(query), nodes):
                f = r["focus"].value
                by_focus.setdefault(f, []).append((top_level, abs(int(r["start"].value) - line[f]), r["entity"].value))
        for f, found in by_focus.items():
            best: dict[str, tuple[bool, int, str]] = {}
            for key in found:  # a member of a top-level class comes once, as a member
                best[key[2]] = min(best.get(key[2], key), key)
            order = sorted(best.values())[: self.opts.beside_max]
            base = weight_of[f] * self.opts.beside * self.opts.decay
            for i, (top_level, _, entity) in enumerate(order):
                why = f"beside {_short(f)}" + (" in its file" if top_level else " in its class")
                # nearest first: the list's order survives the plan, at most a quarter off the score
                reach(entity, base * (1.0 - i / (4 * len(order))), 1, why, brief=True)

    def anchors(self) -> list[str]:
        """Entities the task's stack-trace frames and quoted error messages point at
        (:mod:`acms.strategies.anchors`), the most recent frame first."""
        text = self.ctx.request.intent
        out: list[str] = []
        found = frames(text, self.ctx.searcher.caches.ranking().files)
        if found:
            rows = self.store.select(self.query("anchor-lines.rq"), {"path line": frame_bindings(found)})
            inner: dict[tuple[str, int], str] = {}
            for r in rows:  # smallest enclosing span first
                inner.setdefault((r["path"].value, int(r["line"].value)), r["entity"].value)
            out += [inner[(f.path, f.line)] for f in found if (f.path, f.line) in inner]
        for msg in messages(text):
            hits = [f for f, _ in self.ctx.searcher.caches.keyword().top(msg, 10)]
            if not hits:
                continue
            rows = self.store.select(self.query("fragment-texts.rq"), {"frag": [NamedNode(f) for f in hits]})
            order = {f: i for i, f in enumerate(hits)}
            verbatim = literal_part(msg)
            out += [r["entity"].value for r in sorted(rows, key=lambda r: order[r["frag"].value])
                    if verbatim and verbatim in r["text"].value]
        return list(dict.fromkeys(out))

    def decided(self, nodes: Mapping[str, float]) -> list[Candidate]:
        """The current decisions about ``nodes`` (the bodies shown and what one hop reached), about the
        class or module around one, or about its file (``decisions-current.rq``, ``decision-reach.rq``),
        each whole, scored by its best node x ``decisions`` x ``decay``."""
        if not nodes or not self.opts.decisions:
            return []
        rows = self.store.select(self.query("decisions-current.rq"))
        if not rows:
            return []
        about = {r["about"].value for r in rows}
        speaks: dict[str, set[str]] = {a: {a} for a in about}  # what each subject's decision speaks for
        for r in self.store.select(self.query("decision-reach.rq"), {"about": [NamedNode(a) for a in sorted(about)]}):
            speaks[r["about"].value].add(r["member"].value)
        best: dict[str, tuple[float, str, dict[str, Term]]] = {}
        for r in rows:
            for node in speaks[r["about"].value].intersection(nodes):
                score = nodes[node] * self.opts.decisions * self.opts.decay
                held = best.get(r["frag"].value)
                if held is None or (score, held[1]) > (held[0], node):
                    best[r["frag"].value] = (score, node, r)
        return [Candidate(
            fragment=frag, entity=r["entity"].value, name=r["name"].value, kind="Decision", lod="micro",
            text=r["text"].value, path=r["path"].value, start_line=int(r["start"].value),
            end_line=int(r["end"].value), score=score, strategy=self.desc.name,
            reason=f"a decision about {_short(node)} (hop 1)", tier=_short(r["tier"].value))
            for frag, (score, node, r) in sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))]

    # -- depth -----------------------------------------------------------------------------------
    def heads(self, entities: Iterable[str]) -> dict[str, dict[str, Term]]:
        """The entities' ``entity-heads.rq`` rows (the depth step's largest read, ~300 entities at 8,000
        tokens), by entity."""
        wanted = sorted(set(entities))
        if not wanted:
            return {}
        out: dict[str, dict[str, Term]] = {}
        for r in self._each("entity-heads.rq", wanted):
            kind = _short(r["kind"].value)
            if kind in _KINDS or r["entity"].value not in out:
                out[r["entity"].value] = r
        return {e: r for e, r in out.items() if _short(r["kind"].value) in _KINDS}

    def head_candidate(self, row: dict[str, Term], score: float, why: str, level: str) -> Candidate:
        """A signature (decorators, declaration, the doc string's first line) or a one-line reference
        (decorators and declaration), in ``leaf_outline``'s form. Its lines are the entity's first ones:
        decorators and a leading doc comment (Go, Rust, Java, JS …) come before the declaration, a Python
        doc string after it, so the range reaches past the declaration by the doc's lines, not to the
        entity's end (a class's signature does not stand for its methods)."""
        decorators = row["decorators"].value.split("\n") if "decorators" in row and row["decorators"].value else []
        signature = row["signature"].value if "signature" in row else row["name"].value
        doc = row["doc"].value if "doc" in row and row["doc"].value.strip() else None
        text = leaf_outline(signature, decorators, doc if level == "signature" else None).removesuffix("\n    ...")
        start = int(row["start"].value)
        lead = len(doc.splitlines()) if doc else 0
        end = min(int(row["end"].value), start + len(decorators) + len(signature.splitlines()) + lead - 1)
        entity = row["entity"].value
        return Candidate(
            fragment=f"{entity}#{level}", entity=entity, name=row["name"].value, kind=_short(row["kind"].value),
            lod="macro", text=text, path=row["path"].value, start_line=start, end_line=end,
            score=score, strategy=self.desc.name, reason=why, tier=_short(row["tier"].value))

    # -- the plan --------------------------------------------------------------------------------
    def run(self, previous: list[Candidate], focus: list[Candidate]) -> list[Candidate]:
        budget = float(self.ctx.budget)
        seeds = sorted(previous, key=lambda c: (-c.score, c.fragment))
        top = max((c.score for c in seeds), default=1.0) or 1.0
        ordered: list[Candidate] = []
        seen: set[str] = set()
        for c in [replace(c, score=top * (1.01 + 0.001 * (len(focus) - i))) for i, c in enumerate(focus)] + seeds:
            if c.entity not in seen:
                seen.add(c.entity)
                ordered.append(c)
        # 1. bodies, in rank order, while they fit their share (the best one always)
        bodies: list[Candidate] = []
        used = 0.0
        while ordered and (not bodies or used + _cost(ordered[0].text) <= self.opts.bodies * budget):
            bodies.append(ordered.pop(0))
            used += _cost(bodies[-1].text)
        # 2. breadth from the bodies shown (what an agent reads is what it will follow) and from the best
        # seeds listed next (a focus's body, or a small budget, left them no room as bodies: the walk
        # then missed what the change uses)
        weight_of = {c.entity: min(1.0, c.score / top) for c in bodies}
        starts = bodies[: self.opts.seeds]
        if self.opts.next_seeds:
            listed = [c for c in ordered if c.score <= top][: self.opts.next_seeds]  # not a focus or an anchor
            weight_of.update((c.entity, min(1.0, c.score / top)) for c in listed)
            starts += listed
        reached: dict[str, _Reached] = {}
        given = [c for c in bodies if c.entity in {f.entity for f in focus}]
        frontier = {c.entity: weight_of[c.entity] for c in starts}
        # the steps from the starts, at once (names resolve longest), their hits taken in this order
        steps = [(self.names, starts), (self.overrides, starts), (self.co_change, starts),
                 (self.beside, given or bodies[: self.opts.beside_seeds])]
        first = [_Hits() for _ in range(len(steps) + 1)]
        run_all(self.store, [partial(step, nodes, weight_of, hits) for (step, nodes), hits in zip(steps, first)]
                + ([partial(self.edges, frontier, 1, first[-1])] if self.opts.depth >= 1 else []))
        for hits in first[:-1]:
            hits.into(reached)
        for hop in range(1, self.opts.depth + 1):
            hits = first[-1] if hop == 1 else _Hits()
            if hop > 1:
                self.edges(frontier, hop, hits)
            hits.into(reached)
            nxt = {e: r.score for e, r in reached.items() if r.hop == hop}
            frontier = dict(sorted(nxt.items(), key=lambda kv: (-kv[1], kv[0]))[: self.opts.max_reached // 2])
            if not frontier:
                break
        self.constructors(reached)
        shown = {c.entity for c in bodies}
        best = sorted(((e, r) for e, r in reached.items() if e not in shown),
                      key=lambda kv: (-kv[1].score, kv[0]))[: self.opts.max_reached]
        heads = self.heads([e for e, _ in best] + [c.entity for c in ordered[: 3 * NEXT]])
        # 3. the decisions about what is shown or one hop away, whole, then signatures of what one hop
        # reached, within their share; the rest become references
        signatures: list[Candidate] = []
        later: list[Candidate] = []
        near = {c.entity: weight_of[c.entity] for c in bodies}
        near.update((e, r.score) for e, r in reached.items() if r.hop == 1 and e not in near)
        decisions: list[Candidate] = []
        for decision in self.decided(near):
            if used + _cost(decision.text) <= (self.opts.bodies + self.opts.signatures) * budget:
                decisions.append(decision)
                used += _cost(decision.text)
        for e, r in best:
            row = heads.get(e)
            if row is None:
                continue
            why = f"{r.why} (hop {r.hop})"
            sig = self.head_candidate(row, r.score, why, "reference" if r.brief else "signature")
            if r.hop == 1 and used + _cost(sig.text) <= (self.opts.bodies + self.opts.signatures) * budget:
                signatures.append(sig)
                used += _cost(sig.text)
            else:
                later.append(self.head_candidate(row, r.score, why, "reference"))
        # 4. more bodies while room is left beside a reserve for references; 5. references
        reserve = min((1.0 - self.opts.bodies - self.opts.signatures) * budget,
                      sum(_cost(c.text) for c in later) + len(ordered) * 2 * HEADER_TOKENS)
        while ordered and used + _cost(ordered[0].text) <= budget - reserve:
            bodies.append(ordered.pop(0))
            used += _cost(bodies[-1].text)
        nxt: list[Candidate] = []
        references = later
        for c in ordered:
            row = heads.get(c.entity)
            if row is not None:
                ref = self.head_candidate(row, c.score / (top * 1.01), f"ranked next: {c.reason}", "reference")
                (nxt if len(nxt) < NEXT else references).append(ref)
        out = ([replace(c, score=TIER_LIFT["body"] + c.score / (top * 1.01)) for c in bodies]
               + [replace(c, score=TIER_LIFT["decision"] + min(c.score, 0.499)) for c in decisions]
               + [replace(c, score=TIER_LIFT["next"] + min(c.score, 0.999)) for c in nxt]
               + [replace(c, score=TIER_LIFT["signature"] + min(c.score, 0.999)) for c in signatures]
               + [replace(c, score=TIER_LIFT["reference"] + min(c.score, 0.999)) for c in references])
        # Seeds with no reference (no declaration to show: a module, a section) follow, unplanned.
        named = {c.entity for c in nxt + references}
        out += [replace(c, score=min(c.score / (top * 1.01), 0.999)) for c in ordered if c.entity not in named]
        return out + self.whole(out, budget)

    def whole(self, out: list[Candidate], budget: float) -> list[Candidate]:
        """The bodies of the signatures and references planned, best first, ranked below everything: the
        packer shows one in place of its head only when everything planned is in and the budget still
        has room (:func:`acms.assembly.dedupe.fuller_forms`), so the budget is filled with code the walk
        found relevant. None when what is planned already holds ``FULL`` budgets of text."""
        from acms.strategies.engine import entity_candidates

        if sum(estimate(c.text) for c in out) > FULL * budget:
            return []
        heads = sorted((c for c in out if c.lod == "macro" and c.fragment.endswith(("#signature", "#reference"))),
                       key=lambda c: (-c.score, c.fragment))[: self.opts.max_reached]
        reason = {c.entity: c.reason for c in heads}
        bodies = entity_candidates(self.ctx, [c.entity for c in heads], "", self.desc)
        return [replace(c, score=0.0, reason=f"{reason[c.entity]}; shown whole: the budget had room")
                for c in bodies if c.lod == "micro"]


def expand_phase(desc: StrategyDescriptor, phase: Phase, ctx: RunContext) -> list[Candidate]:
    from acms.strategies.engine import entity_candidates, focus_candidates

    opts = ExpandOptions.parse(desc.name, phase.options)
    walk = Expansion(desc, phase, ctx, opts)
    focus = focus_candidates(ctx, desc) if ctx.request.focus else []
    anchored = [e for e in walk.anchors() if e not in {c.entity for c in focus}]
    focus += entity_candidates(ctx, anchored[: opts.anchors], "named by the task's trace or error message", desc)
    return walk.run(list(ctx.previous), focus)
