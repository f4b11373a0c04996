"""The token counts are tiktoken's cl100k_base counts whichever way the encoding was loaded: from the
per-user cache of the offline plugin's ranks, or from the plugin itself; a bad cache only costs time."""

from __future__ import annotations

import importlib
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken
from hypothesis import example, given, settings
from hypothesis import strategies as st

from acms import tokens
from tests.conftest import copy_of_indexed


@pytest.fixture(scope="module")
def plain() -> tiktoken.Encoding:
    """The reference: tiktoken's own registry and the plugin, as before any cache existed."""
    return tiktoken.get_encoding(tokens.ENCODING_NAME)


@pytest.fixture(scope="module")
def cached(tmp_path_factory: pytest.TempPathFactory) -> tiktoken.Encoding:
    """An encoding built from a cache file written and read back through the module's own functions."""
    path = tmp_path_factory.mktemp("bpe") / "cl100k.bpe"
    kwargs = importlib.import_module(tokens.PLUGIN).ENCODING_CONSTRUCTORS[tokens.ENCODING_NAME]()
    assert tokens.write_cache(path, kwargs)
    again = tokens.read_cache(path)
    assert again is not None
    return tiktoken.Encoding(**again)


class Constructor:
    """The plugin's real constructor, counting its calls: which path a load took."""

    def __init__(self) -> None:
        self.module = importlib.import_module(tokens.PLUGIN)
        self.real = self.module.ENCODING_CONSTRUCTORS[tokens.ENCODING_NAME]
        self.calls = 0

    def __call__(self) -> dict[str, Any]:
        self.calls += 1
        return self.real()


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Constructor]:
    """A process state with no encoding loaded, a cache directory of its own, and the plugin's calls
    counted; the module's encoding is restored afterwards."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(tokens, "_encoding", None)
    monkeypatch.setattr(tokens, "_preloading", None)
    constructor = Constructor()
    monkeypatch.setitem(constructor.module.ENCODING_CONSTRUCTORS, tokens.ENCODING_NAME, constructor)
    yield constructor


def same_encoding(a: tiktoken.Encoding, b: tiktoken.Encoding) -> bool:
    return (a._mergeable_ranks == b._mergeable_ranks and a._pat_str == b._pat_str
            and a._special_tokens == b._special_tokens and a.name == b.name)


def test_the_cached_encoding_is_the_plugins(plain: tiktoken.Encoding, cached: tiktoken.Encoding) -> None:
    assert same_encoding(cached, plain)
    assert len(cached._mergeable_ranks) == 100_256


CODE = st.sampled_from(["def ", "class ", "    ", "\t", "\n", "\r\n", "  \n", "(self, x):", "'s", "’ll",
                        "12345", "0x1F", "😀", "é", "\u200b", "\ud800", "<|endoftext|>", "🇫🇷", "ﬁ", "日本語"])
TEXTS = st.one_of(st.text(), st.lists(st.one_of(CODE, st.text(max_size=8)), max_size=40).map("".join),
                  st.binary(max_size=64).map(lambda b: b.decode("latin-1")))


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_counts_equal_tiktokens(plain: tiktoken.Encoding, cached: tiktoken.Encoding, text: str) -> None:
    assert cached.encode_ordinary(text) == plain.encode_ordinary(text)
    assert tokens.count(text) == len(plain.encode_ordinary(text))


PARTS = st.lists(st.one_of(CODE, st.text(max_size=8), st.sampled_from(["\n", "\n\n", " \n", "\t\n", "\u2028", "\x1c\n",
                                                                      "```\n", "    return x\n", "\r"]),
                           st.lists(CODE, min_size=60, max_size=90).map("".join)), max_size=12)


@settings(max_examples=400, deadline=None)
@given(PARTS)
@example(["\n", "    ", "\n"])  # a whitespace-only part between line breaks: one token over both joins
def test_a_text_counted_in_parts_counts_as_the_whole(parts: list[str]) -> None:
    """The packer prices blocks and whole contexts by their parts (a body counted once per process):
    the sum is the count of the text they make, wherever the joins fall, asked once or again."""
    assert tokens.count_parts(parts) == tokens.count("".join(parts))
    assert tokens.count_parts(parts) == tokens.count("".join(parts))


def test_a_first_load_writes_the_cache_and_the_next_reads_it(fresh: Constructor, plain: tiktoken.Encoding) -> None:
    path = tokens.cache_path()
    assert path is not None and not path.exists()
    first = tokens._load()
    assert fresh.calls == 1 and path.is_file()
    second = tokens._load()
    assert fresh.calls == 1  # from the file, not the plugin
    assert same_encoding(first, plain) and same_encoding(second, plain)


def _damaged(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "flipped":
        path.write_bytes(data[:-100] + bytes([data[-100] ^ 1]) + data[-99:])
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "foreign":
        path.write_bytes(b"not ours\n" + data)
    elif how == "wrong shape":  # a payload whose hash is right but which is not the constructor's output
        import hashlib
        import marshal
        payload = marshal.dumps(["mergeable_ranks"])
        path.write_bytes(tokens.CACHE_FORMAT + b" " + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)


@pytest.mark.parametrize("how", ["flipped", "truncated", "empty", "foreign", "wrong shape"])
def test_a_damaged_cache_falls_back_and_is_rebuilt(fresh: Constructor, plain: tiktoken.Encoding, how: str) -> None:
    tokens._load()
    path = tokens.cache_path()
    assert path is not None
    _damaged(path, how)
    assert tokens.read_cache(path) is None
    assert same_encoding(tokens._load(), plain)
    assert fresh.calls == 2
    assert tokens.read_cache(path) is not None  # rebuilt
    tokens._load()
    assert fresh.calls == 2


def test_an_unreadable_cache_file_falls_back(fresh: Constructor, plain: tiktoken.Encoding) -> None:
    path = tokens.cache_path()
    assert path is not None
    path.mkdir(parents=True)  # reading it fails, and nothing can be renamed over it
    assert same_encoding(tokens._load(), plain)
    assert same_encoding(tokens._load(), plain)
    assert fresh.calls == 2 and path.is_dir()


def test_a_cache_directory_that_cannot_be_made_falls_back(fresh: Constructor, plain: tiktoken.Encoding,
                                                          monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # ~/.cache/acms under a file: mkdir fails
    assert same_encoding(tokens._load(), plain)
    assert fresh.calls == 1
    path = tokens.cache_path()
    assert path is not None and tokens.write_cache(path, {"x": 1}) is False


def test_no_home_and_a_relative_xdg_cache_home_mean_no_cache(fresh: Constructor, plain: tiktoken.Encoding,
                                                             monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)  # no home directory to expand to
    assert tokens.cache_dir() is None and tokens.cache_path() is None
    assert same_encoding(tokens._load(), plain) and same_encoding(tokens._load(), plain)
    assert fresh.calls == 2 and list(tmp_path.iterdir()) == []  # nothing written where the command ran


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_read_only_cache_directory_falls_back(fresh: Constructor, plain: tiktoken.Encoding) -> None:
    path = tokens.cache_path()
    assert path is not None
    path.parent.mkdir(parents=True)
    path.parent.chmod(0o500)
    try:
        assert same_encoding(tokens._load(), plain)
        assert fresh.calls == 1 and not path.exists()
    finally:
        path.parent.chmod(0o700)


def test_loading_opens_no_connection(fresh: Constructor, plain: tiktoken.Encoding,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the tokenizer tried the network")

    monkeypatch.setattr(socket.socket, "connect", refused)
    monkeypatch.setattr(socket, "create_connection", refused)
    assert same_encoding(tokens._load(), plain)  # from the plugin
    assert same_encoding(tokens._load(), plain)  # from the cache
    assert fresh.calls == 1


def test_preload_loads_once_and_encoding_waits_for_it(fresh: Constructor, plain: tiktoken.Encoding) -> None:
    tokens.preload()
    tokens.preload()  # a second call starts nothing
    thread = tokens._preloading
    assert thread is not None
    enc = tokens.encoding()
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert tokens.encoding() is enc and fresh.calls == 1
    assert same_encoding(enc, plain)


def test_a_new_process_reads_the_cache_without_the_plugin(tmp_path: Path) -> None:
    """A whole process: the second one never imports the plugin that decodes the bundled file."""
    code = ("import sys; from acms import tokens; n = tokens.count('wrap text paragraphs'); "
            f"print(n, {tokens.PLUGIN!r} in sys.modules)")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
            for _ in range(2)]
    n = len(tiktoken.get_encoding(tokens.ENCODING_NAME).encode_ordinary("wrap text paragraphs"))
    assert runs == [f"{n} True\n", f"{n} False\n"]


def test_the_tokenizer_bench_runs_and_finds_both_paths_alike(_fully_indexed_sample_template: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """bench/tokenizer.py on the sample project, one run: it checks the plugin is not imported once the
    cache is written and that both paths print the same context, so it cannot rot unseen."""
    project = copy_of_indexed(_fully_indexed_sample_template, tmp_path)
    bench = Path(__file__).resolve().parents[1] / "bench"
    monkeypatch.syspath_prepend(str(bench))
    sys.modules.pop("tokenizer", None)
    import tokenizer  # bench/tokenizer.py

    monkeypatch.setattr(sys, "argv", ["tokenizer.py", str(project), "--task", "greet a user", "--runs", "1"])
    tokenizer.main()
    out = capsys.readouterr().out
    assert "| tokenizer load | the cache |" in out and "| acms assemble | the plugin's file |" in out
    assert out.count("x, ") == 2  # a ratio on each cached row
