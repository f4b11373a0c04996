"""The acms CLI end to end: real subprocesses for locking and `python -m`, click's runner otherwise."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from acms.cli.main import cli
from acms.store.oxigraph import OxigraphStore


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_python_dash_m_help() -> None:
    out = subprocess.run([sys.executable, "-m", "acms", "--help"], capture_output=True, text=True, check=True)
    assert "index" in out.stdout and "sparql" in out.stdout and "Exit codes" in out.stdout


def test_every_command_has_help() -> None:
    for name, command in cli.commands.items():
        assert command.help and len(command.help) > 20, name
        code, out, _ = run(name, "--help")
        assert code == 0 and "Usage" in out


def test_index_json_summary_and_stats(sample_project: Path) -> None:
    code, out, _ = run("index", str(sample_project), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["files_indexed"] == data["files_listed"] >= 5
    assert data["skipped_counts"]["binary"] == 2
    code, out, _ = run("stats", "-C", str(sample_project), "--json")
    stats = json.loads(out)
    assert stats["classes"]["Method"] == 4 and stats["classes"]["Class"] == 2
    assert stats["languages"]["python"]["files"] == 4
    assert stats["last_run"]["indexed"] == str(data["files_indexed"])
    code, out, _ = run("index", str(sample_project))
    assert code == 0 and "up to date" in out
    run("index", str(sample_project))
    # every write open rolls RocksDB's info log over; the rolled-over files do not pile up in the store
    store = sample_project / ".acms" / "graph"
    assert (store / "LOG").is_file() and not list(store.glob("LOG.old.*"))


def test_commands_without_arguments_take_the_project_as_one(indexed_sample: Path, tmp_path: Path) -> None:
    # `acms mcp /path/to/repo` is how agents' configurations write it; -C says the same
    for name in ("stats", "validate", "watch", "serve", "mcp"):
        assert re.search(rf"Usage: cli {name} \[OPTIONS\] \[PROJECT\]", run(name, "--help")[1]), name
    code, by_argument, _ = run("stats", str(indexed_sample), "--json")
    assert code == 0 and json.loads(by_argument) == json.loads(run("stats", "-C", str(indexed_sample), "--json")[1])
    assert run("stats", str(indexed_sample), "-C", str(indexed_sample))[0] == 0
    code, _, err = run("stats", str(indexed_sample), "-C", str(tmp_path))
    assert code == 2 and "given twice" in err


def test_sparql_saved_and_formats(indexed_sample: Path) -> None:
    code, out, _ = run("sparql", "-C", str(indexed_sample), "--saved", "callers", "--bind", "name=normalize")
    assert code == 0 and "pkg.mod.Parser.parse_header" in out
    code, out, _ = run("sparql", "-C", str(indexed_sample), "--saved", "callers", "--bind", "name=normalize",
                       "--format", "json")
    rows = json.loads(out)["results"]["bindings"]
    assert [r["caller"]["value"] for r in rows] == ["pkg.mod.Parser.parse_header"]
    code, out, _ = run("sparql", "-C", str(indexed_sample), "ASK { GRAPH ?g { ?c a uko:Class } }")
    assert out.strip() == "true"
    code, out, _ = run("sparql", "-C", str(indexed_sample),
                       "CONSTRUCT { ?c a uko:Class } WHERE { GRAPH ?g { ?c a uko:Class } }")
    assert code == 0 and out.startswith("@prefix") and out.count(" uko:Class") == 2  # Turtle, with prefixes
    code, out, _ = run("sparql", "--list")
    assert "callers" in out and "module-dependencies" in out


def test_sparql_counts_tokens_and_refuses_unknown_functions(indexed_sample: Path) -> None:
    """A fragment's token count is not stored: a query counts one; a function acms does not define is the
    query's error (exit 3), not the store's."""
    from acms.tokens import count

    code, out, _ = run("sparql", "-C", str(indexed_sample), "--format", "json",
                       'SELECT ?t (fn:tokenCount(?t) AS ?n) WHERE { GRAPH ?g { ?e uko:qualifiedName '
                       '"pkg.util.normalize" ; uko:hasFragment ?f . ?f uko:lod "micro" ; uko:text ?t } }')
    [row] = json.loads(out)["results"]["bindings"]
    assert code == 0 and int(row["n"]["value"]) == count(row["t"]["value"]) > 5
    code, _, err = run("sparql", "-C", str(indexed_sample), 'SELECT (<urn:x:nope>("a") AS ?n) WHERE {}')
    assert code == 3 and "<urn:x:nope>, a function acms does not define" in err


def test_a_300_token_json_request_returns_context(indexed_sample: Path) -> None:
    """In JSON the budget covers the fragments' text (sum of cost_tokens), not the envelope around it."""
    from acms.assembly.protocol import envelope_bound
    from acms.tokens import count

    code, out, err = run("assemble", "how are header lines parsed", "-C", str(indexed_sample),
                         "--budget", "300", "--format", "json")
    assert code == 0, err
    reply = json.loads(out)
    texts = [count(f["text"]) for f in reply["fragments"]]
    assert texts and any("def parse_header" in f["text"] for f in reply["fragments"])
    assert reply["fragments"][0]["source_ref"].startswith("pkg/mod.py:")  # the code first, docs after
    assert all(re.fullmatch(r"[\w/.]+:\d+-\d+", f["source_ref"]) for f in reply["fragments"])
    assert texts == [f["cost_tokens"] for f in reply["fragments"]]
    assert sum(texts) == reply["metrics"]["used_tokens"] <= 300
    assert reply["metrics"]["reply_tokens"] == count(out.strip())
    assert count(out.strip()) - sum(texts) <= envelope_bound(reply)
    assert "https://" not in out  # no IRIs in the envelope


