"""The documentation cannot drift from the code, and the code's comments say why, not when.

The reference pages are generated (tools/docgen.py) into a temporary folder once per module: every CLI
command and subcommand, every MCP tool, every setting and every error code must appear in them; every
command must have help text to show there. The README stays a front door. The benchmarks page keeps a
marked section for every bench script wired to it. No docstring or comment under src/acms names a date
or an issue (git holds the history).
"""

from __future__ import annotations

import importlib.util
import io
import re
import sys
import tokenize
from pathlib import Path
from types import ModuleType

import click
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def docgen() -> ModuleType:
    return _load(ROOT / "tools" / "docgen.py", "acms_docgen")


@pytest.fixture(scope="module")
def reference(docgen: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("reference")
    return {p.name: p.read_text(encoding="utf-8") for p in docgen.write(out)}


def test_every_cli_command_is_in_the_reference_with_help(docgen: ModuleType, reference: dict[str, str]) -> None:
    from acms.cli.main import COMMANDS, cli

    names = docgen.cli_command_names()
    assert {f"acms {n}" for n in COMMANDS} <= set(names)
    assert any(n.count(" ") == 2 for n in names), "subcommands (acms tiers rebalance, ...) are walked too"
    page = reference["cli.md"]
    for name in names:
        assert f"## `{name}`" in page, f"`{name}` is missing from the CLI reference"
    ctx = click.Context(cli, info_name="acms")
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        assert command is not None and (command.help or command.short_help), f"acms {name} has no help text"


def test_every_option_of_a_command_is_in_the_reference(reference: dict[str, str]) -> None:
    from acms.cli.main import cli

    ctx = click.Context(cli, info_name="acms")
    command = cli.get_command(ctx, "assemble")
    assert command is not None
    section = reference["cli.md"].split("## `acms assemble`", 1)[1].split("\n## ", 1)[0]
    for param in command.params:
        if isinstance(param, click.Option):
            assert f"`{param.opts[-1]}`" in section, param.opts


def test_every_setting_is_in_the_reference(reference: dict[str, str]) -> None:
    from acms.config import Settings

    page = reference["settings.md"]
    for name, help_text in Settings.help_table().items():
        assert f"| `{name}` | `ACMS_{name.upper()}` |" in page, name
        assert help_text.split()[0] in page


def test_every_error_code_and_class_is_in_the_reference(reference: dict[str, str]) -> None:
    from acms import errors

    page = reference["errors.md"]
    for code in errors.ErrorCode:
        spec = errors.CODES[code]
        assert f"| `{code.value}` | {spec.exit_code} | {spec.http_status} |" in page, code
    for cls in (errors.AcmsError, errors.StoreLocked, errors.BudgetTooSmall):
        assert f"`{cls.__name__}`" in page


def test_every_mcp_tool_is_in_the_reference(docgen: ModuleType, reference: dict[str, str]) -> None:
    page = reference["mcp.md"]
    tools = docgen.mcp_tools()
    assert {t.name for t in tools} >= {"assemble", "search", "sparql", "describe", "history", "explore", "index",
                                       "record_decision"}
    for tool in tools:
        assert f"## `{tool.name}`" in page, tool.name
        for argument in tool.input_schema.get("properties", {}):
            assert f"| `{argument}` |" in page.split(f"## `{tool.name}`", 1)[1], (tool.name, argument)


def test_saved_queries_and_ontology_are_in_the_reference(reference: dict[str, str]) -> None:
    from acms.sparql.catalog import all_queries

    for spec in all_queries().values():
        assert f"`{spec.key.rsplit('/', 1)[-1]}`" in reference["queries.md"], spec.key
    onto = reference["ontology.md"]
    assert "`uko:Function`" in onto and "`uko:calls`" in onto and "Extension `web-api`" in onto


def test_readme_is_a_front_door() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    assert "make demo" in readme and "make test" in readme
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^test:", make, re.MULTILINE) and re.search(r"^demo:", make, re.MULTILINE) and re.search(r"^docs:", make, re.MULTILINE)
    assert "make test" in (ROOT / ".ci" / "run").read_text() and "make docs" in (ROOT / ".ci" / "run").read_text()


def test_bench_scripts_wired_to_the_page_have_a_section() -> None:
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    wired = [p for p in (ROOT / "bench").glob("*.py") if re.search(r'^\s+run\(main, "\w+"\)', p.read_text(), re.MULTILINE)]
    assert len(wired) >= 10
    for script in wired:
        name = re.search(r'^\s+run\(main, "(\w+)"\)', script.read_text(), re.MULTILINE).group(1)  # type: ignore[union-attr]
        assert f"<!-- bench:{name} -->" in page and f"<!-- /bench:{name} -->" in page, script.name


def test_bench_page_helper_replaces_only_its_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs_page = _load(ROOT / "bench" / "docs_page.py", "bench_docs_page")
    page = tmp_path / "benchmarks.md"
    page.write_text("intro\n<!-- bench:a -->\nold a\n<!-- /bench:a -->\nmiddle\n<!-- bench:b -->\nold b\n<!-- /bench:b -->\n")

    def main() -> int:
        print("x      | y\n-------|----\nrow    | 1")
        return 7

    monkeypatch.setattr(sys, "argv", ["bench/a.py", "--n", "3", "--write-docs"])
    assert docs_page.run(main, "a", page) == 7
    text = page.read_text()
    assert "old a" not in text and "old b" in text and text.startswith("intro\n") and "middle" in text
    assert "```text\nx      | y\n-------|----\nrow    | 1\n```" in text
    assert "*`python bench/a.py --n 3` on " in text and " UTC" in text
    assert sys.argv == ["bench/a.py", "--n", "3"]  # the script's own parser never sees the flag

    monkeypatch.setattr(sys, "argv", ["bench/b.py"])
    docs_page.run(lambda: print("| k | v |\n| --- | --- |\n| 1 | 2 |"), "b", page)
    assert "old b" in page.read_text()  # without the flag nothing is written
    assert docs_page.as_markdown("| k | v |\n| --- | --- |\n| 1 | 2 |") == "| k | v |\n| --- | --- |\n| 1 | 2 |"

    monkeypatch.setattr(sys, "argv", ["bench/c.py", "--write-docs"])
    with pytest.raises(docs_page.SectionMissing):
        docs_page.run(lambda: None, "c", page)


# A date (2026-11-01, 2026-11), or an issue named by number: "issue 38", "issues 12 and 14", "#38",
# "stop 37" (a session's stop). Colours (#fff), URL fragments and anchors are not numbers alone.
DATE = re.compile(r"\b(19|20)\d\d-(0[1-9]|1[0-2])(-([0-2]\d|3[01]))?\b")
ISSUE = re.compile(r"\b(issues?|stops?)\s+#?\d+\b|(?<![\w&/#])#\d+\b", re.IGNORECASE)


def _prose(source: str) -> list[tuple[int, str]]:
    """Comments and docstrings of a module, with their line numbers."""
    found: list[tuple[int, str]] = []
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    previous = tokenize.NEWLINE
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            found.append((tok.start[0], tok.string))
        elif tok.type == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            found.append((tok.start[0], tok.string))  # a string standing alone: a docstring
        if tok.type not in (tokenize.COMMENT, tokenize.NL):
            previous = tok.type
    return found


def test_no_docstring_or_comment_names_a_date_or_an_issue() -> None:
    bad = []
    for path in sorted((ROOT / "src" / "acms").rglob("*.py")):
        for line, text in _prose(path.read_text(encoding="utf-8")):
            for match in (*DATE.finditer(text), *ISSUE.finditer(text)):
                bad.append(f"{path.relative_to(ROOT)}:{line + text[:match.start()].count(chr(10))}: {match.group(0)}")
    assert bad == []


@pytest.mark.parametrize("text, hit", [
    ("# fixed in issue 38", True), ("# see #38", True), ("(stop 37)", True), ('"""Since 2026-11-01."""', True),
    ("# colour #fff", False), ("# the 2 issues left", False), ("# port 7878", False), ("# a-b/#1 anchor", False),
])
def test_the_date_and_issue_patterns(text: str, hit: bool) -> None:
    assert bool(DATE.search(text) or ISSUE.search(text)) is hit
