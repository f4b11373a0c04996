"""File roles and their score factors: what the first stage demotes, and when a task lifts it back."""

from __future__ import annotations

import pytest

from acms.ranking.roles import AUX_FACTOR, NAMED_FACTOR, Role, role_factors, role_of, wanted_roles


@pytest.mark.parametrize(
    ("path", "role"),
    [
        # source code, including names that only look like test words
        ("pkg/multipart.py", Role.SOURCE),
        ("src/acms/ranking/rank.py", Role.SOURCE),
        ("pkg/testing.py", Role.SOURCE),
        ("src/contest.py", Role.SOURCE),
        ("src/lib.c", Role.SOURCE),
        ("web/app.ts", Role.SOURCE),
        # tests: by folder, by file-name convention of several ecosystems, fixtures and benchmarks
        ("tests/test_multipart.py", Role.TEST),
        ("pkg/test_utils.py", Role.TEST),
        ("src/server_test.go", Role.TEST),
        ("src/Button.spec.tsx", Role.TEST),
        ("src/x.test.ts", Role.TEST),
        ("pkg/conftest.py", Role.TEST),
        ("tests/fixtures/data.json", Role.TEST),
        ("benchmarks/run.py", Role.TEST),
        ("web/__tests__/app.js", Role.TEST),
        ("jinja2/testsuite/filters.py", Role.TEST),
        ("benches/parse.rs", Role.TEST),
        # vendored dependencies and built bundles repeat code the project did not write here
        ("dist/axios.js", Role.VENDORED),
        ("vendor/github.com/x/y/y.go", Role.VENDORED),
        ("src/third_party/zlib/inflate.c", Role.VENDORED),
        ("static/jquery.min.js", Role.VENDORED),
        ("vendor/tests/test_x.py", Role.VENDORED),  # vendored wins over test
        # generated code: a change is made to what it is generated from
        ("api/v1/service.pb.go", Role.VENDORED),
        ("api/v1/service.pb.gw.go", Role.VENDORED),
        ("proto/user_pb2.py", Role.VENDORED),
        ("proto/user_pb2_grpc.py", Role.VENDORED),
        ("pkg/apis/v1/zz_generated.deepcopy.go", Role.VENDORED),
        ("src/schema.generated.ts", Role.VENDORED),
        ("lib/parser_generated.rs", Role.VENDORED),
        ("pkg/generator.go", Role.SOURCE),  # the generator itself is source
        ("benchmark/run.py", Role.TEST),
        # a test folder wins over an example folder
        ("examples/tests/demo.py", Role.TEST),
        ("examples/quickstart.py", Role.EXAMPLE),
        ("src/Button.stories.tsx", Role.EXAMPLE),  # Storybook
        ("cypress/e2e/login.cy.ts", Role.TEST),
        ("demo/app.py", Role.EXAMPLE),
        ("docs/tutorial/intro.py", Role.EXAMPLE),  # an example folder wins over a docs folder
        # build scripts and type stubs repeat the names of the code they build or declare
        ("setup.py", Role.BUILD),
        ("docs/setup.py", Role.BUILD),
        ("Makefile", Role.BUILD),
        ("Dockerfile.dev", Role.BUILD),
        ("webpack.config.js", Role.BUILD),
        ("vite.config.ts", Role.BUILD),
        (".storybook/main.ts", Role.BUILD),  # a hidden folder: a tool's configuration
        (".github/actions/release/index.js", Role.BUILD),
        ("pkg/__init__.pyi", Role.STUB),
        ("types/index.d.ts", Role.STUB),
        # docs by folder or by language
        ("docs/multipart.md", Role.DOCS),
        ("README.md", Role.DOCS),
        ("docs/conf.py", Role.DOCS),
        ("notes.txt", Role.DOCS),
        ("site/index.html", Role.DOCS),
        # data files
        ("pyproject.toml", Role.DATA),
        ("config/app.yaml", Role.DATA),
        ("ontology/schema.ttl", Role.DATA),
    ],
)
def test_role_of(path: str, role: Role) -> None:
    """Each role is recognised from folders, file name and language, in the documented precedence."""
    assert role_of(path) is role


