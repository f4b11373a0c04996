"""One registry for strategies and the phase engines they run (the built-ins register through the same
path as a user's). A user entry named like a built-in one, or like another user entry, is a
``ConfigError``: nothing is silently replaced."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from acms import resources
from acms.errors import ConfigError, UsageError
from acms.registry import Registry
from acms.strategies.descriptor import StrategyDescriptor, parse_descriptor
from acms.strategies.engine import BUILTIN_ENGINES, PhaseEngine


@dataclass(frozen=True)
class Choice:
    strategy: StrategyDescriptor
    reason: str


class StrategyRegistry:
    def __init__(self) -> None:
        self._items: dict[str, StrategyDescriptor] = {}
        self._engines: Registry[PhaseEngine] = Registry("phase engine")

    def register_engine(self, name: str, engine: PhaseEngine, *, builtin: bool = False) -> None:
        self._engines.register(name, engine, builtin=builtin)

    @property
    def engines(self) -> Mapping[str, PhaseEngine]:
        return self._engines

    def register(self, desc: StrategyDescriptor) -> None:
        """Add a strategy whose phases use registered engines; a name already taken is an error."""
        taken = self._items.get(desc.name)
        if taken is not None:
            where = "a built-in strategy" if taken.builtin else f"the strategy in {taken.folder}"
            raise ConfigError(f"strategy {desc.name!r} in {desc.folder} has the name of {where}; rename it")
        bad = [p.engine for p in desc.phases if p.engine not in self._engines]
        if bad:
            raise ConfigError(f"strategy {desc.name}: unknown phase engine(s) {', '.join(bad)}; "
                              f"known: {', '.join(sorted(self._engines))}")
        self._items[desc.name] = desc

    def load_folder(self, folder: object, builtin: bool) -> None:
        """Every ``*/strategy.toml`` below ``folder``."""
        for child in sorted(folder.iterdir(), key=lambda c: c.name):  # type: ignore[attr-defined]
            toml = child / "strategy.toml"
            if child.is_dir() and toml.is_file():
                self.register(parse_descriptor(toml.read_text(encoding="utf-8"), child, builtin))

    @classmethod
    def default(cls, extra_dirs: Iterable[Path] = ()) -> StrategyRegistry:
        reg = cls()
        for name, engine in BUILTIN_ENGINES:
            reg.register_engine(name, engine, builtin=True)
        reg.load_folder(resources.asset("queries", "strategies"), builtin=True)
        for d in extra_dirs:
            if not d.is_dir():
                raise ConfigError(f"strategies directory not found: {d}")
            reg.load_folder(d, builtin=False)
        return reg

    def names(self) -> list[str]:
        return sorted(self._items)

    def all(self) -> list[StrategyDescriptor]:
        return [self._items[n] for n in self.names()]

    def describe(self) -> list[dict[str, object]]:
        """One row per strategy, as ``acms strategies --json`` and ``GET /v0/strategies`` show them."""
        return [{"name": d.name, "quality": d.quality, "requires": list(d.requires), "builtin": d.builtin,
                 "phases": [{"engine": p.engine, "share": p.share} for p in d.phases], "summary": d.summary}
                for d in self.all()]

    def get(self, name: str) -> StrategyDescriptor:
        try:
            return self._items[name]
        except KeyError:
            raise UsageError(f"unknown strategy {name!r}; known: auto, {', '.join(self.names())}") from None

    def choose(self, name: str, traits: set[str], capabilities: set[str]) -> Choice:
        """An explicit strategy, or ``auto``: the best ``can_handle`` × quality.

        A request with a specialist trait (plan, history, decision) is a question only the strategies
        declaring that trait answer, whatever their general quality; they compete among themselves.
        """
        if name != "auto":
            desc = self.get(name)
            confidence, why = desc.can_handle(traits, capabilities)
            if confidence == 0.0:
                return Choice(desc, f"requested explicitly ({why}: results may be empty)")
            return Choice(desc, "requested explicitly")
        scored = []
        specialists = [d for d in self.all() if d.specialties & traits and d.can_handle(traits, capabilities)[0] > 0]
        for desc in specialists or self.all():
            confidence, why = desc.can_handle(traits, capabilities)
            scored.append((confidence * desc.quality, desc.name, desc, why))
        scored.sort(key=lambda t: (-t[0], t[1]))
        best = scored[0]
        if best[0] <= 0:
            raise UsageError("no strategy can handle this request with this index")
        runner_up = next((s for s in scored[1:]), None)
        reason = f"auto: {best[1]} scored {best[0]:.2f} ({best[3]})"
        if runner_up:
            reason += f" over {runner_up[1]} {runner_up[0]:.2f}"
        return Choice(best[2], reason)
