"""``acms assemble``, ``acms render``, ``acms strategies``."""

from __future__ import annotations

import base64
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from acms.cli import relay
from acms.cli.common import (REQUEST_ID, boundary, echo_failure, echo_json, failure, json_option, open_index,
                             project_options, refresh_option, relay_answer)
from acms.errors import AcmsError, UsageError
from acms.text_checks import WIRE_MAX_BYTES, clip

if TYPE_CHECKING:  # the engine is imported once the command runs it, not for an answer a watcher gives
    from acms.api import Index
    from acms.assembly.protocol import RenderRequest
    from acms.results import AssemblyResult

WARNING_MAX_CHARS = 500
TASK_MAX_BYTES = 4 * 1024 * 1024  # 1 MiB of characters (the schema's intent limit) in up to 4 bytes each


def strategies_option(func: Any) -> Any:
    return click.option("--strategies-dir", type=click.Path(path_type=Path, file_okay=False), multiple=True,
                        help="Extra folder of strategies (each a subfolder with strategy.toml and .rq files).")(func)


@click.command("assemble")
@click.argument("task")
@click.option("--budget", type=int, default=4000, show_default=True, help="Token budget: the whole document for markdown/text; the fragments' text for json "
                   "(sum of cost_tokens; the compact envelope around it is not counted).")
@click.option("--strategy", default="auto", show_default=True, help="Strategy name, or auto (see `acms strategies`).")
@click.option("--focus", multiple=True, help="Focus entity: IRI, path, path::Qualified.name, qualified name or its end "
              "(Class.method), or name (repeatable).")
@click.option("--breadth", type=click.IntRange(0, 4), default=None, help="Graph hops from the focus (default 2).")
@click.option("--plan", default=None, help="The plan (name or IRI) the task belongs to: its decisions and its ancestors' come first.")
@click.option("--privacy", type=click.Choice(["allow", "redact", "block"]), default="allow", show_default=True,
              help="allow (clear secrets redacted), redact (all secrets), block (no raw text).")
@click.option("--format", "fmt", type=click.Choice(["markdown", "text", "json"]), default="markdown",
              show_default=True, help="markdown/text for prompts; json prints a render_context_reply.v0.")
@click.option("--lod", multiple=True, type=click.Choice(["macro", "micro", "atomic"]),
              help="Restrict levels of detail (repeatable).")
@click.option("--path", "paths", multiple=True, help="Only fragments whose path matches this glob (repeatable).")
@click.option("--language", multiple=True, help="Only these languages (repeatable).")
@click.option("--focus-class", "classes", multiple=True, help="Only entities of this class or its subclasses, e.g. uko:Function.")
@click.option("--tier", multiple=True, type=click.Choice(["hot", "warm", "cold"]), help="Only these tiers.")
@click.option("--min-score", type=float, default=None, help="Drop candidates scored below this.")
@click.option("-k", "k", type=int, default=None, help="At most this many candidates before packing.")
@click.option("--tests-and-docs", "tests_and_docs", type=click.Choice(["demote", "equal"]), default="demote",
              show_default=True, help="demote: tests, fixtures, examples, docs, data files, build scripts and "
              "type stubs rank below source code unless the task names them; equal: rank them like source code.")
@click.option("--time-ms", type=int, default=2000, show_default=True, help="Deadline; late phases are cut and reported.")
@strategies_option
@refresh_option
@project_options
@boundary
def assemble_cmd(task: str, budget: int, strategy: str, focus: tuple[str, ...], breadth: int | None,
                 plan: str | None, privacy: str,
                 fmt: str, lod: tuple[str, ...], paths: tuple[str, ...], language: tuple[str, ...],
                 classes: tuple[str, ...], tier: tuple[str, ...], min_score: float | None, k: int | None,
                 tests_and_docs: str, time_ms: int, strategies_dir: tuple[Path, ...], refresh: str | None, project: Path,
                 store: Path | None) -> None:
    """Assemble the context for TASK within --budget tokens, with path:line provenance.

    \b
    Examples:
      acms assemble "how does incremental re-indexing work" --budget 4000
      acms assemble "who calls index_project" --focus index_project
      acms assemble "parse headers" --format json --privacy redact
      acms assemble "why was parse_header changed"            (auto: temporal-archaeology)
      acms assemble "add session expiry" --plan storage       (auto: plan-decision-context)
      acms assemble - < issue.txt                             (TASK from stdin: up to 1 MiB)

    TASK - reads the task from stdin: an issue with its logs and traces is longer than a command
    line takes; ranking reads its first 24,000 and last 8,000 characters.
    """
    if task == "-":
        task = _stdin_task()
    filters: dict[str, Any] = {}
    for key, value in (("paths", paths), ("languages", language), ("classes", classes), ("tiers", tier)):
        if value:
            filters[key] = list(value)
    if min_score is not None:
        filters["min_score"] = min_score
    if k is not None:
        filters["k"] = k
    if tests_and_docs != "demote":
        filters["tests_and_docs"] = tests_and_docs
    data: dict[str, Any] = {
        "version": "v0", "id": str(uuid.uuid5(uuid.NAMESPACE_URL, task)), "intent": task,
        "request_id": "cli", "budgets": {"tokens_max": budget, "time_ms": time_ms},
        "privacy_mode": privacy, "strategy": strategy, "format": "markdown" if fmt == "json" else fmt,
    }
    for key, value in (("focus", list(focus)), ("lod", list(lod)), ("filters", filters)):
        if value:
            data[key] = value
    if breadth is not None:
        data["breadth"] = breadth
    if plan:
        data["plan"] = plan
    answer = None if strategies_dir else relay_answer("assemble", project, store, refresh, {"request": data, "format": fmt})
    if answer is None:
        from acms.assembly.protocol import parse_request
        from acms.tokens import preload as preload_tokenizer

        preload_tokenizer()  # every context is counted: the load overlaps opening the store and ranking
        request = parse_request(data)
        with open_index(project, store, strategies_dirs=strategies_dir, refresh=refresh) as index:
            answer = printed(index.render(request, output="json" if fmt == "json" else None), fmt, budget)
    click.echo(answer["stdout"])
    for line in answer.get("stderr", []):
        click.echo(line, err=True)


