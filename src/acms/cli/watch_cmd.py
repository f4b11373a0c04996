"""``acms watch``: follow the project on its own, a line per refresh."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import click

from acms.cli.common import boundary, follower, open_index, project_argument, project_options


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

    A saved file the index leaves out for what it holds (binary, over `max_file_bytes`, a symlink
    loop, gone while read) is named once with its reason; ignored and hidden paths are not news.

    \b
    Example:
      acms watch
      refreshed: 1 file re-indexed in 0.41 s: src/app.py
      skipped data/dump.json (too-large)
    """
    from acms.results import Refreshed

    index = open_index(project, store, shared=True, watch_debounce_ms=debounce_ms)  # missing index: exit 4

    def report(done: Refreshed) -> None:
        if as_json:
            click.echo(json.dumps({"indexed": done.indexed, "removed": done.removed, "relinked": done.relinked,
                                   "paths": done.paths, "skipped": done.skipped, "seconds": round(done.seconds, 3),
                                   "error": done.error or None}), nl=True)
        elif done.error:
            click.echo("acms watch: " + done.line(), err=True)
        else:
            click.echo(("refreshed: " if done.changed else "") + done.line())

    following = follower(index, report)
    signal.signal(signal.SIGTERM, lambda *_: following.stop(timeout=0))
    if not as_json:
        click.echo(f"acms watch: following {index.root} (Ctrl-C to stop)", err=True)
    try:
        following.run()
    except KeyboardInterrupt:
        pass
    finally:
        index.close()
