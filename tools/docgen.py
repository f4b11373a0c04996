"""The documentation site's reference pages, generated from the code on every build.

Why generated: a hand-copied option list or error table drifts the day a flag is added. Each page is
read from the one place the code keeps its truth: the click group (``acms.cli.main.cli``), the
settings table (``acms.config.Settings``), the ontology's Turtle (``ontology/``), the ``.rq`` headers
(``acms.sparql.catalog``), the error table (``acms.errors.CODES``) and the MCP tools' JSON schemas
(``acms.mcp_server.server.create_server``).

Used two ways: as an MkDocs ``hooks:`` module (``on_files`` adds the pages to the build without writing
them into ``docs/``, so the tree holds no stale copy), and as a script that writes them to a folder
(``python tools/docgen.py OUT``), which the contract test does to check that nothing is missing.
"""

from __future__ import annotations

import asyncio
import html
import inspect
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click

PREFIX = "reference"
# One line of the error tree drawn in ``acms/errors.py``'s docstring: the class, its code and exit, why.
_TREE_LINE = re.compile(r"^[\s│├└─]*([A-Z]\w+)(?:\s+[A-Z_]{4,})?(?:\s+exit \d+)?\s*(.*)$")


# ---------------------------------------------------------------------------------------- helpers


def _cell(text: object) -> str:
    """Text made safe for one Markdown table cell: no pipes, no newlines, no raw HTML."""
    value = " ".join(str(text).replace("\b", "").split())
    return html.escape(value, quote=False).replace("|", "\\|")


def _code(text: object) -> str:
    value = str(text).replace("|", "\\|")
    return f"`{value}`" if "`" not in value else f"`` {value} ``"


