"""Secrets that span lines: PEM private key blocks, Kubernetes ``Secret`` data, Terraform
variables with a default."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from acms.privacy.accept import _NAME, _kind_for_name, _secret_value
from acms.privacy.decoys import _placeholder
from acms.privacy.lazy import lazy
from acms.privacy.model import _Hit


_PEM_CLOSE = lazy(r"-----END[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----")
_PEM_MAX = 20_000  # an 8192-bit RSA key is ~6.5 kB of base64
_PEM_OPEN = lazy(r"-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = lazy(r"[ \t]*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z\-]+:[^\n]*|)[ \t]*\r?\n")


def _pem_hits(text: str) -> Iterator[_Hit]:
    """Whole private key blocks, each BEGIN paired with the next END (markers found once, so a
    file of many BEGINs stays linear); an unterminated block runs over the base64 lines after it."""
    if "PRIVATE KEY" not in text:
        return
    ends = [m.end() for m in _PEM_CLOSE.finditer(text)]
    covered_to = -1
    for m in _PEM_OPEN.finditer(text):
        if m.start() < covered_to:
            continue
        i = bisect.bisect_left(ends, m.end())
        if i < len(ends) and ends[i] - m.start() <= _PEM_MAX:
            covered_to = ends[i]
            yield _Hit(m.start(), ends[i], "private_key", False)
            continue
        end = m.end()
        nl = text.find("\n", end)
        pos = nl + 1 if nl >= 0 else len(text)
        while pos < len(text):
            body = _PEM_BODY.match(text, pos)
            if body is None or body.end() == pos or not text[pos:body.end()].strip():
                break
            end, pos = body.end() - 1, body.end()
        covered_to = end
        yield _Hit(m.start(), end, "private_key", False)


_K8S_KIND = lazy(r"(?m)^[ \t]*(?:-[ \t]+)?kind:[ \t]*[\"']?Secret[\"']?[ \t]*(?:#.*)?$")
_K8S_DATA = lazy(r"(?m)^(?P<ind>[ \t]*(?:-[ \t]+)?)(?:data|stringData):[ \t]*(?:#.*)?$")
_K8S_ENTRY = lazy(
    r"(?P<ind>[ \t]*)[\"']?[\w.\-]+[\"']?:[ \t]*(?P<v>[^\n#]*?)[ \t]*(?:#[^\n]*)?$")
_K8S_FLOW = lazy(r"(?m)^[ \t]*(?:data|stringData):[ \t]*\{(?P<body>[^{}\n]*)\}")
_K8S_FLOW_PAIR = lazy(r"[\w.\-\"']+[ \t]*:[ \t]*(?P<v>[^,}\s][^,}]*?)[ \t]*(?=,|$)")
_K8S_JSON = lazy(r"\"kind\"[ \t]*:[ \t]*\"Secret\"")
_K8S_JSON_DATA = lazy(r"\"(?:data|stringData)\"\s*:\s*\{(?P<body>[^{}]*)\}")
_K8S_JSON_PAIR = lazy(r"\"[^\"\n]*\"\s*:\s*\"(?P<v>(?:[^\"\\\n]|\\.)*)\"")


_TF_VARIABLE = lazy(
    r"\bvariable[ \t]+\"(?P<n>" + _NAME + r")\"[ \t]*\{[^{}]{0,400}?\bdefault[ \t]*=[ \t]*"
    r"\"(?P<v>[^\"\n]{1,300})\"")


def _terraform_hits(text: str) -> Iterator[_Hit]:
    """``variable "db_password" { default = "..." }``: the name is lines above the value."""
    if 'variable "' not in text or "default" not in text:
        return
    for m in _TF_VARIABLE.finditer(text):
        if _secret_value(m.group("n"), m.group("v")):
            yield _Hit(m.start("v"), m.end("v"), _kind_for_name(m), True)


def _k8s_hits(text: str) -> Iterator[_Hit]:
    """Values under ``data:``/``stringData:`` of Kubernetes ``Secret`` manifests (base64 or plain),
    including block scalars; Helm templates and ``${VAR}`` stay."""
    if "Secret" not in text:
        return
    if _K8S_JSON.search(text):
        for d in _K8S_JSON_DATA.finditer(text):
            for p in _K8S_JSON_PAIR.finditer(text, d.start("body"), d.end("body")):
                if p.group("v") and not _placeholder(p.group("v")):
                    yield _Hit(p.start("v"), p.end("v"), "k8s_secret", False)
    if not _K8S_KIND.search(text):
        return
    docs = [0] + [m.end() for m in re.finditer(r"(?m)^---[^\n]*\n", text)] + [len(text)]
    for lo, hi in zip(docs, docs[1:]):
        if not _K8S_KIND.search(text, lo, hi):
            continue
        for flow in _K8S_FLOW.finditer(text, lo, hi):  # data: {password: abc}
            for p in _K8S_FLOW_PAIR.finditer(text, flow.start("body"), flow.end("body")):
                a, b = p.span("v")
                if text[a] in "\"'" and b - a >= 2 and text[b - 1] == text[a]:
                    a, b = a + 1, b - 1
                if b > a and not _placeholder(text[a:b]):
                    yield _Hit(a, b, "k8s_secret", False)
        for d in _K8S_DATA.finditer(text, lo, hi):
            key_col = len(d.group("ind"))
            pos = d.end() + 1
            entry_col = -1
            block_col = -1
            while pos < hi:
                eol = text.find("\n", pos, hi)
                eol = hi if eol < 0 else eol
                line = text[pos:eol]
                stripped = line.strip()
                col = len(line) - len(line.lstrip(" \t"))
                if stripped and col <= key_col:
                    break
                if stripped and not stripped.startswith("#"):
                    if block_col >= 0 and col > entry_col:
                        yield _Hit(pos + col, pos + len(line.rstrip()), "k8s_secret", False)
                    else:
                        block_col = -1
                        m = _K8S_ENTRY.match(line)
                        if m is not None:
                            entry_col = col
                            v = m.group("v")
                            if v in ("|", ">", "|-", ">-", "|+", ">+"):
                                block_col = col
                            elif v:
                                a, b = pos + m.start("v"), pos + m.end("v")
                                if v[0] in "\"'" and v[-1] == v[0] and len(v) >= 2:
                                    a, b = a + 1, b - 1
                                if b > a and not _placeholder(text[a:b]):
                                    yield _Hit(a, b, "k8s_secret", False)
                pos = eol + 1


_TABLE_LINE = lazy(r"(?m)^[ \t]*\|")
_TABLE_RULE = lazy(r"[ \t]*\|?(?:[ \t]*:?-{3,}:?[ \t]*\|)+[ \t]*(?::?-{3,}:?[ \t]*)?$")
_TABLE_SECRET = lazy(
    r"(?i)^(?:[\w ]{0,20}[ _\-])?(?:password|passwd|pwd|passphrase|secret|token|api[ _\-]?key|credentials?)$")


def _cells(line: str, start: int) -> list[tuple[int, int]]:
    """The spans of a Markdown table row's cells (``|`` split, ``\\|`` kept), blanks trimmed."""
    out: list[tuple[int, int]] = []
    i = line.index("|") + 1
    cell = i
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        if line[i] == "|":
            out.append((cell, i))
            cell = i + 1
        i += 1
    spans = []
    for a, b in out:
        while a < b and line[a] in " \t`":
            a += 1
        while b > a and line[b - 1] in " \t`":
            b -= 1
        spans.append((start + a, start + b))
    return spans


