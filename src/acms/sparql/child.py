"""The child process of :mod:`acms.sparql.runner`: one user query, bounded, its answer written to a file.

Reads its job (a pickle from the parent, which is acms itself) on stdin, bounds its own address space
(``RLIMIT_AS``) before pyoxigraph allocates anything, asks the kernel to kill it with its parent, opens
the index read-only, evaluates, writes the answer and prints one JSON status line. It imports only
pyoxigraph and acms's query functions: its start-up is part of every bounded query's cost.
"""

from __future__ import annotations

import json
import pickle
import resource
import sys
from itertools import islice
from typing import IO, Any

import pyoxigraph as ox


def _cell(term: object) -> str:
    """A term as SPARQL TSV writes it (N-Triples syntax; a quoted triple in ``<< >>``)."""
    if term is None:
        return ""
    return f"<< {term} >>" if isinstance(term, ox.Triple) else str(term)


def write(result: object, out: IO[bytes], max_rows: int | None) -> str:
    """The answer in the file, cut at ``max_rows`` + 1 (so that the reader can tell it was cut); its form."""
    if isinstance(result, ox.QueryBoolean):
        out.write(json.dumps({"head": {}, "boolean": bool(result)}).encode())
        return "ask"
    if isinstance(result, ox.QuerySolutions):
        if max_rows is None:
            result.serialize(out, format=ox.QueryResultsFormat.TSV)
            return "select"
        names = [v.value for v in result.variables]
        out.write(("\t".join(f"?{n}" for n in names) + "\n").encode())
        for s in islice(result, max_rows + 1):
            out.write(("\t".join(_cell(s[n]) for n in names) + "\n").encode())
        return "select"
    if max_rows is None:
        ox.serialize(result, out, format=ox.RdfFormat.N_TRIPLES)  # type: ignore[arg-type]
    else:
        for t in islice(result, max_rows + 1):  # type: ignore[call-overload]
            out.write(f"{_cell(t.subject)} {t.predicate} {_cell(t.object)} .\n".encode())
    return "graph"


def run(job: dict[str, Any]) -> dict[str, Any]:
    from acms.sparql.functions import QUERY_FUNCTIONS

    try:
        store = ox.Store.read_only(job["path"])
        result = store.query(job["text"], prefixes=job["prefixes"], custom_functions=dict(QUERY_FUNCTIONS),
                             **job["dataset"])
        with open(job["out"], "wb") as out:
            form = write(result, out, job["max_rows"])
    except MemoryError:
        return {"error": "memory"}
    except SyntaxError as exc:
        return {"error": "syntax", "message": str(exc)}
    except (OSError, RuntimeError, ValueError) as exc:
        return {"error": "engine", "message": str(exc)}
    return {"form": form}


def main() -> int:
    job = pickle.load(sys.stdin.buffer)
    bound = int(job["memory_mb"]) * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (bound, bound))
    from acms.lifetime import die_with_parent

    die_with_parent()
    status = run(job)
    sys.stdout.write(json.dumps(status) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
