"""Shared CLI options and the one error boundary."""

from __future__ import annotations

import atexit
import functools
import json
import os
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click
from click.core import ParameterSource

from acms.config import Settings, load_settings
from acms.errors import AcmsError, UsageError, environment_error
from acms.paths import index_location, project_root
from acms.text_checks import text_problem, walk_strings

if TYPE_CHECKING:  # the façade pulls in the engine: imported when a command opens an index, not before
    from acms.api import Index

F = TypeVar("F", bound=Callable[..., Any])


_wait: dict[str, float] = {}  # --wait of the running command (one command per process)


def _set_wait(ctx: click.Context, param: click.Parameter, value: float | None) -> None:
    if value is not None:
        _wait["seconds"] = value


def wait_option(func: F) -> F:
    return click.option(
        "--wait", type=click.FloatRange(min=0), default=None, expose_value=False, callback=_set_wait,
        help="Seconds to wait while another acms process writes the index (default 60, the lock_wait "
             "setting); readers run side by side.",
    )(func)


def wait_seconds(settings: Settings) -> float:
    return _wait.get("seconds", settings.lock_wait)


class StoreLocation(click.ParamType):
    """``--store``: an index directory (a path) or the ``http(s)://`` URL of a SPARQL 1.1 engine (kept as text)."""

    name = "DIR|URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path | str:
        text = str(value)
        if text.lower().startswith(("http://", "https://")):
            return text
        return click.Path(path_type=Path, file_okay=False).convert(value, param, ctx)


STORE = StoreLocation()


def project_options(func: F) -> F:
    """``--project``, ``--store`` and ``--wait``: where the project and its index are, how long to wait for it."""
    func = wait_option(func)
    func = click.option(
        "--store",
        "store",
        type=STORE,
        default=None,
        help="Index directory, or the http(s):// URL of a SPARQL 1.1 engine (default: .acms/ at the project "
             "root, or the `store` setting).",
    )(func)
    func = click.option(
        "--project",
        "-C",
        "project",
        type=click.Path(path_type=Path),
        default=".",
        show_default=True,
        help="Project root whose index to use.",
    )(func)
    return func


def project_argument(func: F) -> F:
    """An optional ``[PROJECT]`` argument, the same as ``-C``, for the commands that take no other:
    ``acms mcp /path/to/repo`` is how agents' configurations and users write it (as ``acms index PATH``)."""

    @functools.wraps(func)
    def wrapper(*args: Any, project_dir: Path | None, project: Path, **kwargs: Any) -> Any:
        if project_dir is not None:
            ctx = click.get_current_context()
            if ctx.get_parameter_source("project") is not ParameterSource.DEFAULT and project_dir != project:
                raise click.UsageError(f"the project is given twice: {project_dir} and -C {project}")
            project = project_dir
        return func(*args, project=project, **kwargs)

    return click.argument("project_dir", metavar="[PROJECT]", required=False,  # type: ignore[return-value]
                          type=click.Path(path_type=Path))(wrapper)


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(func)


def set_option(func: F) -> F:
    """``--set NAME=VALUE`` (repeatable) on the ``acms`` group: any setting, for this command only."""
    return click.option(
        "--set", "set_values", multiple=True, metavar="NAME=VALUE", callback=_parse_sets, is_eager=True,
        help="Override a setting for this command (repeatable), e.g. --set hot_days=3.5; highest precedence.",
    )(func)


