"""Named entries that built-ins and users register through the same path (extractors, embedding
providers, phase engines); a name registered twice is a ``ConfigError``, never a silent replacement."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

from acms.errors import ConfigError

T = TypeVar("T")

__all__ = ["Registry"]


class Registry(Mapping[str, T], Generic[T]):
    """Read like a mapping; ``kind`` names the entries in error messages ("embedding provider")."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}
        self._builtin: set[str] = set()

    @classmethod
    def of_builtins(cls, kind: str, items: Mapping[str, T]) -> Registry[T]:
        """A registry holding ``items`` as its built-in entries."""
        registry: Registry[T] = cls(kind)
        for name, item in items.items():
            registry.register(name, item, builtin=True)
        return registry

    def register(self, name: str, item: T, *, builtin: bool = False) -> None:
        if name in self._items:
            owner = "a built-in one" if name in self._builtin else "another one"
            raise ConfigError(f"{self.kind} {name!r} is already registered by {owner}; choose another name")
        self._items[name] = item
        if builtin:
            self._builtin.add(name)

    def is_builtin(self, name: str) -> bool:
        return name in self._builtin

    def __getitem__(self, name: str) -> T:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)
