"""``acms watch``: follow the project on its own, a line per refresh."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from acms.cli.assemble_cmd import answer_assemble, answer_render
from acms.cli.common import boundary, follower, open_index, project_argument, project_options
from acms.cli.describe_cmd import answer_describe
from acms.cli.relay import Answering, Handler
from acms.cli.search_cmd import answer_search
from acms.cli.sparql_cmd import answer_sparql
from acms.cli.temporal_cmd import answer_history
from acms.errors import AcmsError

if TYPE_CHECKING:
    from acms.api import Index


@click.command("watch")
@click.option("--debounce-ms", type=click.IntRange(min=10), default=None,
              help="Milliseconds of quiet after a save before refreshing (default 50, the watch_debounce_ms setting).")
@project_options
@project_argument
@click.option("--json", "as_json", is_flag=True, help="One JSON object per refresh instead of a line of text.")
@boundary
def watch_cmd(debounce_ms: int | None, project: Path, store: Path | None, as_json: bool) -> None:
    """Follow the project: refresh the index shortly after files are saved, a line per refresh.

    What `acms mcp` and `acms serve` do beside their work, on its own: first the files changed since
    the last run, then every burst of saves as one refresh (a branch switch too). Ignored and excluded
    paths stay ignored; readers and servers use the index meanwhile. Ctrl-C stops it.

    A refresh folds new code into the vector model; once the project has drifted far enough from the
    model's fit, the model is fitted again after a minute without a save (a worker fits it; reads wait
    only for its landing, a few seconds), with a line of its own.

    A saved file the index leaves out for what it holds (binary, over `max_file_bytes`, a symlink
    loop, gone while read) is named once with its reason; ignored and hidden paths are not news.

    While it runs, `acms assemble`, `acms render`, `acms search`, `acms describe`, `acms sparql` and
    `acms history` in this project are answered by it, warm and fresh, rather than by a process of their
    own (the same output; a line per answer here). A command with other settings or another project root
    runs on its own.

    \b
    Example:
      acms watch
      refreshed: 1 file re-indexed in 0.41 s: src/app.py
      skipped data/dump.json (too-large)
      answered: assemble in 0.48 s
    """
    from acms.results import Refreshed

    index = open_index(project, store, shared=True, watch_debounce_ms=debounce_ms)  # missing index: exit 4
    printing = threading.Lock()  # the follower and the answers print from their own threads

    def say(text: str, err: bool = False) -> None:
        with printing:
            click.echo(text, err=err)

    def report(done: Refreshed) -> None:
        if as_json:
            say(json.dumps({"indexed": done.indexed, "removed": done.removed, "relinked": done.relinked,
                            "paths": done.paths, "skipped": done.skipped, "seconds": round(done.seconds, 3),
                            "refitted": done.refitted, "error": done.error or None}))
        elif done.error:
            say("acms watch: " + done.line(), err=True)
        else:
            say(("refreshed: " if done.changed else "") + done.line())

    def answered(command: str, seconds: float, code: int) -> None:
        if as_json:
            say(json.dumps({"answered": command, "seconds": round(seconds, 3), **({"exit": code} if code else {})}))
        else:
            say(f"answered: {command} in {seconds:.2f} s" + (f" (an error, exit {code})" if code else ""))

    following = follower(index, report)
    signal.signal(signal.SIGTERM, lambda *_: following.stop(timeout=0))
    if not as_json:
        say(f"acms watch: following {index.root} (Ctrl-C to stop)", err=True)
    answers = start_answering(index, "acms watch", answered, note=lambda text: say(text, err=True))
    if answers is not None:
        threading.Thread(target=_warm, args=(index,), name="acms-warm", daemon=True).start()
    try:
        following.run()
    except KeyboardInterrupt:
        pass
    finally:
        if answers is not None:
            answers.stop()
        index.close()


def answering(index: Index) -> dict[str, Handler]:
    """The commands ``acms watch`` answers over its index (``acms.cli.relay``)."""
    return {"assemble": answer_assemble(index), "search": answer_search(index), "describe": answer_describe(index),
            "sparql": answer_sparql(index), "history": answer_history(index), "render": answer_render(index)}


def start_answering(index: Index, name: str, on_answer: Callable[[str, float, int], object] | None = None,
                    note: Callable[[str], object] | None = None) -> Answering | None:
    """``index``'s answers to the commands run in its project (``acms watch``, and beside ``acms mcp``
    and ``acms serve`` while they follow the project), or None with a note on stderr saying why not."""
    answers = Answering(index.location, index.root, index.settings, answering(index), on_answer)
    if why := answers.start():
        (note or (lambda text: click.echo(text, err=True)))(f"{name}: note: not answering other commands: {why}")
        return None
    return answers


def _warm(index: Index) -> None:
    """What the first answer would load (the caches, the tokenizer), loaded while nothing is asked; a
    failure here is the first answer's to report."""
    from acms.assembly.protocol import parse_request  # noqa: F401 - the request schema's checker, imported
    from acms.tokens import preload

    preload()
    try:
        index.warm()
    except (AcmsError, OSError):
        pass
