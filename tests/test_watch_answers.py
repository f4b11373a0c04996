"""Commands answered by a running ``acms watch``, ``acms mcp`` or ``acms serve`` (``acms.cli.relay``).

The server holds the index warm and fresh; ``acms assemble``, ``acms search``, ``acms describe``, ``acms
sparql`` and ``acms history`` hand it the request over a Unix socket only their user can reach and print
its answer. It must be what the command prints on its own, fresh after an edit, without the command
starting the engine; and the command must run on its own whenever the server cannot answer for it:
other settings, its own ``--wait``, an error to report, a watcher killed with -9 (its socket left
behind), a second watcher. A query's error comes back as the command prints it (one stopped at its
time limit is not run twice). Real processes, a real socket, real file edits.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from acms import __version__
from acms.api import Index
from acms.cli import relay
from acms.cli.watch_cmd import answering
from tests.provenance import check_markdown
from tests.service.test_refresh_races import Watch
from tests.test_live_provenance import ACMS, EDITS, RUN_TIMEOUT, check_context, copy_of, live_project, look

TASK = "how are header lines parsed, and the area of a circle"
QUERY = "parse header circle area"
DESCRIBES = (("pkg.mod.make_parser",), ("pkg.mod.make_parser", "--json"), ("pkg.mod.no_such_function",))
# Reads whose answer the watcher gives, or whose error it reports, as the command alone: a table, JSON, a
# syntax error told in the JSON envelope, a saved query without its parameter, an entity's history.
READS = (("sparql", "SELECT ?f WHERE { ?f a uko:Function } ORDER BY ?f"),
         ("sparql", "SELECT ?f WHERE { ?f a uko:Function } ORDER BY ?f", "--format", "json"),
         ("sparql", "SELECT ?f WHERE { ?f a uko:Function", "--format", "json"),
         ("sparql", "--saved", "callers"),
         ("history", "pkg.mod.make_parser"), ("history", "pkg.mod.make_parser", "--json"))
QUERY_TIMEOUT = 2  # seconds (the project's acms.toml): what stops the endless query
ENDLESS = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
BUDGET = "2500"
WAIT = 20.0
MS = re.compile(r", \d+ ms$")  # the planner's time on the summary line: the one part that differs run to run


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([ACMS, *args, "-C", str(root)], check=False, capture_output=True, text=True,
                         timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
    assert "Traceback" not in out.stderr, out.stderr
    return out


def summary(out: subprocess.CompletedProcess[str]) -> list[str]:
    return [MS.sub("", line) for line in out.stderr.splitlines()]


def sock(root: Path) -> Path:
    """Where a watcher of ``root``'s index answers."""
    path = relay.socket_path(root / ".acms", create=True)
    assert path is not None
    return path


def answers(watch: Watch, command: str = "assemble") -> int:
    return sum(1 for line in watch.lines if line.get("answered") == command)


def answered(watch: Watch, count: int, command: str = "assemble") -> int:
    """The watcher's answers to ``command`` so far, once ``count`` of them are read or ``WAIT`` passed:
    its line comes through a pipe a thread reads, a moment after the command has printed."""
    deadline = time.monotonic() + WAIT
    while answers(watch, command) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return answers(watch, command)


def untimed(out: subprocess.CompletedProcess[str]) -> dict[str, object]:
    """``acms search --json`` without its timings, the one part that differs run to run."""
    found = json.loads(out.stdout)
    del found["timings_ms"]
    return found


def listening(root: Path, watch: Watch) -> None:
    """Until the watcher follows saves and answers on its socket."""
    watch.wait_watching()
    deadline = time.monotonic() + WAIT
    while not sock(root).exists():
        assert watch.proc.poll() is None and time.monotonic() < deadline, watch.stderr
        time.sleep(0.05)


