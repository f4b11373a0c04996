"""Text that may not cross an edge: control characters, NUL bytes, lone surrogates, broken IRIs.

Every edge (CLI arguments, ``render_request.v0`` bodies, endpoint parameters) checks its strings
here and answers with one line naming the field, instead of letting a NUL byte reach the store or a
lone surrogate (an undecodable command-line byte) crash an encoder deep inside.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

__all__ = ["WIRE_MAX_BYTES", "InputProblem", "bad_iri", "clip", "strict_json", "strict_toml", "text_problem",
           "walk_strings"]

# A render_request.v0 on the wire: a task may be long (an issue with its logs and traces: up to the
# schema's 1 MiB intent); the limit leaves room for that and the other fields in JSON escapes. Here, not
# with the request's schema, so that a command reads a request without importing its checker.
WIRE_MAX_BYTES = 8 * 1024 * 1024

# C0 controls other than tab, newline and carriage return; DEL; C1 controls; lone surrogates.
_BAD = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f\ud800-\udfff]")


def text_problem(value: str) -> str | None:
    """Why ``value`` may not be used, or None."""
    m = _BAD.search(value)
    if m is None:
        return None
    ch = m.group()
    what = "a lone surrogate (text that is not valid Unicode)" if "\ud800" <= ch <= "\udfff" else "a control character"
    return f"contains {what} U+{ord(ch):04X} at position {m.start() + 1}"


def bad_iri(value: str) -> str | None:
    """Why ``value`` is not an IRI pyoxigraph accepts, or None."""
    from pyoxigraph import NamedNode

    try:
        NamedNode(value)
    except ValueError as exc:
        return f"is not a valid IRI ({exc})"
    return None


def walk_strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string inside nested dicts, lists and tuples, with its field path (``focus[0]``)."""
    if isinstance(value, str):
        yield path or "(value)", value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from walk_strings(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from walk_strings(v, f"{path}[{i}]")


# -- structured input ----------------------------------------------------------------------------
# Every JSON or TOML text an edge parses goes through these: a key given twice is refused (the last
# one winning would let ``"privacy_mode": "block", "privacy_mode": "allow"`` turn a protection off),
# and so is nesting deeper than any acms input needs (the parsers recurse: 100,000 levels end in a
# RecursionError, and a structure just under the interpreter's limit crashes whatever walks it next).
MAX_NESTING = 64
_JSON_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


class InputProblem(ValueError):
    """Why a JSON or TOML text is refused, in one line (the caller names the input and its error)."""


def _decoded(data: str | bytes) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputProblem(f"is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def _json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects, strings skipped, without recursing."""
    depth = deepest = 0
    for m in _JSON_TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_NESTING:
                    break
        elif c in "]}":
            depth -= 1
    return deepest


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InputProblem(f"has the key {clip(key)!r} twice in one object")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise InputProblem(f"is not valid JSON ({name} is not a JSON number)")


def strict_json(data: str | bytes) -> Any:
    """Parse JSON text, refusing bytes that are not UTF-8, a key given twice, NaN/Infinity and
    nesting deeper than ``MAX_NESTING``; every refusal is an ``InputProblem`` of one line."""
    import json

    text = _decoded(data)
    if _json_depth(text) > MAX_NESTING:
        raise InputProblem(f"nests arrays/objects more than {MAX_NESTING} levels deep")
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except InputProblem:
        raise
    except (ValueError, RecursionError) as exc:
        raise InputProblem(f"is not valid JSON ({clip(str(exc))})") from None


def _depth(value: Any) -> int:
    """Nesting of dicts and lists, walked with a stack (a deep value must not recurse here either)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if deepest > MAX_NESTING:
                break
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def strict_toml(data: str | bytes) -> dict[str, Any]:
    """Parse TOML text (tomllib already refuses a key given twice), refusing bytes that are not UTF-8
    and nesting deeper than ``MAX_NESTING``; every refusal is an ``InputProblem`` of one line."""
    import tomllib

    text = _decoded(data)
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputProblem(f"is not valid TOML ({clip(str(exc))})") from None
    except RecursionError:
        raise InputProblem(f"nests arrays/tables more than {MAX_NESTING} levels deep") from None
    if _depth(parsed) > MAX_NESTING:
        raise InputProblem(f"nests arrays/tables more than {MAX_NESTING} levels deep")
    return parsed


CLIP_CHARS = 120


def clip(value: str, limit: int = CLIP_CHARS) -> str:
    """``value`` on one line and at most ``limit`` characters, for an error message: a message never
    echoes a whole task (or any long value) back."""
    flat = " ".join(value.split())
    if len(flat) <= limit:
        return flat
    return f"{flat[: limit - 1]}… ({len(value):,} characters)"
