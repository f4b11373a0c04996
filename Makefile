# The two set-up commands: `make demo` (index this repository and show what a user gets)
# and `make test` (the test suite). Both create .venv when it is missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test venv bench clean docs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e ".[test]"
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/acms index . --history 100
	$(BIN)/acms tiers
	$(BIN)/acms stats
	$(BIN)/acms sparql --saved largest-classes
	$(BIN)/acms sparql --saved callers --bind name=index_project
	$(BIN)/acms search "incremental re-index of changed files" -k 5
	$(BIN)/acms assemble "how does acms keep the rendered context inside the token budget" --budget 3000
	$(BIN)/acms history src/acms/api.py
	@echo "acms is installed in $(BIN)/: 'source $(VENV)/bin/activate' puts it on PATH for this shell (README: Install)"

# Two workers for the two cores the suite must fit; --dist loadfile keeps a module's tests on one worker,
# so its shared index or server is built once. `make test TEST_WORKERS=0` runs it in this one process.
TEST_WORKERS ?= 2

test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

# The documentation site, warnings as errors; the docs extra (mkdocs) is installed on first use.
DOCS_STAMP := $(VENV)/.docs-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -e ".[test,docs]"
	@touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/python -m mkdocs build --strict --site-dir site

bench: $(STAMP)
	$(BIN)/python bench/ingest.py

clean:
	rm -rf $(VENV) .acms dist build