@dataclass
class Watched:
    root: Path
    watch: Watch
    alone: subprocess.CompletedProcess[str]  # the command on its own, before any watcher ran
    alone_error: subprocess.CompletedProcess[str]
    alone_search: subprocess.CompletedProcess[str]
    alone_search_json: subprocess.CompletedProcess[str]
    alone_describe: list[subprocess.CompletedProcess[str]]  # text, JSON, an entity no file defines
    alone_reads: list[subprocess.CompletedProcess[str]]  # READS


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The projects the live-provenance tests edit, indexed once."""
    return live_project(tmp_path_factory.mktemp("indexed"))


@pytest.fixture(scope="module")
def watched(indexed: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Watched]:
    root = copy_of(indexed, tmp_path_factory.mktemp("answers"))
    (root / "acms.toml").write_text(f"query_timeout = {QUERY_TIMEOUT}\n", encoding="utf-8")
    alone = run(root, "assemble", TASK, "--budget", BUDGET)
    alone_error = run(root, "assemble", TASK, "--strategy", "no-such-strategy")
    alone_search, alone_search_json = run(root, "search", QUERY), run(root, "search", QUERY, "--json")
    alone_describe = [run(root, "describe", *args) for args in DESCRIBES]
    alone_reads = [run(root, *args) for args in READS]
    assert [o.returncode for o in alone_reads] == [0, 0, 3, 2, 0, 0], [o.stderr for o in alone_reads]
    assert alone.returncode == 0 and alone_error.returncode != 0, (alone.stderr, alone_error.stderr)
    assert alone_search.returncode == alone_search_json.returncode == 0, alone_search.stderr
    watch = Watch(root)
    try:
        listening(root, watch)
        yield Watched(root, watch, alone, alone_error, alone_search, alone_search_json, alone_describe, alone_reads)
    finally:
        assert watch.stop() == 0, watch.stderr
    assert not sock(root).exists(), "the watcher left its socket behind"


def test_the_watcher_answers_with_the_context_the_command_gives_alone(watched: Watched) -> None:
    before = answers(watched.watch)
    out = run(watched.root, "assemble", TASK, "--budget", BUDGET)
    assert out.returncode == 0, out.stderr
    assert answered(watched.watch, before + 1) == before + 1, (watched.watch.lines, watched.watch.stderr)
    assert out.stdout == watched.alone.stdout
    assert summary(out) == summary(watched.alone)


def test_the_watcher_answers_search_as_the_command_alone(watched: Watched) -> None:
    before = answers(watched.watch, "search")
    text, as_json = run(watched.root, "search", QUERY), run(watched.root, "search", QUERY, "--json")
    assert answered(watched.watch, before + 2, "search") == before + 2
    assert (text.returncode, text.stdout, text.stderr) == (0, watched.alone_search.stdout, watched.alone_search.stderr)
    assert as_json.returncode == 0 and untimed(as_json) == untimed(watched.alone_search_json)
    assert untimed(as_json)["hits"]


def test_the_watcher_answers_describe_as_the_command_alone(watched: Watched) -> None:
    before = answers(watched.watch, "describe")
    got = [run(watched.root, "describe", *args) for args in DESCRIBES]
    assert [(o.returncode, o.stdout, o.stderr) for o in got] == [
        (o.returncode, o.stdout, o.stderr) for o in watched.alone_describe]
    assert [o.returncode for o in got] == [0, 0, 2] and "make_parser" in got[0].stdout
    assert answered(watched.watch, before + 2, "describe") == before + 2  # the unknown entity: declined, told by the command


def test_the_watcher_answers_queries_and_histories_as_the_commands_alone(watched: Watched) -> None:
    """Their errors too: a syntax error (with its JSON envelope) and a saved query missing its parameter are
    answered as the command prints them, with its exit code."""
    queries, histories = answers(watched.watch, "sparql"), answers(watched.watch, "history")
    got = [run(watched.root, *args) for args in READS]
    assert [(o.returncode, o.stdout, o.stderr) for o in got] == [
        (o.returncode, o.stdout, o.stderr) for o in watched.alone_reads]
    assert "pkg.mod.make_parser" in got[1].stdout and json.loads(got[2].stdout)["error"]
    assert answered(watched.watch, queries + 4, "sparql") == queries + 4
    assert answered(watched.watch, histories + 2, "history") == histories + 2
    codes = [line.get("exit", 0) for line in watched.watch.lines if line.get("answered") == "sparql"][-4:]
    assert codes == [0, 0, 3, 2]  # the watcher's line says which answers were errors


def test_a_query_stopped_at_its_time_limit_is_not_run_again(watched: Watched) -> None:
    """The watcher reports the limit as the command would; the command does not run the query itself."""
    before = answers(watched.watch, "sparql")
    out = run(watched.root, "sparql", ENDLESS)
    assert out.returncode != 0 and out.stdout == "", out.stderr
    assert out.stderr.startswith(f"acms: error: the query ran past its {QUERY_TIMEOUT:g} s"), out.stderr
    assert answered(watched.watch, before + 1, "sparql") == before + 1


def untimed_reply(out: subprocess.CompletedProcess[str]) -> dict[str, object]:
    """A render_context_reply.v0 without its timings, the one part that differs run to run."""
    reply = json.loads(out.stdout)
    for key in ("planner_ms", "timings_ms"):
        reply.get("metrics", {}).pop(key, None)
    return reply


def test_the_watcher_answers_render_as_the_command_alone(watched: Watched, tmp_path: Path) -> None:
    """A request file: the reply; an invalid request: the error envelope with its id and exit code 2.
    With ``--wait`` of its own the command runs alone: what it prints then is the measure."""
    good, bad = tmp_path / "request.json", tmp_path / "bad.json"
    request = {"version": "v0", "id": str(uuid.uuid4()), "intent": TASK, "request_id": "relayed",
               "budgets": {"tokens_max": 1500, "time_ms": 5000}, "privacy_mode": "allow", "format": "markdown"}
    good.write_text(json.dumps(request), encoding="utf-8")
    bad.write_text(json.dumps({**request, "budgets": {"tokens_max": -1, "time_ms": 5000}}), encoding="utf-8")
    before = answers(watched.watch, "render")
    got = [run(watched.root, "render", str(path)) for path in (good, bad)]
    alone = [run(watched.root, "render", str(path), "--wait", "5") for path in (good, bad)]
    assert answered(watched.watch, before + 2, "render") == before + 2
    assert got[0].returncode == alone[0].returncode == 0, (got[0].stderr, alone[0].stderr)
    assert untimed_reply(got[0]) == untimed_reply(alone[0]) and json.loads(got[0].stdout)["fragments"]
    assert (got[1].returncode, got[1].stdout, got[1].stderr) == (alone[1].returncode, alone[1].stdout, alone[1].stderr)
    assert got[1].returncode == 2 and json.loads(got[1].stdout)["request_id"] == "relayed"


def test_a_command_the_watcher_answers_does_not_start_the_engine(watched: Watched) -> None:
    """What makes it fast: the command finds the watcher with the settings and paths alone."""
    before = answers(watched.watch)
    out = relayed(watched.root, "assemble", TASK, "--budget", BUDGET)
    assert out.stdout == watched.alone.stdout and not engine_started(out)
    assert answered(watched.watch, before + 1) == before + 1
    for args, alone in zip(READS[:1] + READS[4:5], watched.alone_reads[:1] + watched.alone_reads[4:5]):
        out = relayed(watched.root, *args)
        assert out.stdout == alone.stdout and not engine_started(out, {"numpy", "acms.api", "tiktoken"}), args


def relayed(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A command run with ``-X importtime``: whether it started the engine is in its stderr."""
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "acms", *args, "-C", str(root)], check=False,
                         capture_output=True, text=True, timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr[-2000:]
    return out


