"""The hot/warm/cold tiers of one index: counts and policy, rebalance, the one-tier check."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acms.service.host import Host
from acms.temporal import tiers as tiers_mod
from acms.temporal.tiers import Rebalance


@dataclass
class TierCounts:
    tiers: dict[str, dict[str, int]]
    policy: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        return {"tiers": self.tiers, "policy": self.policy}


@dataclass
class TierCheck:
    violations: list[tuple[str, int]] = field(default_factory=list)  # (resource, number of tiers)

    @property
    def ok(self) -> bool:
        return not self.violations

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "violations": [{"resource": s, "tiers": n} for s, n in self.violations]}


class Tiers:
    """``index.tiers``."""

    def __init__(self, host: Host) -> None:
        self._host = host

    def counts(self) -> TierCounts:
        """Triples and entities per tier, and the policy that assigns them."""
        with self._host.session.reading() as store:
            return TierCounts(tiers_mod.counts(store), tiers_mod.Policy.of(self._host.settings).describe())

    def rebalance(self) -> Rebalance:
        """Apply the tier policy now (an index run does it after every run)."""
        with self._host.session.writing() as store:
            result = tiers_mod.rebalance(store, tiers_mod.Policy.of(self._host.settings))
            store.flush()
            return result

    def check(self) -> TierCheck:
        with self._host.session.reading() as store:
            return TierCheck(tiers_mod.violations(store))