@pytest.mark.parametrize(
    ("args", "exit_code", "needle"),
    [
        (["index", "/nonexistent/acms-path"], 2, "no such directory"),
        (["stats", "-C", "/nonexistent/acms-path"], 2, "no such directory"),
        (["sparql", "-C", ".", "--saved", "nope"], 2, "unknown saved query 'nope'"),
        (["sparql", "--saved", "callers"], 2, "needs --bind name=..."),
        (["sparql", "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"], 3, "SERVICE is refused"),
        (["sparql", "SELECT * WHERE " + "{" * 300 + "}" * 300], 3, "nests 300 levels"),
        (["sparql", "--bind", "oops", "ASK {}"], 2, "--bind expects name=value"),
    ],
)
def test_bad_input_is_one_line_error(args: list[str], exit_code: int, needle: str) -> None:
    code, out, err = run(*args)
    assert code == exit_code, (out, err)
    assert needle in err
    assert "Traceback" not in err


def test_path_is_a_file_and_missing_store(tmp_path: Path) -> None:
    f = tmp_path / "file.txt"
    f.write_text("x")
    code, _, err = run("index", str(f))
    assert code == 2 and "not a directory" in err
    code, _, err = run("stats", "-C", str(tmp_path))
    assert code == 4 and "run `acms index` first" in err


def test_malformed_query(indexed_sample: Path) -> None:
    code, _, err = run("sparql", "-C", str(indexed_sample), "SELECT ?x WHERE { ?x ?y }")
    assert code == 3 and "syntax error: error at 1:26" in err  # the user's line and column


def test_sparql_default_graph_and_describe(indexed_sample: Path) -> None:
    """The default graph is the project as it is now; --default-graph all/empty; DESCRIBE as JSON-LD."""
    def count(*extra: str) -> int:
        code, out, err = run("sparql", "-C", str(indexed_sample), "--format", "csv", *extra)
        assert code == 0, err
        return int(out.splitlines()[1])

    everything = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    current, union, empty = count(everything), count(everything, "--default-graph", "all"), \
        count(everything, "--default-graph", "empty")
    ontology = count("SELECT (COUNT(*) AS ?n) FROM <https://w3id.org/acms/graph/ontology> WHERE { ?s ?p ?o }")
    assert current > 0 and empty == 0 and union >= current + ontology and ontology > 0
    code, out, _ = run("sparql", "-C", str(indexed_sample), "--format", "csv", "SELECT ?c WHERE { ?c a uko:Class }")
    entity = out.splitlines()[1].strip()
    code, out, _ = run("sparql", "-C", str(indexed_sample), "--format", "jsonld", f"DESCRIBE <{entity}>")
    assert code == 0 and json.loads(out)[0]["@id"] == entity
    code, _, err = run("sparql", "-C", str(indexed_sample), "--format", "jsonld", "ASK { ?s ?p ?o }")
    assert code == 2 and "is for CONSTRUCT/DESCRIBE" in err


def test_describe_and_history_take_the_end_of_a_qualified_name(indexed_sample: Path) -> None:
    """``Class.method``, as an agent writes it, names the one entity whose qualified name ends with it."""
    for command in ("describe", "history"):
        code, out, err = run(command, "-C", str(indexed_sample), "Parser.parse_header")
        assert code == 0, err
        assert out.startswith("pkg.mod.Parser.parse_header [Method] pkg/mod.py:20"), out
    code, out, err = run("describe", "-C", str(indexed_sample), "mod.Parser")
    assert code == 0 and out.startswith("pkg.mod.Parser [Class]"), (out, err)
    code, _, err = run("describe", "-C", str(indexed_sample), "Base.parse_header")
    assert code == 2 and "no entity named 'Base.parse_header'" in err and "Traceback" not in err
    code, _, err = run("history", "-C", str(indexed_sample), "Base.parse_header")
    assert code == 2 and "no entity, file or earlier version is named 'Base.parse_header'" in err


def test_locked_store_is_a_clear_error(sample_project: Path) -> None:
    """A second writer waits for the first up to --wait, then says who holds the index (exit 4)."""
    holder = OxigraphStore(sample_project / ".acms" / "graph", command="acms index (test)")
    try:
        out = subprocess.run([sys.executable, "-m", "acms", "index", str(sample_project), "--wait", "0.3"],
                             capture_output=True, text=True)
    finally:
        holder.close()
    assert out.returncode == 4
    assert "in use by another acms process" in out.stderr and "acms index (test)" in out.stderr
    assert "waited 0.3 s" in out.stderr and "Traceback" not in out.stderr


