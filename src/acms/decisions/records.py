"""Plans and recorded decisions: validated writes and the reads behind ``acms plan`` / ``acms decision``.

Every write is one ``store.replace`` call (one transaction): the new nodes are checked against the
shapes first (``validate_batch``), and superseding a decision runs ``rules/retire-decision.ru`` in the
same request, so the old decision is never half-retired. Plans and recorded decisions live in the warm
tier and carry no ``uko:inFile``, so re-indexing never touches them; retired ones move to cold.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from datetime import UTC, datetime

from pyoxigraph import Literal, NamedNode, Quad

from acms.decisions.emit import DecisionData, decision_quads
from acms.decisions.model import RECORDABLE, RECORDED_PREFIX, DecisionInfo, PlanInfo
from acms.errors import UsageError
from acms.ingest.emit import A, lit, time_lit
from acms.sparql import catalog
from acms.store.protocol import GraphStore
from acms.validation.batch import validate_batch
from acms.vocab import PROV, TIER_WARM, UKO, IriMinter, code_iri_ends, names_end

MAX_NAME = 200
MAX_TITLE = 80
MAX_TEXT = 20_000


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _q(key: str) -> str:
    return catalog.text(f"decisions/{key}")


def _is_iri(text: str) -> bool:
    return text.startswith(("http://", "https://", "urn:")) or (text.startswith("<") and text.endswith(">"))


def _iri(text: str) -> NamedNode:
    try:
        return NamedNode(text[1:-1] if text.startswith("<") else text)
    except ValueError:
        raise UsageError(f"invalid IRI {text!r}") from None


def _suggest(word: str, candidates: Sequence[str]) -> str:
    near = difflib.get_close_matches(word, list(candidates), n=5, cutoff=0.5)
    return f"; did you mean: {', '.join(near)}" if near else ""


# ------------------------------------------------------------------ plans
def resolve_plan(store: GraphStore, key: str) -> tuple[NamedNode, str]:
    """A plan by name or IRI, as (IRI, name); unknown -> UsageError naming the near plan names."""
    term = _iri(key) if _is_iri(key) else Literal(key)
    rows = store.select(_q("plan-by-name"), {"key": term})
    if rows:
        return rows[0]["plan"], rows[0]["name"].value  # type: ignore[return-value]
    names = [r["name"].value for r in store.select(_q("plans"))]
    known = f"; plans: {', '.join(names[:20])}" if names and not _suggest(key, names) else _suggest(key, names)
    raise UsageError(f"unknown plan {key!r}{known or ' (no plans yet: acms plan create NAME)'}")


def create_plan(store: GraphStore, minter: IriMinter, name: str, parent: str | None = None,
                now: str | None = None) -> NamedNode:
    """A new plan in the warm tier; the name is its identity, so it must be unused."""
    plan, quads = _plan_quads(store, minter, name, parent, now)
    validate_batch(store, quads)
    store.replace([], quads)
    return plan


def _plan_quads(store: GraphStore, minter: IriMinter, name: str, parent: str | None,
                now: str | None) -> tuple[NamedNode, list[Quad]]:
    name = name.strip()
    if not name or len(name) > MAX_NAME or any(ch in name for ch in "\n\r\t"):
        raise UsageError(f"a plan name is one line of 1 to {MAX_NAME} characters, got {name!r}")
    if store.select(_q("plan-by-name"), {"key": Literal(name)}):
        raise UsageError(f"plan {name!r} already exists")
    plan = minter.plan(name)
    g = TIER_WARM
    quads = [
        Quad(plan, A, UKO.Plan, g),
        Quad(plan, UKO.name, lit(name), g),
        Quad(plan, PROV.generatedAtTime, time_lit(now or now_iso()), g),
    ]
    if parent is not None:
        parent_iri, _ = resolve_plan(store, parent)
        quads.append(Quad(plan, UKO.parentPlan, parent_iri, g))
    return plan, quads


# ------------------------------------------------------------------ entities
def resolve_entity(store: GraphStore, key: str) -> tuple[NamedNode, str]:
    """ENTITY of ``--about``: an IRI, ``path::Qualified.name``, a qualified name, a path or a unique short
    name, as (IRI, label). Unknown or ambiguous -> UsageError with the candidates."""
    key = key.strip()
    if _is_iri(key):
        node = _iri(key)
        if not store.select(catalog.text("validation/types-of"), {"node": node}):
            raise UsageError(f"no entity {key} in the index")
        return node, node.value
    if "::" in key:
        path, qual = key.split("::", 1)
        rows = store.select(catalog.text("index/entities-in-file"), {"path": Literal(path)})
        hits = sorted({(r["qn"].value, r["entity"].value) for r in rows
                       if r["qn"].value == qual or r["qn"].value.endswith("." + qual)})
        if not hits:  # Point.norm for Rust's Point.Norm.norm (a method of "impl Norm for Point")
            hits = sorted({(r["qn"].value, r["entity"].value) for r in rows if _skips_scopes(qual, r["qn"].value)})
        if len(hits) == 1:
            return NamedNode(hits[0][1]), hits[0][0]
        if hits:
            raise UsageError(f"{key!r} is ambiguous: {', '.join(q for q, _ in hits[:8])}")
        names = [r["qn"].value for r in rows]
        hint = _suggest(qual, names) or (f"; {path} defines: {', '.join(sorted(names)[:8])}" if names
                                         else f"; no indexed file {path!r}")
        raise UsageError(f"no entity {qual!r} in {path}{hint}")
    rows = store.select(_q("resolve-entity"), {"key": Literal(key)})
    tiers = [[r for r in rows if r["match"].value == match] for match in ("qualified", "path", "name")]
    if not rows and names_end(key):  # the end of a qualified name (Class.method): by the short name, then the tail
        ends = store.select(_q("resolve-entity"), {"key": Literal(key.rsplit(".", 1)[1])})
        tiers.append([r for r in ends if r["match"].value == "name" and code_iri_ends(r["entity"].value, key)])
    for tier in tiers:
        hits = sorted({(r["label"].value, r["entity"].value) for r in tier})
        if len(hits) == 1:
            return NamedNode(hits[0][1]), hits[0][0]
        if hits:
            raise UsageError(f"{key!r} names {len(hits)} entities, give one of: "
                             f"{', '.join(label for label, _ in hits[:8])}")
    hint = _near_entities(store, key)
    raise UsageError(f"no entity named {key!r} in the index (give a qualified name or its end, Class.method; "
                     f"a path; path::Qualified.name or an IRI){hint}")


def _skips_scopes(qual: str, qualname: str) -> bool:
    """Whether ``qual``'s parts are ``qualname``'s last part and, in order, some parts before it."""
    want, have = qual.split("."), qualname.split(".")
    if want[-1] != have[-1]:
        return False
    rest = iter(have[:-1])
    return all(part in rest for part in want[:-1])


def _near_entities(store: GraphStore, key: str) -> str:
    """Names that look like ``key``: candidates sharing its first letters, ranked by similarity."""
    last = re.split(r"[.:/]", key)[-1] or key
    rows = store.select(_q("near-entities"), {"needle": Literal(last[:4].lower())})
    labels = [r["label"].value for r in rows]

    def likeness(label: str) -> float:
        tail = re.split(r"[.:/]", label)[-1]
        return max(difflib.SequenceMatcher(None, key, label).ratio(),
                   difflib.SequenceMatcher(None, last, tail).ratio())

    near = sorted((x for x in labels if likeness(x) >= 0.6), key=lambda x: (-likeness(x), x))[:5]
    return f"; near matches: {', '.join(near)}" if near else ""


# ------------------------------------------------------------------ decisions
def resolve_decision(store: GraphStore, key: str) -> dict[str, object]:
    """A decision by id (``D-3``, an ADR's path) or IRI: its row (decision, id, status, tier, file)."""
    term = _iri(key) if _is_iri(key) else Literal(key)
    rows = store.select(_q("decision-by-id"), {"key": term})
    if rows:
        return rows[0]  # type: ignore[return-value]
    ids = [r["id"].value for r in store.select(_q("decisions"))]
    raise UsageError(f"unknown decision {key!r}{_suggest(key, ids) or (' (no decisions yet)' if not ids else '')}")


def next_id(store: GraphStore) -> str:
    taken = [r["id"].value[len(RECORDED_PREFIX):] for r in store.select(_q("recorded-ids"))]
    numbers = [int(n) for n in taken if n.isdigit()]
    return f"{RECORDED_PREFIX}{max(numbers, default=0) + 1}"


def default_title(text: str) -> str:
    first = next((line.strip().lstrip("#").strip() for line in text.splitlines() if line.strip()), "")
    if len(first) <= MAX_TITLE:
        return first
    cut = first[:MAX_TITLE].rsplit(" ", 1)[0]
    return cut.rstrip(" ,.;:") + "…"


def fragment_text(ident: str, title: str, status: str, plan: str | None, about: Sequence[str],
                  supersedes: Sequence[str], statement: str) -> str:
    """What a context shows of a recorded decision: a small header, then the statement."""
    lines = [f"## Decision {ident}: {title}", f"Status: {status}" + (f"; plan: {plan}" if plan else "")]
    if about:
        lines.append(f"About: {', '.join(about)}")
    if supersedes:
        lines.append(f"Supersedes: {', '.join(supersedes)}")
    return "\n".join([*lines, "", statement.strip()])


def record_decision(
    store: GraphStore,
    minter: IriMinter,
    *,
    plan: str,
    text: str,
    title: str | None = None,
    about: Sequence[str] = (),
    supersedes: str | None = None,
    status: str = "accepted",
    now: str | None = None,
    keep_secrets: bool = False,
    new_plan: bool = False,
) -> str:
    """Record a decision in a plan; with ``supersedes``, retire that one in the same transaction.
    Unless ``keep_secrets`` (the ``store_secrets`` setting), a secret in its text or title is replaced by
    ``[REDACTED:kind]`` first, as a file's is at ingest: a decision is searched, shown and exported as
    code is.

    ``new_plan``: a plan named ``plan`` is created in the same write when none exists.

    Returns the new decision's id (``D-<n>``).
    """
    statement = text.strip()
    if not statement:
        raise UsageError("a decision needs its text")
    if len(statement) > MAX_TEXT:
        raise UsageError(f"a decision's text is at most {MAX_TEXT} characters (got {len(statement)})")
    if status not in RECORDABLE:
        raise UsageError(f"status must be one of {', '.join(RECORDABLE)} (got {status!r}); "
                         "superseding retires a decision")
    if not keep_secrets:
        from acms.privacy import scrub  # the detector stack is only imported by writers

        statement = scrub(statement).text
        title = scrub(title).text if title else title
    title = (title or "").strip() or default_title(statement)
    if "\n" in title:
        raise UsageError("a decision title is one line")
    when = now or now_iso()
    plan_quads: list[Quad] = []
    try:
        plan_iri, plan_name = resolve_plan(store, plan)
    except UsageError:
        if not new_plan or _is_iri(plan):
            raise
        plan_iri, plan_quads = _plan_quads(store, minter, plan, None, when)
        plan_name = plan.strip()
    entities = [resolve_entity(store, key) for key in about]
    entities = list(dict.fromkeys(entities))
    deletes: list[tuple[str, dict[str, object]]] = []
    old_ids: list[str] = []
    old_iris: list[NamedNode] = []
    if supersedes is not None:
        old = resolve_decision(store, supersedes)
        old_id = old["id"].value  # type: ignore[attr-defined]
        if "file" in old:
            raise UsageError(f"decision {old_id} comes from an ADR file; supersede it in the file "
                             "(a new ADR with 'Supersedes ...', the old one 'Superseded by ...') and re-index")
        if old["tier"].value.endswith("/cold") or old["status"].value == "retired":  # type: ignore[attr-defined]
            raise UsageError(f"decision {old_id} is already retired")
        old_ids.append(old_id)
        old_iris.append(old["decision"])  # type: ignore[arg-type]
        deletes.append((catalog.text("rules/retire-decision.ru"),
                        {"decision": old["decision"], "now": time_lit(when)}))
    ident = next_id(store)
    data = DecisionData(
        ident=ident, title=title, statement=statement, status=status, generated_at=when,
        fragment_text=fragment_text(ident, title, status, plan_name, [label for _, label in entities],
                                    old_ids, statement),
        source_ref_path=f"decisions/{ident}", plan=plan_iri,
        about=tuple(iri for iri, _ in entities), supersedes=tuple(old_iris),
    )
    quads = plan_quads + decision_quads(minter, data, TIER_WARM)
    validate_batch(store, quads)
    store.replace(deletes, quads)  # type: ignore[arg-type]
    return ident


# ------------------------------------------------------------------ reads
def list_decisions(store: GraphStore, about: str | None = None) -> list[DecisionInfo]:
    """Every decision (recorded and ADR), oldest first; ``about`` keeps those about that entity."""
    links: dict[str, dict[str, list[tuple[str, str]]]] = {}
    for r in store.select(_q("decision-links")):
        links.setdefault(r["decision"].value, {}).setdefault(r["link"].value, []).append(
            (r["target"].value, r["label"].value))
    rows = store.select(_q("decisions"))
    id_of = {r["decision"].value: r["id"].value for r in rows}
    superseded_by: dict[str, list[str]] = {}
    for iri, by_link in links.items():
        for target, _ in by_link.get("supersedes", []):
            superseded_by.setdefault(target, []).append(id_of.get(iri, iri))
    target_iri = resolve_entity(store, about)[0].value if about else None
    out: dict[str, DecisionInfo] = {}
    for r in rows:
        iri = r["decision"].value
        mine = links.get(iri, {})
        if target_iri is not None and target_iri not in {t for t, _ in mine.get("about", [])}:
            continue
        if iri in out:  # a node in two tiers would be a bug elsewhere; show it once
            continue
        out[iri] = DecisionInfo(
            id=r["id"].value, iri=iri, title=r["title"].value, text=r["statement"].value, status=r["status"].value,
            tier=r["tier"].value.rsplit("/", 1)[-1],
            plan=r["planName"].value if "planName" in r else None,
            source=r["source"].value if "source" in r else None,
            created=r["created"].value, retired_at=r["retiredAt"].value if "retiredAt" in r else None,
            about=sorted({label for _, label in mine.get("about", [])}),
            supersedes=sorted({id_of.get(t, label) for t, label in mine.get("supersedes", [])}),
            superseded_by=sorted(set(superseded_by.get(iri, []))),
        )
    return list(out.values())


def plan_tree(store: GraphStore, plan: str | None = None) -> tuple[list[PlanInfo], list[DecisionInfo]]:
    """The plan forest (or the subtree of ``plan``) with each plan's decisions, and the decisions that
    belong to no plan (ADRs) when the whole forest is asked for."""
    focus = resolve_plan(store, plan)[0].value if plan else None
    plans = store.select(_q("plans"))
    decisions = list_decisions(store)
    by_plan: dict[str | None, list[DecisionInfo]] = {}
    for d in decisions:
        by_plan.setdefault(d.plan, []).append(d)
    name_of = {r["plan"].value: r["name"].value for r in plans}
    children: dict[str | None, list[dict[str, object]]] = {}
    for r in plans:
        parent = r["parent"].value if "parent" in r else None
        children.setdefault(parent, []).append(r)  # type: ignore[arg-type]

    def build(row: dict[str, object]) -> PlanInfo:
        iri = row["plan"].value  # type: ignore[attr-defined]
        name = row["name"].value  # type: ignore[attr-defined]
        parent = row["parent"].value if "parent" in row else None  # type: ignore[attr-defined]
        return PlanInfo(
            name=name, iri=iri, parent=name_of.get(parent) if parent else None,
            created=row["created"].value,  # type: ignore[attr-defined]
            decisions=_current_first(by_plan.get(name, [])),
            children=[build(c) for c in children.get(iri, [])],
        )

    if focus is not None:
        return [build(next(r for r in plans if r["plan"].value == focus))], []  # type: ignore[arg-type]
    roots = [r for r in plans if "parent" not in r or r["parent"].value not in name_of]
    return [build(r) for r in roots], _current_first(by_plan.get(None, []))  # type: ignore[arg-type]


def _current_first(decisions: list[DecisionInfo]) -> list[DecisionInfo]:
    return sorted(decisions, key=lambda d: (d.retired, d.created or "", d.id))


def ancestors(store: GraphStore, plan: str) -> list[str]:
    """Names of a plan's ancestors, nearest first (for ``plan show PLAN``)."""
    rows = store.select(_q("plans"))
    parent_of = {r["plan"].value: r["parent"].value for r in rows if "parent" in r}
    name_of = {r["plan"].value: r["name"].value for r in rows}
    out: list[str] = []
    node = resolve_plan(store, plan)[0].value
    while node in parent_of and len(out) < 64:
        node = parent_of[node]
        out.append(name_of.get(node, node))
    return out
