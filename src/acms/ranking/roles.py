"""What part a file plays in a project (source, tests, docs, examples, data, build scripts, type
stubs), and how much it counts.

A task about behaviour wants the code that implements it: tests, fixtures, examples, docs and data
files share its words (a test names the function it tests, a changelog names the feature) and would
otherwise crowd out the source; build scripts (``setup.py``, ``*.config.js``) and type stubs
(``.pyi``, ``.d.ts``) repeat the names of the code they build or declare. They are demoted, never dropped, and a task that names the role
("add a test for …", "document …", "the example …") gets that role on equal terms. Measured on the
dev set (file MRR of BM25 over 40-line windows of every file): no demotion 0.430, x0.5 0.610,
x0.3 (this) 0.657 with the path field; dropping them outright 0.664 but a user could then never
find a test. Vendored, built and generated code (``vendor/``, ``dist/``, ``*.min.js``, ``*.pb.go``, ``*_pb2.py``,
``zz_generated*``, and by its content a minified or generated file under any name: see
``RankingIndex``'s ``dense``) is demoted the same way,
and test suites under ``testsuite/`` are tests (jinja file MRR 0.546 → 0.573, the rest unchanged).
"""

from __future__ import annotations

import functools
import re
from enum import Enum

from acms.index.tokenize import code_tokens

__all__ = ["AUX_FACTOR", "NAMED_FACTOR", "Role", "in_test_scope", "role_of", "role_factors", "wanted_roles"]

AUX_FACTOR = 0.3
# A role the task names ("fix X and add a test") comes back into the ranking without displacing the
# source on a tie: the change a task asks for is still mostly in the code it describes.
NAMED_FACTOR = 0.5


class Role(str, Enum):
    SOURCE = "source"
    TEST = "test"
    DOCS = "docs"
    EXAMPLE = "example"
    DATA = "data"
    BUILD = "build"
    STUB = "stub"
    VENDORED = "vendored"


# By suffix, not by ``language_for``: it calls every unlisted extension "text", and a Ruby or Kotlin
# file is source all the same.
_DOC_SUFFIXES = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc", ".asciidoc", ".rdoc", ".textile",
                           ".pod", ".org", ".tex", ".html", ".htm"})
# Data, configuration, dependency manifests (go.mod, go.sum), marker files (py.typed) and images.
_DATA_SUFFIXES = frozenset({".json", ".yaml", ".yml", ".toml", ".ttl", ".trig", ".nt", ".csv", ".tsv", ".xml",
                            ".ini", ".cfg", ".conf", ".lock", ".in", ".properties", ".env", ".mod", ".sum",
                            ".typed", ".svg"})
_RC_FILE = re.compile(r"^\.?[a-z0-9_-]+rc$")  # pylintrc, .eslintrc: tool configuration
# Developer tooling: build, lint, test and release scripts.
_BUILD_DIRS = frozenset({"scripts", "script", "ci", ".circleci", ".github", "tools"})
_TEST_DIRS = frozenset({"test", "tests", "testing", "testsuite", "test-suite", "spec", "specs", "__tests__", "__mocks__",
                        "fixtures", "testdata", "eval", "evals", "test_data", "regrtest_data", "e2e", "benchmarks",
                        "benchmark", "bench", "benches", "cypress", "playwright"})
# Code the project ships but did not write, or wrote once and generated again: vendored dependencies,
# built bundles (``dist/axios.js`` repeats ``lib/``), minified files and source maps.
_VENDORED_DIRS = frozenset({"vendor", "vendored", "_vendor", "third_party", "thirdparty", "third-party", "3rdparty",
                            "node_modules", "bower_components", "dist"})
# Built bundles, and code generated from another source (protobuf, Kubernetes' deepcopy, any
# ``*_generated.*``): a change is made to the .proto or the generator, and the generated file repeats
# every name of its messages; the held-out miner counts neither as source.
_VENDORED_FILE = re.compile(r"^.*\.(min\.[cm]?js|min\.css|bundle\.[cm]?js|map)$|^.*_pb2(_grpc)?\.pyi?$|"
                            r"^.*\.pb(\.\w+)?\.go$|^zz_generated.*|^.*[._]generated\.\w+$", re.I)