def _table_value(value: str) -> bool:
    """A table cell under a password column is a secret when it looks like one: letters and digits
    (or random), no placeholder, no prose."""
    return (len(value) >= 6 and " " not in value and not _placeholder(value)
            and bool(re.search(r"\d", value)) and bool(re.search(r"[A-Za-z]", value)))


def _table_hits(text: str) -> Iterator[_Hit]:
    """Markdown tables with a password/secret/token column: the cells under it in the rows below."""
    if "|" not in text or "---" not in text:
        return
    rows: list[tuple[int, str]] = []  # consecutive table lines: (start, line)
    last_end = -2
    for m in _TABLE_LINE.finditer(text):
        start = m.start()
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if start != last_end + 1:
            yield from _one_table(text, rows)
            rows = []
        rows.append((start, text[start:end]))
        last_end = end
    yield from _one_table(text, rows)


def _one_table(text: str, rows: list[tuple[int, str]]) -> Iterator[_Hit]:
    if len(rows) < 3 or not _TABLE_RULE.match(rows[1][1]):
        return
    head_start, head = rows[0]
    columns = [i for i, (a, b) in enumerate(_cells(head, head_start))
               if _TABLE_SECRET.match(text[a:b].strip("*_ "))]
    if not columns:
        return
    for start, line in rows[2:]:
        cells = _cells(line, start)
        for i in columns:
            if i < len(cells):
                a, b = cells[i]
                if b > a and _table_value(text[a:b]):
                    yield _Hit(a, b, "password", True)


def _csv_hits(text: str) -> Iterator[_Hit]:
    """CSV/TSV files with a password/secret/token column: that field of every row below the header."""
    nl = text.find("\n")
    if nl < 0:
        return
    head = text[:nl].rstrip("\r")
    sep = "\t" if "\t" in head else ";" if head.count(";") > head.count(",") else ","
    names = [h.strip().strip("\"'") for h in head.split(sep)]
    columns = [i for i, name in enumerate(names) if _TABLE_SECRET.match(name)]
    if len(names) < 2 or not columns:
        return
    pos = nl + 1
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        start = pos
        for i, field in enumerate(text[pos:end].rstrip("\r").split(sep)):
            a, b = start, start + len(field)
            start = b + 1
            if i in columns:
                while a < b and text[a] in " \t\"'":
                    a += 1
                while b > a and text[b - 1] in " \t\"'":
                    b -= 1
                if b > a and _table_value(text[a:b]):
                    yield _Hit(a, b, "password", True)
        pos = end + 1


_NAME_VALUE = lazy(
    r"(?i)[\"']?name[\"']?[ \t]*:[ \t]*[\"']?(?P<n>" + _NAME + r")[\"']?[ \t]*,?[ \t]*(?:\r?\n[ \t]*(?:-[ \t]+)?)?"
    r"[\"']?value[\"']?[ \t]*:[ \t]*(?P<q>[\"']?)(?P<v>[^\n\"']{1,300}?)(?P=q)[ \t]*(?=[,}\r\n]|$)")


_VALUE_KEY = lazy(r"(?i)value[\"']?[ \t]*:")


def _name_value_hits(text: str) -> Iterator[_Hit]:
    """``- name: DB_PASSWORD`` then ``value: x`` (Kubernetes env, CI inputs), and the JSON form
    ``{"name": "DB_PASSWORD", "value": "x"}`` (ECS task definitions): the name is a line above or
    a key before the value."""
    if "value" not in text or "name" not in text:
        return
    seen = -1
    for key in _VALUE_KEY.finditer(text):  # the rare part first: the pattern opens on any "name"
        if key.start() < seen:
            continue
        for m in _NAME_VALUE.finditer(text, max(0, key.start() - 200), min(len(text), key.end() + 310)):
            if m.start("v") < seen:
                continue
            seen = m.end()
            if _secret_value(m.group("n"), m.group("v").strip()):
                yield _Hit(m.start("v"), m.end("v"), _kind_for_name(m), True)