def test_role_of_ignores_case() -> None:
    """Folder and file-name conventions hold whatever the capitalisation."""
    assert role_of("Tests/Test_Parser.py") is Role.TEST
    assert role_of("DOCS/Guide.MD") is Role.DOCS
    assert role_of("SETUP.PY") is Role.BUILD


@pytest.mark.parametrize("path", ["lib/parser.rb", "src/Main.kt", "src/app.php"])
def test_source_in_languages_the_walker_does_not_list_is_source(path: str) -> None:
    """Code in a language without an extractor is still the project's source, not its documentation."""
    assert role_of(path) is Role.SOURCE


@pytest.mark.parametrize(
    ("task", "roles"),
    [
        ("allow str content for multipart upload files", set()),
        ("fix the boundary parser and add a test", {Role.TEST}),
        ("Tests fail on empty bodies", {Role.TEST}),
        ("test_split_parts is flaky", {Role.TEST}),
        ("document the API and add an example", {Role.DOCS, Role.EXAMPLE}),
        ("update the README", {Role.DOCS}),
        ("read the yaml configuration", {Role.DATA}),
        ("the Dockerfile build breaks", {Role.BUILD}),
        ("regenerate the pyi stubs", {Role.STUB}),
    ],
)
def test_wanted_roles(task: str, roles: set[Role]) -> None:
    """A role is wanted when the task names it, as code tokens (so plurals listed, case and snake_case count)."""
    assert wanted_roles(task) == roles


def test_role_factors_demote_every_other_role_for_a_behaviour_task() -> None:
    """Source counts fully; tests, docs, examples, data, build scripts and stubs count AUX_FACTOR."""
    factors = role_factors("split the multipart body on its boundary")
    assert set(factors) == set(Role)
    assert factors[Role.SOURCE] == 1.0
    assert {factors[r] for r in Role if r is not Role.SOURCE} == {AUX_FACTOR}


def test_role_factors_lift_the_roles_a_task_names_but_not_above_source() -> None:
    """A named role gets NAMED_FACTOR: more than the other auxiliary roles, still under source on a tie."""
    factors = role_factors("fix the boundary split and add a test and docs")
    assert factors[Role.SOURCE] == 1.0
    assert factors[Role.TEST] == factors[Role.DOCS] == NAMED_FACTOR
    assert factors[Role.EXAMPLE] == factors[Role.DATA] == factors[Role.BUILD] == factors[Role.STUB] == AUX_FACTOR
    assert AUX_FACTOR < NAMED_FACTOR < 1.0


def test_role_factors_equal_gives_every_role_one() -> None:
    """equal=True turns role weighting off, whatever the task names."""
    assert role_factors("add a test", equal=True) == dict.fromkeys(Role, 1.0)
    assert role_factors("", equal=True) == dict.fromkeys(Role, 1.0)


@pytest.mark.parametrize(("path", "role"), [
    ("scripts/publish", Role.BUILD), ("tools/gen_tables.py", Role.BUILD), (".github/workflows/ci.yml", Role.BUILD),
    ("go.mod", Role.DATA), ("go.sum", Role.DATA), ("httpx/py.typed", Role.DATA), ("scripts/pylintrc", Role.BUILD),
    ("pylintrc", Role.DATA), (".eslintrc", Role.DATA), ("artwork/logo.svg", Role.DATA),
    ("bin/acms", Role.SOURCE), ("ext/jinja.el", Role.SOURCE), ("jinja2/_speedups.c", Role.SOURCE),
])
def test_tooling_manifests_and_markers_are_not_source(path: str, role: Role) -> None:
    """Developer scripts, dependency manifests, tool configuration and marker files share words with the
    code without being where behaviour lives; an executable without a suffix or an editor plugin is code."""
    assert role_of(path) is role