def _table(head: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    head = list(head)
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _paragraphs(text: str) -> str:
    """Click help text as Markdown: ``\\b`` blocks are kept verbatim as code, the rest as prose."""
    out: list[str] = []
    for block in inspect.cleandoc(text or "").split("\n\n"):
        if block.startswith("\b"):
            out.append("```text\n" + block.lstrip("\b").strip("\n") + "\n```")
        else:
            out.append(html.escape(" ".join(block.split()), quote=False))
    return "\n\n".join(x for x in out if x.strip())


# ---------------------------------------------------------------------------------------- CLI


def _param_row(param: click.Parameter, ctx: click.Context) -> list[str]:
    if isinstance(param, click.Option):
        names = ", ".join(_code(o) for o in [*param.opts, *param.secondary_opts])
        kind = "flag" if param.is_flag else param.type.name.upper()
        help_text = param.help or ""
    else:
        names = _code(param.human_readable_name)
        kind = "argument" + (" (optional)" if not param.required else "")
        if param.nargs == -1:
            kind += ", repeatable"
        help_text = ""
    if isinstance(param.type, click.Choice):
        kind = " \\| ".join(str(c) for c in param.type.choices)
    default = param.get_default(ctx, call=False)
    unset = default is getattr(click.core, "UNSET", None) or default in (None, False, (), [])
    shown = "" if unset or callable(default) else _code(default)
    if getattr(param, "multiple", False):
        kind += ", repeatable"
    return [names, _cell(kind), shown, _cell(help_text)]


def _command_section(command: click.Command, path: list[str], parent: click.Context | None, level: int) -> list[str]:
    ctx = click.Context(command, info_name=path[-1], parent=parent)
    full = " ".join(path)
    pieces = " ".join(command.collect_usage_pieces(ctx))
    out = [f"{'#' * level} `{full}`", "", f"```text\n{full} {pieces}\n```", ""]
    if command.help:
        out += [_paragraphs(command.help), ""]
    params = [p for p in command.get_params(ctx) if not (isinstance(p, click.Option) and p.name == "help")]
    if params:
        out += [_table(["option", "type", "default", "help"], (_param_row(p, ctx) for p in params)), ""]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                out += _command_section(sub, [*path, name], ctx, min(level + 1, 4))
    return out


def cli_page() -> str:
    from acms.cli.main import EXIT_CODES, cli

    ctx = click.Context(cli, info_name="acms")
    out = ["# Command line", "",
           ("Generated from the click group `acms.cli.main.cli` at build time: every command, its "
           "arguments and options. `acms COMMAND --help` prints the same text."), ""]
    names = cli.list_commands(ctx)
    rows = []
    for name in names:
        command = cli.get_command(ctx, name)
        assert command is not None, name
        rows.append([f"[`acms {name}`](#acms-{name})", _cell(command.get_short_help_str(200))])
    out += [_table(["command", "what it does"], rows), ""]
    out += ["## Options of every command", "",
            _table(["option", "type", "default", "help"],
                   (_param_row(p, ctx) for p in cli.get_params(ctx)
                    if not (isinstance(p, click.Option) and p.name == "help"))), ""]
    out += ["```text\n" + EXIT_CODES.lstrip("\b").strip() + "\n```", ""]
    for name in names:
        command = cli.get_command(ctx, name)
        assert command is not None
        out += _command_section(command, ["acms", name], ctx, 2)
    return "\n".join(out)


def cli_command_names() -> list[str]:
    """Every command's full name, subcommands included (``acms tiers rebalance``)."""
    from acms.cli.main import cli

    found: list[str] = []

    def walk(command: click.Command, path: list[str], parent: click.Context | None) -> None:
        ctx = click.Context(command, info_name=path[-1], parent=parent)
        found.append(" ".join(path))
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    walk(sub, [*path, name], ctx)

    walk(cli, ["acms"], None)
    return found[1:]


# ---------------------------------------------------------------------------------------- settings


def settings_page() -> str:
    from dataclasses import MISSING, fields

    from acms.config import Settings

    types = Settings.type_table()
    rows = []
    for f in fields(Settings):
        default = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
        shown = _code(list(default) if isinstance(default, tuple) else default)
        if isinstance(default, bool):
            shown = _code(str(default).lower())
        limit = f.metadata.get("minimum")
        kind = types[f.name] + (f", at least {limit:g}" if limit is not None else "")
        rows.append([f"`{f.name}`", _code(f"ACMS_{f.name.upper()}"), _cell(kind), shown, _cell(f.metadata["help"])])
    return "\n".join([
        "# Settings", "",
        ("Generated from the settings table (`acms.config.Settings`) at build time. Precedence: defaults < "
        "`acms.toml` or `[tool.acms]` in `pyproject.toml` < `ACMS_*` environment variables < command-line "
        "flags (`acms --set NAME=VALUE` and the commands' own flags). A bad value is a one-line error "
        "(exit 6) naming the setting, where it came from and the type it expects. "
        "`acms config` prints the effective values and where each came from. "
        "How to use them: [configuration](../configuration.md)."), "",
        _table(["setting", "environment", "type", "default", "what it does"], rows), ""])


# ---------------------------------------------------------------------------------------- ontology


def _ontology_section(ttl: str, title: str, level: str) -> list[str]:
    from rdflib import OWL, RDF, RDFS, Graph, URIRef

    graph = Graph()
    graph.parse(data=ttl, format="turtle")

    def short(term: object) -> str:
        try:
            return graph.namespace_manager.normalizeUri(term)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - a blank node or an odd IRI is shown whole
            return str(term)

    def text(subject: URIRef, predicate: URIRef) -> str:
        return " ".join(str(v) for v in graph.objects(subject, predicate))

    own = {str(o) for o in graph.subjects(RDF.type, OWL.Ontology)}
    out = [f"{level} {title}", ""]
    for onto in sorted(own):
        version = text(URIRef(onto), OWL.versionInfo)
        out += [f"`{onto}`" + (f", version {version}" if version else "") + ": "
                + _cell(text(URIRef(onto), RDFS.comment)), ""]
    classes = sorted({s for s in graph.subjects(RDF.type, OWL.Class) if isinstance(s, URIRef)}, key=short)
    rows = [[_code(short(c)), _cell(text(c, RDFS.label)),
             ", ".join(_code(short(p)) for p in sorted(graph.objects(c, RDFS.subClassOf), key=short)
                       if isinstance(p, URIRef)),
             _cell(text(c, RDFS.comment))] for c in classes]
    out += [f"{level}# Classes", "", _table(["class", "label", "subclass of", "comment"], rows), ""]
    kinds = [(OWL.ObjectProperty, "object"), (OWL.DatatypeProperty, "datatype"),
             (OWL.AnnotationProperty, "annotation")]
    props = sorted({(s, kind) for t, kind in kinds for s in graph.subjects(RDF.type, t) if isinstance(s, URIRef)},
                   key=lambda x: short(x[0]))
    rows = [[_code(short(p)), kind,
             ", ".join(_code(short(d)) for d in graph.objects(p, RDFS.domain) if isinstance(d, URIRef)),
             ", ".join(_code(short(r)) for r in graph.objects(p, RDFS.range) if isinstance(r, URIRef)),
             _cell(text(p, RDFS.comment))] for p, kind in props]
    out += [f"{level}# Properties", "", _table(["property", "kind", "domain", "range", "comment"], rows), ""]
    return out


def ontology_page() -> str:
    from acms import resources

    out = ["# Ontology", "",
           ("Generated from the Turtle files at build time: `ontology/uko.ttl` (UKO, the vocabulary every "
           "query uses) and each shipped extension's `ontology.ttl`. Terms are shown with the prefixes "
           "their file declares."), ""]
    out += _ontology_section(resources.read_text("ontology", "uko.ttl"), "UKO", "##")
    extensions = resources.asset("ontology", "extensions")
    for ext in sorted((n for n in extensions.iterdir() if n.is_dir()), key=lambda n: n.name):
        turtle = ext / "ontology.ttl"
        if turtle.is_file():
            out += _ontology_section(turtle.read_text(encoding="utf-8"), f"Extension `{ext.name}`", "##")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------- queries


def queries_page() -> str:
    from acms.sparql.catalog import all_queries

    specs = sorted(all_queries().values(), key=lambda s: s.key)
    folders: dict[str, list[Any]] = {}
    for spec in specs:
        folders.setdefault(spec.key.rsplit("/", 1)[0], []).append(spec)
    out = ["# Saved queries", "",
           ("Generated from the header comments of every `.rq` / `.ru` file under `queries/` at build time "
           "(`# name:`, `# summary:`, `# param:`, `# returns:`). The `explore/` queries are the ones "
           "`acms sparql --saved NAME` and the MCP `explore` tool run; the others are acms's own."), ""]
    for folder, group in folders.items():
        rows = [[_code(s.key.rsplit("/", 1)[-1]), _cell(s.summary),
                 "<br>".join(f"{_code(n)} {_cell(h)}" for n, h in s.params), _cell(s.returns)] for s in group]
        out += [f"## `{folder}/`", "", _table(["file", "summary", "parameters", "returns"], rows), ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------- errors


def errors_page() -> str:
    from acms import errors

    out = ["# Error codes", "",
           ("Generated from the error table (`acms.errors.CODES`) and the error classes at build time. Every "
           "interface maps an error through this one table: the CLI prints the one-line message and exits "
           "with the code's exit code; `acms serve` answers `/v0/render` with the code's HTTP status and the "
           "v0 error envelope (`retriable`, `max_attempts`, `options`); `acms mcp` returns a tool error "
           "whose text starts with the code (`BUDGET_TOO_SMALL: …`); the Python API raises the class."), ""]
    rows = []
    for code in errors.ErrorCode:
        spec = errors.CODES[code]
        options = "<br>".join(f"{_code(a)}: {_cell(h)}" for a, h in spec.options)
        rows.append([_code(code.value), str(spec.exit_code), str(spec.http_status),
                     "yes" if spec.retriable else "no", str(spec.max_attempts), options])
    out += ["## Codes", "", _table(["code", "exit", "HTTP", "retriable", "attempts", "options offered"], rows), ""]

    classes: list[tuple[int, type[errors.AcmsError]]] = []

    def walk(cls: type[errors.AcmsError], depth: int) -> None:
        classes.append((depth, cls))
        for sub in sorted(cls.__subclasses__(), key=lambda c: c.__name__):
            if sub.__module__ == errors.__name__:
                walk(sub, depth + 1)

    walk(errors.AcmsError, 0)
    tree = (errors.__doc__ or "").split("\n\n")[1] if errors.__doc__ else ""
    drawn = {m.group(1): m.group(2) for m in map(_TREE_LINE.match, tree.splitlines()) if m}
    rows = [[("&nbsp;" * 4 * depth) + _code(cls.__name__), _code(errors.ErrorCode(cls.code).value),
             str(cls.exit_code), _cell((cls.__dict__.get("__doc__") or drawn.get(cls.__name__, "")).split("\n\n")[0])]
            for depth, cls in classes]
    out += ["## Classes", "", ("Each class of `acms.errors` with the code it carries (a subclass without a code "
            "of its own carries its parent's)."), "",
            _table(["class", "code", "exit", "why it is raised"], rows), ""]
    if tree.strip():
        out += ["## The tree, as `acms/errors.py` draws it", "", "```text\n" + inspect.cleandoc(tree) + "\n```", ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------- MCP


class _NoQueries:
    """What ``create_server`` needs of an index to list its tools: no store is opened for the listing."""

    def saved_queries(self) -> list[Any]:
        return []


def mcp_tools() -> list[Any]:
    from acms.mcp_server.server import create_server

    server = create_server(_NoQueries(), allow_index=True, allow_record=True)  # type: ignore[arg-type]
    return list(asyncio.run(server.list_tools()))


def _schema_type(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return " \\| ".join(str(v) for v in prop["enum"])
    if "anyOf" in prop:
        return " or ".join(_schema_type(p) for p in prop["anyOf"])
    kind = str(prop.get("type", "any"))
    if kind == "array" and "items" in prop:
        return f"list of {_schema_type(prop['items'])}"
    if kind == "object" and isinstance(prop.get("additionalProperties"), dict):
        return f"object of {_schema_type(prop['additionalProperties'])}"
    return kind


def mcp_page() -> str:
    from acms.mcp_server.server import INSTRUCTIONS

    out = ["# MCP tools", "",
           ("Generated from the tools' JSON schemas (`acms.mcp_server`) at build time: what `acms mcp` "
           "lists to a client. The `index` tool is listed only when the server runs with `--allow-index`, "
           "`record_decision` only with `--allow-record`. "
           "Resources: `acms://ontology/uko.ttl` and `acms://queries/explore/<name>.rq` for every saved "
           "query."), "", "The instructions the server gives a client:", "",
           "```text\n" + INSTRUCTIONS.strip() + "\n```", ""]
    for tool in mcp_tools():
        schema = tool.input_schema if hasattr(tool, "input_schema") else tool.inputSchema
        required = set(schema.get("required", ()))
        rows = []
        for name, prop in schema.get("properties", {}).items():
            limits = [f"{k} {prop[k]}" for k in ("minimum", "maximum", "minLength") if k in prop]
            default = "" if "default" not in prop or prop["default"] is None else _code(prop["default"])
            rows.append([_code(name), _cell(_schema_type(prop) + (", " + ", ".join(limits) if limits else "")),
                         "yes" if name in required else "", default, _cell(prop.get("description", ""))])
        notes = tool.annotations
        read_only = bool(notes and getattr(notes, "read_only_hint", None))
        out += [f"## `{tool.name}`", "", _cell(tool.description or ""), "",
                "Read-only." if read_only else "Writes the index.", ""]
        out += [_table(["argument", "type", "required", "default", "description"], rows) if rows
                else "No arguments.\n", ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------- pages

PAGES: dict[str, Callable[[], str]] = {
    "cli.md": cli_page,
    "settings.md": settings_page,
    "ontology.md": ontology_page,
    "queries.md": queries_page,
    "errors.md": errors_page,
    "mcp.md": mcp_page,
}


def pages() -> dict[str, str]:
    """``reference/NAME.md`` -> the page's Markdown."""
    return {f"{PREFIX}/{name}": build() for name, build in PAGES.items()}


def write(out: Path) -> list[Path]:
    written = []
    for rel, text in pages().items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def on_files(files: Any, config: Any) -> Any:
    """MkDocs hook: the reference pages join the build as generated files, never written into ``docs/``."""
    from mkdocs.structure.files import File

    for rel, text in pages().items():
        files.append(File.generated(config, rel, content=text))
    return files


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tools/docgen.py OUT_DIR")
    for path in write(Path(sys.argv[1])):
        print(path)
