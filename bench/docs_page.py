"""Put the table a bench script just printed on the benchmarks page of the documentation.

Why: figures copied by hand into prose go stale and lose the run they came from. A script wired here
(``run(main, NAME)`` under its ``__main__`` guard) prints as before; run with ``--write-docs`` it also
replaces the section of ``docs/benchmarks.md`` between ``<!-- bench:NAME -->`` and
``<!-- /bench:NAME -->`` with what it printed, under a caption naming the command, the machine and the
date (the caption is the only place a date belongs: the page's prose says what the table measures).

Why opt-in rather than opt-out: these scripts run on shared, loaded machines while code is being
changed, and the tests run parts of them on tiny projects; writing a tracked page by default would put
a partial or noisy run into the documentation unasked. ``--write-docs`` says "this run is the one".
"""

from __future__ import annotations

import contextlib
import datetime
import io
import os
import platform
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

PAGE = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
FLAG = "--write-docs"
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}")


class SectionMissing(Exception):
    """The page has no ``<!-- bench:NAME -->`` … ``<!-- /bench:NAME -->`` pair for this script."""


class _Tee(io.TextIOBase):
    """Writes go to the terminal as before and are kept for the page."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.kept = io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()


def caption(command: str, when: datetime.datetime | None = None) -> str:
    """Which run made the table: the command, the machine, the date (UTC) and the load as it started."""
    when = when or datetime.datetime.now(datetime.UTC)
    load = f", load {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
    return (f"*`{command}` on {platform.machine()} with {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, {when:%Y-%m-%d %H:%M} UTC{load}.*")


def as_markdown(printed: str) -> str:
    """Markdown tables stay tables; anything else (aligned columns) is kept verbatim in a text block."""
    text = printed.strip("\n")
    if any(_TABLE_RULE.match(line.strip()) and line.strip().startswith("|") for line in text.splitlines()):
        return text
    return f"```text\n{text}\n```"


def replace_section(page: str, name: str, body: str) -> str:
    """``page`` with the text between the NAME markers replaced by ``body`` (markers kept)."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if not pattern.search(page):
        raise SectionMissing(f"{PAGE.name} has no {start} … {end} section")
    return pattern.sub(lambda _: f"{start}\n{body.strip()}\n{end}", page, count=1)


def write_section(name: str, printed: str, label: str, page: Path = PAGE) -> None:
    """Replace section NAME with what was printed, under ``label`` (a :func:`caption`)."""
    body = f"{label}\n\n{as_markdown(printed)}"
    page.write_text(replace_section(page.read_text(encoding="utf-8"), name, body), encoding="utf-8")


@contextlib.contextmanager
def capture() -> Iterator[_Tee]:
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):  # type: ignore[type-var]
        yield tee


def run(main: Callable[[], Any], name: str, page: Path = PAGE) -> Any:
    """Run a bench script's ``main``; with ``--write-docs`` on the command line (taken off before the
    script's own parser sees it), put what it printed into section NAME of the page."""
    write = FLAG in sys.argv[1:]
    if write:
        sys.argv = [a for a in sys.argv if a != FLAG]
        if not page.exists():  # fail before the run, not after an hour of it
            raise SectionMissing(f"{page} does not exist")
        replace_section(page.read_text(encoding="utf-8"), name, "")
    label = caption("python " + " ".join([f"bench/{Path(sys.argv[0]).name}", *sys.argv[1:]]))  # load before
    with capture() as tee:
        result = main()
    if write:
        write_section(name, tee.kept.getvalue(), label, page)
        print(f"{FLAG}: section {name} of {page.name} replaced", file=sys.stderr)
    return result