def printed(result: AssemblyResult, fmt: str, budget: int) -> dict[str, Any]:
    """What ``acms assemble`` prints of a result: the context on stdout; for markdown and text, a
    summary line and the warnings on stderr."""
    if fmt == "json":
        return {"stdout": result.assembled.rendered, "stderr": []}
    metrics = result.reply["metrics"]
    summary = (f"-- {metrics['used_tokens']}/{budget} tokens, {len(result.assembled.items)} fragments, "
               f"strategy {result.strategy} ({result.reason}), {metrics['planner_ms']} ms")
    # a warning may quote 64 long focus names
    return {"stdout": result.assembled.rendered,
            "stderr": [summary, *(f"-- warning: {clip(w, WARNING_MAX_CHARS)}" for w in metrics.get("warnings", []))]}


def answer_assemble(index: Index) -> relay.Handler:
    """``acms assemble`` as ``acms watch`` answers it for the command (``acms.cli.relay``)."""
    from acms.assembly.protocol import parse_request

    def assemble(message: dict[str, Any]) -> dict[str, Any]:
        request = parse_request(message["request"])
        fmt = str(message["format"])
        return printed(index.render(request, output="json" if fmt == "json" else None), fmt, request.tokens_max)

    return assemble


def _stdin_task() -> str:
    """The task from stdin (UTF-8; the request's checks then apply to it like to any task)."""
    data = sys.stdin.buffer.read(TASK_MAX_BYTES + 1)
    if len(data) > TASK_MAX_BYTES:
        raise UsageError(f"the task on stdin is over {TASK_MAX_BYTES:,} bytes")
    try:
        return data.decode("utf-8").strip() or "-"
    except UnicodeDecodeError as exc:
        raise UsageError(f"the task on stdin is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


@click.command("render")
@click.argument("request_file", type=click.File("rb"))  # bytes: the request parser checks the encoding
@strategies_option
@refresh_option
@project_options
@boundary.envelope
def render_cmd(request_file: Any, strategies_dir: tuple[Path, ...], refresh: str | None, project: Path,
               store: Path | None) -> None:
    """Answer a render_request.v0 (a JSON file, or - for stdin) with a render_context_reply.v0.

    Errors are printed as the v0 error envelope (on stdout, as JSON) with a non-zero exit code.
    """
    raw = request_file.read(WIRE_MAX_BYTES + 1)  # past the limit is refused: no need to hold all of it
    answer = None if strategies_dir else relay_answer("render", project, store, refresh,
                                                      {"request": base64.b64encode(raw).decode("ascii")})
    if answer is None:
        from acms.assembly.protocol import parse_request, request_id_of
        from acms.tokens import preload as preload_tokenizer

        preload_tokenizer()
        click.get_current_context().meta[REQUEST_ID] = request_id_of(raw)  # the error envelope quotes it
        request = parse_request(raw)
        with open_index(project, store, strategies_dirs=strategies_dir, refresh=refresh) as index:
            answer = rendered(index, request)
    if "exit" in answer:
        echo_failure(answer)
    click.echo(answer["stdout"])


def rendered(index: Index, request: RenderRequest) -> dict[str, Any]:
    """What ``acms render`` prints of a request: the render_context_reply.v0."""
    return {"stdout": index.render(request, output="json").assembled.rendered, "stderr": []}


def answer_render(index: Index) -> relay.Handler:
    """``acms render`` as ``acms watch`` answers it for the command (``acms.cli.relay``). Its output is
    JSON, errors included: an error comes back as the envelope the command prints (``failure``), the
    request's id quoted."""
    from acms.assembly.protocol import parse_request, request_id_of

    def render(message: dict[str, Any]) -> dict[str, Any]:
        raw = base64.b64decode(str(message["request"]), validate=True)
        try:
            return rendered(index, parse_request(raw))
        except AcmsError as exc:
            return failure(exc, True, request_id_of(raw))

    return render


@click.command("strategies")
@strategies_option
@json_option
@boundary
def strategies_cmd(strategies_dir: tuple[Path, ...], as_json: bool) -> None:
    """List the strategies with their quality, what they need, and their budget split."""
    from acms.api import Index

    rows = Index.strategies(strategies_dir)
    if as_json:
        echo_json(rows)
        return
    for r in sorted(rows, key=lambda r: -r["quality"]):
        split = " + ".join(f"{p['engine']} {int(100 * p['share'])}%" for p in r["phases"])
        click.echo(f"{r['name']:<26} {r['quality']:.2f}  needs {', '.join(r['requires']) or '-':<10} {split}")
        click.echo(f"{'':<26} {r['summary']}")
    if not rows:
        raise UsageError("no strategies found")