def test_validate_conforms(indexed_sample: Path) -> None:
    code, out, _ = run("validate", "-C", str(indexed_sample))
    assert code == 0 and "conforms" in out


def test_float_settings_work_and_a_bad_one_writes_nothing(sample_project: Path) -> None:
    """`hot_days = 7` (a documented float setting) indexes; `hot_days = "soon"` is exit 6 before any write."""
    (sample_project / "acms.toml").write_text('hot_days = "soon"\n')
    code, _, err = run("index", str(sample_project))
    assert code == 6 and "hot_days" in err and not (sample_project / ".acms" / "graph").exists()
    (sample_project / "acms.toml").write_text("hot_days = 7\nhot_use_days = 0.5\n")
    code, _, err = run("index", str(sample_project))
    assert code == 0, err
    code, out, _ = run("tiers", "-C", str(sample_project), "--json")
    assert code == 0 and "7" in out


def test_readers_of_a_first_index_that_did_not_finish_say_so(sample_project: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A first `acms index` that fails after writing (a full disk, here an error in its last phases) is
    rolled back to the empty store it started from; readers answered from it as if the project were
    empty ("no matching fragments", an empty context, exit 0). They now say there is no index yet."""
    from acms.api import Index
    from acms.errors import StoreMissing
    from acms.service.indexing import IndexRun

    def fail(self: IndexRun) -> None:
        raise OSError("No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(IndexRun, "_after_files", fail)
        with pytest.raises(OSError), Index.open(sample_project) as index:
            index.index()
    assert (sample_project / ".acms" / "graph").is_dir()  # the store is there, empty
    with pytest.raises(StoreMissing, match="did not finish"):
        Index.open(sample_project, mode="read")
    with Index.open(sample_project, mode="shared") as shared, pytest.raises(StoreMissing, match="did not finish"):
        shared.search("parse header")  # a long-lived reader (acms serve, acms mcp) checks per call
    for args in (["search", "parse header"], ["assemble", "how are headers parsed"], ["stats"]):
        code, out, err = run(*args, "-C", str(sample_project))
        assert code == 4 and "did not finish" in err and out == "", (args, code, out, err)
    code, _, err = run("index", str(sample_project), "--quiet")
    assert code == 0, err
    code, out, _ = run("search", "parse header", "-C", str(sample_project))
    assert code == 0 and "parse_header" in out


def test_a_command_asked_for_json_prints_its_error_as_the_v0_envelope(tmp_path: Path) -> None:
    """An agent reading `--json` output gets the error where it reads (stdout, parseable): its code, whether
    a retry can help and what to do; the one-line message still goes to stderr, the exit code is the same."""
    (tmp_path / "a.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    for args in (["search", "f", "--json"], ["assemble", "what does f return", "--format", "json"],
                 ["stats", "--json"]):
        code, out, err = run(*args, "-C", str(tmp_path))
        assert code == 4, (args, out, err)
        error = json.loads(out)["error"]
        assert error["code"] == "STORE_MISSING" and error["retriable"] is False, args
        assert error["options"][0]["action"] == "run_index" and "acms index" in error["message"]
        assert err.startswith("acms: error: no index at")
    code, out, err = run("search", "f", "-C", str(tmp_path))  # without --json: stderr only, as before
    assert code == 4 and out == "" and "no index at" in err


def test_the_console_script_leaves_as_a_normal_exit_would(tmp_path: Path) -> None:
    """``acms`` ends without the interpreter's teardown (``cli.common.leave``), and still: other threads
    finish, exit functions run, both streams are flushed, and the status is the command's."""
    script = (
        "import atexit, sys, threading, time\n"
        "from acms.cli.common import leave\n"
        "atexit.register(lambda: print('exit function ran'))\n"
        "threading.Thread(target=lambda: (time.sleep(0.2), print('thread finished'))).start()\n"
        "print('buffered', end='')\n"
        "sys.stderr.write('to stderr')\n"
        "leave(int(sys.argv[1]) if sys.argv[1].isdigit() else sys.argv[1])\n"
    )
    for code, status in (("3", 3), ("0", 0), ("a message", 1)):
        done = subprocess.run([sys.executable, "-c", script, code], capture_output=True, text=True, timeout=60)
        assert done.returncode == status
        assert done.stdout.splitlines() == ["bufferedthread finished", "exit function ran"]
        assert done.stderr.startswith("to stderr")
        assert done.stderr.rstrip().endswith("a message") == (code == "a message")
    version = subprocess.run([sys.executable, "-m", "acms", "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("acms, version")
    unknown = subprocess.run([sys.executable, "-m", "acms", "no-such-command"], capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and "No such command" in unknown.stderr
    # under a profiler the interpreter's teardown is kept: the profiler writes its data there
    profiled = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(tmp_path / "acms.prof"), "-m", "acms",
                               "no-such-command"], capture_output=True, text=True, timeout=60)
    assert "No such command" in profiled.stderr and (tmp_path / "acms.prof").stat().st_size > 0
