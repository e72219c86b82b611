# One command per job. Everything runs from the project's own virtualenv, made on
# first use with the exact versions in constraints.txt.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo check test bench lock clean

$(STAMP): pyproject.toml constraints.txt examples/helix-plugin-example/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[dev]"
	# The example plugin: the tests run it as an installed plugin (entry point).
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e examples/helix-plugin-example
	touch $(STAMP)

install: $(STAMP)

## The demo: a scripted session in the embedded SQLite store, then forked and replayed.
demo: install
	$(BIN)/helix demo

## Lint, format and types: part of `make test`.
check: install
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy

## The whole test suite, after the checks.
test: check
	$(BIN)/pytest

## The event-log benchmark (SQLite, and PostgreSQL when a server answers).
bench: install
	$(BIN)/helix bench eventlog

## Refresh constraints.txt from what is installed now.
lock: install
	( echo "# Exact versions the test suite last passed with; install with -c constraints.txt."; \
	  echo "# Regenerate: make lock"; \
	  $(BIN)/pip freeze --exclude-editable --disable-pip-version-check ) > constraints.txt

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
