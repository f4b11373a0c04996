"""Plans and decisions of one index: create and show plans, record and list decisions."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from acms.decisions import records
from acms.decisions.model import DecisionInfo, PlanInfo
from acms.errors import AcmsError
from acms.retrieval.follow import before_write, follow_write
from acms.service.host import Host
from acms.service.identity import index_minter
from acms.store.protocol import GraphStore
from acms.vocab import IriMinter


@dataclass
class PlanTree:
    plans: list[PlanInfo]
    ancestors: list[str] = field(default_factory=list)
    unplanned: list[DecisionInfo] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"plans": [p.as_dict() for p in self.plans], "ancestors": self.ancestors,
                "unplanned": [d.as_dict() for d in self.unplanned]}


class Plans:
    """``index.plans``."""

    def __init__(self, host: Host) -> None:
        self._host = host

    def _minter(self, store: GraphStore) -> IriMinter:
        return index_minter(self._host.root, self._host.settings, store)

    def create(self, name: str, parent: str | None = None) -> str:
        """Create plan ``name`` (optionally inside ``parent``); its IRI."""
        with self._host.session.writing() as store:
            return records.create_plan(store, self._minter(store), name, parent).value

    def show(self, plan: str | None = None) -> PlanTree:
        """The plans as a tree with their decisions; with ``plan``, its subtree and its ancestors."""
        with self._host.session.reading() as store:
            roots, unplanned = records.plan_tree(store, plan)
            return PlanTree(roots, records.ancestors(store, plan) if plan else [], unplanned)

    def record(self, text: str, *, plan: str, title: str | None = None, about: Sequence[str] = (),
               supersedes: str | None = None, status: str = "accepted",
               new_plan: bool = False) -> DecisionInfo | str:
        """Record a decision; the decision as listed (its id alone if it cannot be listed back).
        ``new_plan``: a plan of that name is created in the same write when none exists (an agent
        names the work it is doing; it has no ``acms plan create`` step)."""
        with self._host.session.writing() as store:
            before = before_write(store, self._host.layout)
            ident = records.record_decision(store, self._minter(store), plan=plan, text=text, title=title, about=about,
                                            supersedes=supersedes, status=status,
                                            keep_secrets=self._host.settings.store_secrets, new_plan=new_plan)
            # searchable at once; should the caches fail, the decision is written and their key has moved: a
            # reader builds them again
            with contextlib.suppress(AcmsError, OSError):
                follow_write(store, self._host.layout, self._host.settings, before)
            return next((d for d in records.list_decisions(store) if d.id == ident), ident)

    def record_reply(self, text: str, *, plan: str, title: str | None = None, about: Sequence[str] = (),
                     supersedes: str | None = None, status: str = "accepted") -> dict[str, Any]:
        """What an agent's record answers (the MCP tool, ``POST /v0/decisions``): the decision as listed,
        with ``secrets_replaced`` when its text lost any; the plan is made when none has that name."""
        info = self.record(text, plan=plan, title=title, about=about, supersedes=supersedes, status=status,
                           new_plan=True)
        reply = {"id": info} if isinstance(info, str) else info.as_dict()
        replaced = self.secrets_replaced(f"{text}\n{title or ''}")
        if replaced:
            reply["secrets_replaced"] = replaced  # the graph holds [REDACTED:kind] in their place
        return reply

    def secrets_replaced(self, text: str) -> dict[str, int]:
        """What recording ``text`` replaces by ``[REDACTED:kind]`` (kind -> count): nothing with the
        ``store_secrets`` setting, which keeps a decision's text as typed."""
        if self._host.settings.store_secrets:
            return {}
        from acms.privacy import scrub  # the detector stack is only imported by writers

        return scrub(text).kinds

    def decisions(self, about: str | None = None) -> list[DecisionInfo]:
        """Every decision, recorded and from ADR files, oldest first; ``about``: only those about an entity."""
        with self._host.session.reading() as store:
            return records.list_decisions(store, about)