_DOC_DIRS = frozenset({"doc", "docs", "documentation", "man"})
_EXAMPLE_DIRS = frozenset({"example", "examples", "samples", "demo", "demos", "tutorial", "tutorials", "stories"})
_EXAMPLE_FILE = re.compile(r"^.*\.stories\.(mdx|[cm]?[jt]sx?)$", re.I)  # Storybook: components shown, not built
_BUILD_FILE = re.compile(r"^(setup\.py|noxfile\.py|fabfile\.py|conftest\.py|makefile|.*\.mk|dockerfile(\..*)?|"
                         r"gruntfile\.js|gulpfile\.js|.*\.(config|conf)\.[cm]?[jt]s|build\.rs|magefile\.go)$", re.I)
_STUB_FILE = re.compile(r"^.*\.(pyi|d\.ts)$", re.I)
_TEST_FILE = re.compile(r"^(test_.*|.*_test\.\w+|.*_tests\.\w+|.*\.(test|spec)\.\w+|conftest\.py)$", re.I)

# Words of a task that ask for a role by name (matched as code tokens, so "Tests" and "test_x" count).
_ASKS = {
    Role.TEST: frozenset({"test", "tests", "testing", "unittest", "pytest", "fixture", "fixtures"}),
    Role.DOCS: frozenset({"doc", "docs", "documentation", "document", "documented", "readme", "changelog",
                          "docstring", "docstrings", "tutorial"}),
    Role.EXAMPLE: frozenset({"example", "examples", "sample", "demo"}),
    Role.DATA: frozenset({"config", "configuration", "json", "yaml", "toml", "manifest", "pyproject"}),
    Role.BUILD: frozenset({"build", "setup", "packaging", "makefile", "dockerfile", "webpack", "nox"}),
    Role.STUB: frozenset({"stub", "stubs", "pyi"}),
    Role.VENDORED: frozenset({"vendor", "vendored", "dist", "bundle", "minified", "generated", "protobuf"}),
}


@functools.lru_cache(maxsize=1 << 16)
def role_of(path: str) -> Role:
    """The role of a project-relative POSIX path, from its folders, file name and language. Remembered:
    every new index state's ranking index asks it for every file again (a standard library: ~65 ms of
    a server's first answer after each refresh)."""
    *folders, name = path.lower().split("/")  # string work, not PurePosixPath: a fifth of the time
    dirs = set(folders)
    if dirs & _VENDORED_DIRS or _VENDORED_FILE.match(name):
        return Role.VENDORED
    if dirs & _TEST_DIRS or _TEST_FILE.match(name):
        return Role.TEST
    if dirs & _EXAMPLE_DIRS or _EXAMPLE_FILE.match(name):
        return Role.EXAMPLE
    if _BUILD_FILE.match(name) or dirs & _BUILD_DIRS or any(d.startswith(".") for d in dirs):
        return Role.BUILD  # a hidden folder holds a tool's configuration (.github, .storybook, .husky)
    if _STUB_FILE.match(name):
        return Role.STUB
    dot = name.rfind(".")
    suffix = name[dot:] if 0 < dot < len(name) - 1 else ""  # as ``PurePosixPath.suffix``
    if dirs & _DOC_DIRS or suffix in _DOC_SUFFIXES or (not suffix and path.rsplit("/", 1)[-1].isupper()):
        return Role.DOCS  # README, CHANGES, LICENSE: no suffix, upper case
    if suffix in _DATA_SUFFIXES or (not suffix and _RC_FILE.match(name)):
        return Role.DATA
    return Role.SOURCE


def wanted_roles(task: str) -> set[Role]:
    """Roles the task names, which then count as much as source code."""
    words = set(code_tokens(task))
    return {role for role, asks in _ASKS.items() if words & asks}


_TEST_SCOPES = frozenset({"test", "tests"})


def in_test_scope(qualified_name: str, path: str) -> bool:
    """A symbol inside a test module of its file (Rust's ``#[cfg(test)] mod tests``): test code in a
    source file, demoted inside that file as test files are among files. Only the scopes after the
    file's own dotted path count (a whole test file is demoted by its role already)."""
    module = path.rsplit(".", 1)[0].replace("/", ".") + "."
    inner = qualified_name[len(module):] if qualified_name.startswith(module) else qualified_name
    return any(part in _TEST_SCOPES for part in inner.split(".")[:-1])


def role_factors(task: str, *, equal: bool = False) -> dict[Role, float]:
    """Score factor per role for this task: 1 for source (every role with ``equal``), ``NAMED_FACTOR``
    for the roles the task names, else ``AUX_FACTOR``."""
    if equal:
        return dict.fromkeys(Role, 1.0)
    named = wanted_roles(task)
    return {role: 1.0 if role is Role.SOURCE else NAMED_FACTOR if role in named else AUX_FACTOR for role in Role}
