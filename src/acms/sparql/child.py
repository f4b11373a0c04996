"""The child process of :mod:`acms.sparql.runner`: one user query, bounded, its answer written to a file.

Reads its job (marshalled by the parent, which is acms itself) on stdin, bounds its own address space
(``RLIMIT_AS``) before pyoxigraph allocates anything, asks the kernel to kill it with its parent, opens
the index read-only, evaluates, writes the answer and writes its status (a marshalled dict) on stdout.

Its start-up is part of every bounded query's cost, so it runs as a script without ``site`` (the
parent hands it its ``sys.path``), imports neither the ``acms`` package nor ``typing`` machinery, and
loads acms's query functions only for a query that calls one (``fn:``), and speaks ``marshal`` (built
in) rather than json or pickle (which import ``re``, ``enum``, ``functools``): 40 ms of imports were 150.
"""

from __future__ import annotations

import io
import time
import marshal
import sys
from itertools import islice

if __name__ == "__main__":  # run as a script: its own folder is not a place to import from
    sys.path[:] = [p for p in sys.path[1:] if p]

import pyoxigraph as ox

TYPE_CHECKING = False  # typing itself is not imported: start-up
if TYPE_CHECKING:
    from typing import Any

_PR_SET_PDEATHSIG = 1
_SIGKILL = 9


def _cell(term: object) -> str:
    """A term as SPARQL TSV and N-Triples write it (a triple term as ``<<( s p o )>>``, which
    pyoxigraph's parsers read back; ``<< s p o >>`` is a reifier there and is refused)."""
    if term is None:
        return ""
    if isinstance(term, ox.Triple):
        return f"<<( {_cell(term.subject)} {_cell(term.predicate)} {_cell(term.object)} )>>"
    return str(term)


def write(result: object, out: io.BufferedWriter, max_rows: int | None) -> str:
    """The answer in the file, cut at ``max_rows`` + 1 (so that the reader can tell it was cut); its form."""
    if isinstance(result, ox.QueryBoolean):
        out.write(b'{"head": {}, "boolean": %s}' % (b"true" if result else b"false"))
        return "ask"
    if isinstance(result, ox.QuerySolutions):
        if max_rows is None:
            result.serialize(out, format=ox.QueryResultsFormat.TSV)
            return "select"
        names = [v.value for v in result.variables]
        out.write(("\t".join(f"?{n}" for n in names) + "\n").encode())
        for s in islice(result, max_rows + 1):
            out.write(("\t".join(_cell(v) for v in s) + "\n").encode())
        return "select"
    if max_rows is None:
        ox.serialize(result, out, format=ox.RdfFormat.N_TRIPLES)  # type: ignore[arg-type]
    else:
        for t in islice(result, max_rows + 1):  # type: ignore[call-overload]
            out.write(f"{_cell(t.subject)} {t.predicate} {_cell(t.object)} .\n".encode())
    return "graph"


def dataset(given: dict[str, Any]) -> dict[str, Any]:
    """The query's dataset arguments from their marshalled form (IRIs; None for the default graph)."""
    out: dict[str, Any] = {}
    if given.get("use_default_graph_as_union"):
        out["use_default_graph_as_union"] = True
    if "default_graph" in given:
        out["default_graph"] = [ox.DefaultGraph() if g is None else ox.NamedNode(g) for g in given["default_graph"]]
    if "named_graphs" in given:
        out["named_graphs"] = [ox.NamedNode(g) for g in given["named_graphs"]]
    return out


def run(job: dict[str, Any]) -> dict[str, str]:
    """Evaluate, write the answer; the status the parent reads."""
    functions: dict[Any, Any] = {}
    if job["functions"]:
        from acms.sparql.functions import QUERY_FUNCTIONS

        functions = dict(QUERY_FUNCTIONS)
    try:
        form = _answer(job, functions)
    except MemoryError:
        return {"error": "memory"}
    except SyntaxError as exc:
        return {"error": "syntax", "message": str(exc)}
    except (OSError, RuntimeError, ValueError) as exc:
        return {"error": "engine", "message": str(exc)}
    return {"form": form}


# A read-only view lists the index's files when it opens; a writer in another process (or in the
# parent: a writer session's own query) may compact some away before the view reads them, which
# RocksDB reports as a missing file. The view is opened again and the query run again.
VANISHED = ("No such file", "Corruption")
ATTEMPTS = 4


def _answer(job: dict[str, Any], functions: dict[Any, Any]) -> str:
    for attempt in range(ATTEMPTS):
        try:
            store = ox.Store.read_only(job["path"])
            result = store.query(job["text"], prefixes=job["prefixes"], custom_functions=functions,
                                 **dataset(job["dataset"]))
            with open(job["out"], "wb") as out:
                return write(result, out, job["max_rows"])
        except (OSError, RuntimeError) as exc:
            if attempt + 1 == ATTEMPTS or not any(v in str(exc) for v in VANISHED):
                raise
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")  # pragma: no cover


def main() -> int:
    _die_with_parent()  # first: a child started ahead whose parent ends without a job goes with it
    data = sys.stdin.buffer.read()
    if not data:  # started ahead and never given a job
        return 0
    job = marshal.loads(data)
    try:
        import resource  # POSIX; elsewhere the time limit alone holds
    except ImportError:
        pass
    else:
        bound = int(job["memory_mb"]) * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (bound, bound))
    status = run(job)
    sys.stdout.buffer.write(marshal.dumps(status))
    sys.stdout.flush()
    return 0


def _die_with_parent() -> None:
    """Linux: SIGKILL when the parent dies (``acms.lifetime.die_with_parent``, without importing acms)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, _SIGKILL)
    except (OSError, AttributeError):
        pass


if __name__ == "__main__":
    sys.exit(main())
