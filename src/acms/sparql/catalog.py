"""The query catalog: every ``.rq`` / ``.ru`` file under ``queries/``, with its header parsed.

Header convention (one ``#`` comment block at the top, the grlc idea)::

    # name: callers
    # summary: Functions and methods that call a symbol.
    # param: name  Short or qualified name of the called symbol.
    # returns: caller qualifiedName sourceRef

A test parses every file and checks that each declared parameter appears in the body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from acms import resources
from acms.errors import UsageError

_HEADER = re.compile(r"^#\s*(name|summary|param|returns|scope):\s*(.*)$")


@dataclass(frozen=True)
class QuerySpec:
    key: str  # folder/name, e.g. "explore/callers"
    name: str
    summary: str
    params: tuple[tuple[str, str], ...]  # (name, help)
    returns: str
    text: str
    scope: str = "project"  # "store": runs over every project of a shared store, on purpose


    @property
    def folder(self) -> str:
        return self.key.split("/", 1)[0]

    @property
    def is_update(self) -> bool:
        return self.key.endswith(".ru")


def parse_spec(key: str, text: str) -> QuerySpec:
    meta: dict[str, str] = {}
    params: list[tuple[str, str]] = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        m = _HEADER.match(line)
        if not m:
            continue
        field, value = m.group(1), m.group(2).strip()
        if field == "param":
            pname, _, phelp = value.partition(" ")
            params.append((pname, phelp.strip()))
        else:
            meta[field] = value
    return QuerySpec(
        key=key,
        name=meta.get("name", key.rsplit("/", 1)[-1]),
        summary=meta.get("summary", ""),
        params=tuple(params),
        returns=meta.get("returns", ""),
        text=text,
        scope=meta.get("scope", "project"),
    )


@cache
def all_queries() -> dict[str, QuerySpec]:
    out: dict[str, QuerySpec] = {}
    root = resources.asset("queries")
    for node in resources.iter_files("queries"):
        if not node.name.endswith((".rq", ".ru")):
            continue
        # Rebuild the folder-relative key from the traversal (Traversable has no relative_to).
        key = _key_of(root, node)
        base = key[:-3] if key.endswith(".rq") else key
        out[base] = parse_spec(key, node.read_text(encoding="utf-8"))
    return out


def _key_of(root: object, node: object) -> str:
    text_root, text_node = str(root).rstrip("/"), str(node)
    return text_node[len(text_root) + 1 :].replace("\\", "/")


def get(key: str) -> QuerySpec:
    """A query by ``folder/name`` (``.rq`` implied; updates keep their ``.ru``)."""
    spec = _one(key) if all_queries.cache_info().currsize == 0 else all_queries().get(key)
    if spec is None:
        raise UsageError(f"unknown query {key!r}")
    return spec


@cache
def _one(key: str) -> QuerySpec | None:
    """A query read from its own file: a command that runs a few needs no walk of every query file and
    parse of every header (~20 ms a process)."""
    name = key if key.endswith(".ru") else f"{key}.rq"
    node = resources.asset("queries", *name.split("/"))
    if not name.startswith(("/", ".")) and ".." not in name.split("/") and node.is_file():
        return parse_spec(name, node.read_text(encoding="utf-8"))
    return all_queries().get(key)


def text(key: str) -> str:
    return get(key).text


def saved(name: str) -> QuerySpec:
    """A saved exploration query by its short name; the error lists the valid names."""
    spec = all_queries().get(f"explore/{name}")
    if spec is None:
        names = ", ".join(sorted(k.split("/", 1)[1] for k in all_queries() if k.startswith("explore/")))
        raise UsageError(f"unknown saved query {name!r}; saved queries: {names}")
    return spec
