"""detect-secrets is set up only for a line that passes one of its plugins' gates: a refresh that
scrubs a file or two in a fresh process rarely needs it (~0.1 s to import and set up). What acms copies
from it to gate lines without importing it is checked against the installed version."""

from __future__ import annotations

import subprocess
import sys

import pytest
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.keyword import DENYLIST
from hypothesis import given, settings
from hypothesis import strategies as st

from acms.privacy import adapter


def test_the_plugins_run_are_every_plugin_of_detect_secrets_but_the_skipped() -> None:
    assert list(adapter._DS_TYPES) == sorted(set(get_mapping_from_secret_type_to_class()) - adapter._DS_SKIPPED)
    assert [ds.secret_type for ds in adapter._ds_plugins()] == list(adapter._DS_TYPES)


def test_the_keyword_gate_is_the_plugins_denylist() -> None:
    assert adapter._DS_DENYLIST == tuple(DENYLIST)


def _imports_detect_secrets(text: str) -> bool:
    code = ("import sys; from acms.privacy import scrub; "
            f"scrub({text!r}, 'm.py'); print('detect_secrets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def test_detect_secrets_is_imported_for_a_line_that_passes_a_gate_only() -> None:
    assert not _imports_detect_secrets("def key_of(item):\n    return item.key\n")
    assert _imports_detect_secrets('token = "Zq8xP2mK9vL4nR7tW3aB5cD7eF9gH1j"\n')


def test_the_entropy_plugins_charsets_and_limits_are_the_installed_ones() -> None:
    for ds in adapter._ds_plugins():
        if ds.secret_type in adapter._DS_CHARSETS:
            assert (ds.plugin.charset, ds.plugin.entropy_limit) == adapter._DS_CHARSETS[ds.secret_type]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(['"', "'", "\\", "-", "_", "=", "+", "/", " ", "a", "b", "c", "f", "0", "1", "9",
                                 "Zq8xP2mK", "9vL4nR7t", "W3aB5cD7", "eF9gH1jk", "deadbeef", "0123456789", "x.y"]),
                max_size=14))
def test_an_entropy_plugin_reports_only_on_a_line_its_closed_run_finds(pieces: list[str]) -> None:
    line = "".join(pieces)
    for ds in adapter._ds_plugins():
        if ds.closed is not None and ds.plugin.analyze_line(filename="a.py", line=line):
            assert ds.closed.search(line), (ds.secret_type, line)


def test_a_docstring_does_not_set_detect_secrets_up() -> None:
    assert not _imports_detect_secrets('def f():\n    """_fix_sentence_endings(chunks : [string])\n    """\n')


def test_a_plain_file_compiles_few_of_the_rules() -> None:
    """A rule's pattern is compiled when a line first needs it (~35 ms for all of them, per process)."""
    code = ("from acms.privacy import scrub; from acms.privacy.lazy import Lazy as _Lazy; "
            "from acms.privacy.rules import _line_rules; "
            "scrub('def wrap(text, width=70):\\n    return text[:width]  # no secret here\\n', 'm.py'); "
            "lazy = [r.pattern for r in _line_rules() if isinstance(r.pattern, _Lazy)]; "
            "print(len(lazy), sum(p._compiled is not None for p in lazy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    rules, compiled = map(int, out.stdout.split())
    assert rules > 50 and compiled <= 10


def test_each_needle_knows_every_needle_it_starts_with() -> None:
    from acms.privacy.scrubber import _needle_index

    _, prefixes = _needle_index()
    needles = set(prefixes)
    assert len(needles) > 50
    assert prefixes == {n: frozenset(m for m in needles if n.startswith(m)) for n in needles}


def test_each_plugin_class_is_named_as_detect_secrets_maps_it() -> None:
    installed = get_mapping_from_secret_type_to_class()
    assert {kind: (f"detect_secrets.plugins.{module}", name) for kind, (module, name) in adapter._DS_CLASS.items()} \
        == {kind: (cls.__module__, cls.__name__) for kind, cls in installed.items() if kind in adapter._DS_TYPES}


def test_a_plugin_is_set_up_without_importing_requests_which_any_use_still_reaches() -> None:
    """detect-secrets imports ``requests`` only to verify secrets over the network (~65 ms a process); the IBM
    Cloud plugin, which the second line wakes, reads ``requests.Response`` at import."""
    code = ("import sys; from acms.privacy import scrub; "
            "out = scrub('token = \"Zq8xP2mK9vL4nR7tW3aB5cD7eF9gH1j\"\\n'"
            " 'ibm_cloud_iam_key = \"a3B5c7D9e1F3g5H7i9J1k3L5m7N9o1P3q5R7s9T1u3V5\"\\n', 'm.py'); "
            "print('REDACTED' in out.text, 'detect_secrets' in sys.modules, 'requests' in sys.modules); "
            "from detect_secrets.plugins import base; "
            "import requests; "
            "print(base.requests.exceptions.RequestException is requests.exceptions.RequestException, "
            "type(requests).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "False", "True", "module"]


def test_a_plugin_laid_out_otherwise_is_found_through_detect_secrets_own_mapping(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Another detect-secrets version may move a plugin's module: the scan still runs."""
    monkeypatch.setitem(adapter._DS_CLASS, "Secret Keyword", ("no_such_module", "KeywordDetector"))
    assert adapter._ds_class("Secret Keyword") is get_mapping_from_secret_type_to_class()["Secret Keyword"]
