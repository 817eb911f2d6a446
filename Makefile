# Two commands do all the set-up on a fresh machine:
#   make chat   - create .venv, install clarigate, start a terminal chat on embedded defaults
#   make test   - create .venv, install everything, make sure Redis answers, run every test
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin

.PHONY: install chat serve test bench lint

$(BIN)/clarigate: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

install: $(BIN)/clarigate

chat: install
	$(BIN)/clarigate chat

serve: install
	$(BIN)/clarigate serve

test: install
	bash .ci/services
	$(BIN)/python -m pytest

bench: install
	bash .ci/services
	$(BIN)/python bench/gateway_throughput.py

lint: install
	$(BIN)/ruff check agent gateway adapters tests bench
	$(BIN)/ruff format --check agent gateway adapters tests bench
	$(BIN)/mypy agent gateway adapters