def _parse_sets(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in values:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", ctx=ctx, param=param)
        pairs[name.strip()] = value
    ctx.ensure_object(dict)["set"] = pairs
    return pairs


def flag_settings() -> dict[str, str]:
    """The ``--set`` values of the running command (from the root click context)."""
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx is not None else None
    return dict((root.obj or {}).get("set", {})) if root is not None else {}


def settings_for(root: Path, **overrides: Any) -> Settings:
    """Defaults < file < ACMS_* < the command's flags < ``--set``: checked against their types here,
    before the command does anything (a bad value is exit 6)."""
    return load_settings(root).merged(overrides).merged(flag_settings(), "--set")


RELAY_MARGIN = 60.0  # seconds an answer may take beyond the wait for the index (a refresh first)


@dataclass(frozen=True)
class RelayTarget:
    """Where a running ``acms watch`` would answer this command (``acms.cli.relay``), and what it must match."""

    location: Path | str
    root: str
    fingerprint: str
    wait: float


def relay_target(project: Path, store: Path | str | None, **overrides: Any) -> RelayTarget | None:
    """The index this command would open, found without the engine; None when the command must run on its
    own anyway (a remote store, a ``--wait`` of its own, or a mistake in the project or the settings,
    which it reports as always)."""
    from acms.cli import relay

    if "seconds" in _wait:  # how long to wait for a writer is the command's to decide
        return None
    try:
        root = project_root(project)
        settings = settings_for(root, **overrides)
    except AcmsError:
        return None
    location = index_location(root, settings.store, store)
    if isinstance(location, str):
        return None
    return RelayTarget(location, str(root), relay.fingerprint(settings), wait_seconds(settings) + RELAY_MARGIN)


def relay_answer(command: str, project: Path, store: Path | str | None, refresh: str | None,
                 fields: dict[str, Any]) -> dict[str, Any] | None:
    """A running watcher's answer to this command (``acms.cli.relay``): what the command prints, on
    ``stdout`` and ``stderr`` (and ``exit``, the code of an error it reports); None when the command runs
    on its own."""
    from acms.cli import relay

    target = relay_target(project, store, refresh=refresh)
    if target is None:
        return None
    return relay.ask(target.location, {"command": command, "root": target.root, "settings": target.fingerprint,
                                       **fields}, target.wait)


def open_index(project: Path, store: Path | str | None, *, write: bool = False, shared: bool = False,
               strategies_dirs: Iterable[Path] = (), **overrides: Any) -> Index:
    """The existing index of a project, held for the duration of one command: read-only beside any
    number of other readers, or (``write``) as the one writer, waiting for the others to finish;
    ``shared`` for a server (the lock per request). A missing index is StoreMissing (exit 4); only
    ``acms index`` creates one."""
    return index_opener(project, store, write=write, shared=shared, strategies_dirs=strategies_dirs, **overrides)()


def index_opener(project: Path, store: Path | str | None, *, write: bool = False, shared: bool = False,
                 create: bool = False, strategies_dirs: Iterable[Path] = (), **overrides: Any) -> Callable[[], Index]:
    """``Index.opener`` with the command's settings (its flags, ``--set`` and ``--wait``), read now while
    the command's context exists (a server opens it later, from another thread). ``create``: the one
    writer, which may start a new index (as ``acms index`` does)."""
    from acms.api import Index

    root = project_root(project)
    settings = settings_for(root, **overrides)
    mode = "write" if create or write else "shared" if shared else "read"
    return Index.opener(root, store=store, mode=mode, wait=wait_seconds(settings), create=create,
                        command=" ".join(sys.argv[:3]), settings=settings, strategies_dirs=strategies_dirs)


def refresh_option(func: F) -> F:
    """``--refresh auto|warn|off``: the ``refresh`` setting for this read."""
    return click.option(
        "--refresh", type=click.Choice(["auto", "warn", "off"]), default=None,
        help="Files changed on disk since indexed: auto re-indexes them first (default), warn answers and "
             "names them, off does not look (the `refresh` setting).",
    )(func)


def watch_option(func: F) -> F:
    return click.option(
        "--watch/--no-watch", "watch", default=True, show_default=True,
        help="Follow the project: refresh the index shortly after files are saved (as `acms watch` does).",
    )(func)


def follower(index: Index, on_refresh: Callable[[Any], object]) -> Any:
    """What follows ``index``'s project (``acms watch``, and beside ``acms mcp`` and ``acms serve``)."""
    return index.follower(on_refresh)


def start_following(index: Index, name: str) -> Any:
    """A follower thread refreshing ``index`` after saves, its failures noted on stderr."""

    def note(done: Any) -> None:
        # what a refresh did is the answers' news; what it could not do, and a refit (it holds the index for
        # seconds), the log's
        if done.error or done.skipped or done.refitted:
            click.echo(f"{name}: note: {done.line()}", err=True)

    return follower(index, note).start()


def stale_lines(stale: Iterable[str]) -> list[str]:
    """On stderr, as a read prints them: the indexed files it answered without (``refresh = warn``, or a
    refresh that could not run)."""
    from acms.results import stale_notice

    return [f"acms: note: {notice}"] if (notice := stale_notice(list(stale))) else []


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True, default=str))


