"""Every edge validates its input: arbitrary text gives an answer or a one-line error, never a traceback,
and never changes the store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from acms.assembly.protocol import parse_request

from acms.errors import InvalidRequest
from acms.cli.main import cli
from acms.store.oxigraph import OxigraphStore

BASE: dict[str, Any] = {"version": "v0", "id": "6f3b6f21-7a5f-4e3f-9af0-1b2c3d4e5f60", "intent": "parse header",
                        "budgets": {"tokens_max": 1000, "time_ms": 2000}, "request_id": "r1"}
HOSTILE = ["http://x> } ; DROP ALL ; <http://y", "\x00", "a\x01b", "\udcff", "x" * 20_000, "<>", "urn:", "../../etc"]
TEXT = st.one_of(st.text(max_size=200), st.sampled_from(HOSTILE))


@pytest.mark.parametrize("field", ["intent", "request_id", "strategy", "plan", "focus", "lod", "filters.paths"])
@given(value=TEXT)
@settings(max_examples=40, deadline=None)
def test_any_text_in_any_field_parses_or_names_the_field(field: str, value: str) -> None:
    data = json.loads(json.dumps(BASE))
    head, _, tail = field.partition(".")
    if tail:
        data[head] = {tail: [value]}
    elif field in {"focus", "lod"}:
        data[field] = [value]
    else:
        data[field] = value
    try:
        parse_request(data)
    except InvalidRequest as exc:
        assert exc.message.startswith("invalid render_request.v0: ") and "\n" not in exc.message
        assert head in exc.message


@pytest.mark.parametrize("value", HOSTILE[:5])
def test_hostile_focus_and_intent_are_refused_in_one_line(value: str) -> None:
    with pytest.raises(InvalidRequest) as err:
        parse_request({**BASE, "focus": [value], "intent": "x" + value})
    assert "focus[0]" in err.value.message or "intent" in err.value.message


def _quads(root: Path) -> int:
    store = OxigraphStore(root / ".acms" / "graph", read_only=True, wait=5)
    try:
        return len(store.raw)
    finally:
        store.close()


@given(task=TEXT, focus=TEXT, strategy=st.sampled_from(["auto", "arce", "../x", "a\nb", "\x00"]))
@example(task="0", focus="<>", strategy="auto")  # an empty bracketed IRI once reached the store
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_cli_assemble_never_tracebacks_and_never_writes(indexed_sample: Path, task: str, focus: str,
                                                        strategy: str) -> None:
    before = _quads(indexed_sample)
    out = CliRunner().invoke(cli, ["assemble", task, "--focus", focus, "--strategy", strategy,
                                   "-C", str(indexed_sample), "--budget", "400"])
    assert out.exit_code in (0, 2), (out.exit_code, out.output, repr(out.exception))
    assert not isinstance(out.exception, Exception) or isinstance(out.exception, SystemExit)
    if out.exit_code == 2:
        assert out.stderr.startswith(("acms: error: ", "Usage:")) and "Traceback" not in out.stderr
    assert _quads(indexed_sample) == before