ENGINE = frozenset({"numpy", "pyoxigraph", "acms.api", "acms.assembly.protocol", "tiktoken"})


def engine_started(out: subprocess.CompletedProcess[str], engine: frozenset[str] | set[str] = ENGINE) -> bool:
    """``acms sparql``'s options name the default graphs with pyoxigraph's terms (~5 ms): it passes
    the engine without it."""
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert {"click", "acms.cli.relay"} <= imported, sorted(imported)  # the lines were read
    return bool(imported & engine)


@pytest.mark.parametrize(("server", "stop"), [(("serve", "--port", "0"), "sigterm"), (("mcp",), "stdin"),
                                             (("mcp",), "sigterm")], ids=["serve", "mcp", "mcp-sigterm"])
def test_servers_that_follow_the_project_answer_too(server: tuple[str, ...], stop: str, watched: Watched,
                                                    tmp_path: Path) -> None:
    """`acms serve` and `acms mcp` follow the project as `acms watch` does, and answer as it does; stopped,
    they take their socket away (an MCP server as its client closes stdin, or as a supervisor stops it)."""
    root = copy_of(watched.root, tmp_path)  # the watched project as it is now (a copy: a socket of its own)
    alone = run(root, "assemble", TASK, "--budget", BUDGET)
    proc = subprocess.Popen([ACMS, *server, "-C", str(root)], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + WAIT
        while not sock(root).exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        out = relayed(root, "assemble", TASK, "--budget", BUDGET)
        assert out.stdout == alone.stdout and not engine_started(out)
    finally:  # how each is stopped: an MCP client closes its stdin, a supervisor sends SIGTERM
        if stop == "stdin" and proc.stdin is not None:
            proc.stdin.close()
        else:
            proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        for pipe in (proc.stdin, proc.stderr):
            if pipe is not None:
                pipe.close()
    assert not sock(root).exists()


def test_an_answer_after_an_edit_holds_the_lines_on_disk(watched: Watched) -> None:
    edit = EDITS[0]  # lines inserted above the functions of two files
    before = answers(watched.watch)
    edit.apply(watched.root)
    out = run(watched.root, "assemble", edit.task, "--budget", BUDGET)  # at once: the watcher may not have refreshed
    assert out.returncode == 0, out.stderr
    assert answered(watched.watch, before + 1) == before + 1
    check_context(watched.root, edit, check_markdown(watched.root, out.stdout, where="[watch] "), "[watch] ")
    assert not look(watched.root)


def test_other_settings_and_errors_run_on_their_own(watched: Watched) -> None:
    before = answers(watched.watch)
    warned = run(watched.root, "assemble", TASK, "--budget", BUDGET, "--refresh", "warn")  # another setting
    assert warned.returncode == 0, warned.stderr
    waited = run(watched.root, "assemble", TASK, "--budget", BUDGET, "--wait", "5")  # its own wait for a writer
    assert waited.returncode == 0, waited.stderr
    failed = run(watched.root, "assemble", TASK, "--strategy", "no-such-strategy")  # the watcher declines
    assert (failed.returncode, failed.stdout, failed.stderr) == (
        watched.alone_error.returncode, watched.alone_error.stdout, watched.alone_error.stderr)
    described = answers(watched.watch, "describe")
    run(watched.root, "describe", *DESCRIBES[0])  # answered: its line comes after any of theirs
    assert answered(watched.watch, described + 1, "describe") == described + 1
    assert answers(watched.watch) == before


def test_a_watcher_killed_leaves_the_command_answering_alone(indexed: Path, tmp_path: Path) -> None:
    root = copy_of(indexed, tmp_path)
    alone = run(root, "assemble", TASK, "--budget", BUDGET)
    first = Watch(root)
    listening(root, first)
    second = Watch(root)  # a second watcher of the project: it follows, the first answers
    try:
        deadline = time.monotonic() + WAIT
        while not any("another acms process answers" in line for line in second.stderr):
            assert second.proc.poll() is None and time.monotonic() < deadline, second.stderr
            time.sleep(0.05)
        assert run(root, "assemble", TASK, "--budget", BUDGET).stdout == alone.stdout
        assert answered(first, 1) == 1 and answers(second) == 0
    finally:
        assert second.stop() == 0
    os.kill(first.proc.pid, signal.SIGKILL)
    first.stop()
    assert sock(root).exists()  # left behind: nobody listens on it
    try:
        out = run(root, "assemble", TASK, "--budget", BUDGET)
        assert out.returncode == 0 and out.stdout == alone.stdout, out.stderr
    finally:
        sock(root).unlink(missing_ok=True)  # not left in the user's runtime directory by every test run


def test_the_watcher_declines_what_it_cannot_answer_for(indexed: Path, tmp_path: Path) -> None:
    """The socket's own checks, in process over a real index: another protocol or version, another
    root, other settings or an unknown command are declined (the command then runs on its own)."""
    root = copy_of(indexed, tmp_path)
    with Index.open(root, mode="shared") as index:
        answers_here = relay.Answering(index.location, index.root, index.settings, answering(index))
        assert answers_here.start() == ""
        try:
            request = {"version": "v0", "id": str(uuid.uuid4()), "intent": TASK, "request_id": "cli",
                       "budgets": {"tokens_max": 1500, "time_ms": 2000}, "privacy_mode": "allow",
                       "strategy": "auto", "format": "markdown"}
            good = {"command": "assemble", "root": str(index.root), "settings": relay.fingerprint(index.settings),
                    "request": request, "format": "markdown"}
            answer = relay.ask(index.location, good, WAIT)
            assert answer is not None and answer["stdout"].startswith("# Context for: ")
            assert answer["stderr"][0].startswith("-- ")
            for changed in ({"protocol": relay.PROTOCOL + 1}, {"version": f"{__version__}.0"}, {"command": "search"},
                            {"root": str(tmp_path)}, {"settings": "{}"},
                            {"request": {**request, "budgets": {"tokens_max": -1, "time_ms": 2000}}}):
                assert relay.ask(index.location, {**good, **changed}, WAIT) is None, changed
        finally:
            answers_here.stop()
    assert not sock(root).exists()