def _check_arguments(kwargs: dict[str, Any]) -> None:
    """No control character, NUL byte or undecodable byte in any argument (tab and newline are fine;
    paths are checked where they are read)."""
    for name, value in kwargs.items():
        if isinstance(value, Path):
            continue
        for field, text in walk_strings(value, name):
            if why := text_problem(text):
                raise UsageError(f"{field.replace('_', '-')}: {why}")


REQUEST_ID = "acms.request_id"  # click context meta: the request id a command's error envelope quotes


def failure(exc: AcmsError, envelope: bool, request_id: str = "") -> dict[str, Any]:
    """What the CLI prints of an error, as a command's answer (``echo_failure`` prints it; a watcher sends
    it, ``acms.cli.relay``): the v0 error envelope on stdout when a machine reads the output, one line
    (and the error's report) on stderr, and the error's exit code from the table."""
    stdout = ""
    if envelope and not exc.reported:
        from acms.assembly.protocol import envelope_for

        stdout = json.dumps(envelope_for(exc, request_id=request_id), indent=2, sort_keys=True, default=str)
    return {"stdout": stdout, "stderr": [f"acms: error: {exc.message}", *(f"  {line}" for line in
                                                                         getattr(exc, "report", [])[:50])],
            "exit": exc.exit_code}


def echo_failure(answer: dict[str, Any]) -> NoReturn:
    """Print a ``failure`` and end the command with its exit code."""
    if answer["stdout"]:
        click.echo(answer["stdout"])
    for line in answer["stderr"]:
        click.echo(line, err=True)
    sys.exit(answer["exit"])


def _fail(exc: AcmsError, envelope: bool) -> NoReturn:
    """The one place the CLI maps an error (``failure``)."""
    ctx = click.get_current_context(silent=True)
    echo_failure(failure(exc, envelope, request_id=str(ctx.meta.get(REQUEST_ID, "")) if ctx else ""))


def _guarded(func: F, always_envelope: bool) -> F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            try:
                _check_arguments(kwargs)
                return func(*args, **kwargs)
            except OSError as exc:  # a full disk, a read-only file system: one line, not a traceback
                raise environment_error(exc) or exc from None
        except AcmsError as exc:
            _fail(exc, always_envelope or bool(kwargs.get("as_json")) or kwargs.get("fmt") == "json")
        except KeyboardInterrupt:  # Ctrl-C: what it stopped, in one line, and the shell's code for it
            click.echo("acms: interrupted: nothing half-written (a write it stopped is rolled back; the index "
                       "is as its last complete write left it)", err=True)
            sys.exit(130)

    return wrapper  # type: ignore[return-value]


class _Boundary:
    """``@boundary``: turn AcmsError into a one-line message and its exit code; nothing else is swallowed.
    A command asked for JSON (``--json``, ``--format json``) also prints the error as the v0 error
    envelope on stdout, where its machine reader looks (code, message, whether a retry can help, what to
    do). ``@boundary.envelope``: a command whose output is always JSON (``acms render``)."""

    def __call__(self, func: F) -> F:
        return _guarded(func, always_envelope=False)

    def envelope(self, func: F) -> F:
        return _guarded(func, always_envelope=True)


boundary = _Boundary()


def leave(code: object) -> NoReturn:
    """End the ``acms`` process without the interpreter's teardown, which frees every object one at a
    time: after an index run or an assembly that held a standard library's caches (lists of 73k
    strings, dicts of 200k tokens) that cost ~50-100 ms of the command's wall time, for memory the
    system takes back at once. What a normal exit does first is done first: other threads are let
    finish as at interpreter shutdown (``threading._shutdown``), exit functions run (``atexit``:
    finalizers, logging, multiprocessing), and the standard streams are flushed. Under a profiler or a
    coverage tracer, which write what they gathered at the teardown, the exit is a normal one.
    ``code`` is ``SystemExit``'s."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(code)  # type: ignore[arg-type]
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # as ``sys.exit("message")`` does
        print(code, file=sys.stderr)
        status = 1
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (``acms … | head``) or a closed stream
            pass
    os._exit(status & 0xFF)
