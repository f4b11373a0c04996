"""The one place that finds the shipped assets: ontology/, shapes/, queries/ and languages/.

In a wheel they live in the package as ``acms/_assets/...`` (hatch force-include) and are read with
importlib.resources. In an editable checkout the same folders sit at the repository's top level, where
people read and edit them.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

ASSET_DIRS = ("ontology", "shapes", "queries", "languages")


@cache
def assets_root() -> Traversable:
    packaged = resources.files("acms") / "_assets"
    if packaged.is_dir():
        return packaged
    checkout = Path(str(resources.files("acms"))).parents[1]
    if all((checkout / d).is_dir() for d in ASSET_DIRS):
        return checkout
    raise RuntimeError("acms is installed without its ontology/shapes/queries/languages assets")


def asset(*parts: str) -> Traversable:
    node = assets_root()
    for part in parts:
        node = node / part
    return node


def read_text(*parts: str) -> str:
    return asset(*parts).read_text(encoding="utf-8")


def iter_files(*parts: str, suffix: str = "") -> list[Traversable]:
    """Files under an asset folder (recursively), sorted by name for determinism."""
    out: list[Traversable] = []

    def walk(node: Traversable) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.is_dir():
                walk(child)
            elif child.name.endswith(suffix):
                out.append(child)

    root = asset(*parts)
    if root.is_dir():
        walk(root)
    return out
