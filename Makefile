# Two commands do all the set-up on a fresh machine:
#   make chat   - create .venv, install what running needs, start a terminal chat on embedded defaults
#   make test   - create .venv, install everything (test and lint tools too), make sure Redis
#                 answers, run every test
PYTHON ?= python3
VENV ?= .venv
BIN = $(VENV)/bin
# what is installed, as stamps: running needs the package alone; tests and lint need the dev tools
RUNTIME = $(VENV)/.installed-runtime
DEV = $(VENV)/.installed-dev

.PHONY: install install-dev chat serve test bench lint

$(RUNTIME): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

$(DEV): pyproject.toml $(RUNTIME)
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

install: $(RUNTIME)

install-dev: $(DEV)

chat: install
	$(BIN)/clarigate chat

serve: install
	$(BIN)/clarigate serve

test: install-dev
	bash .ci/services
	$(BIN)/python -m pytest

bench: install-dev
	bash .ci/services
	$(BIN)/python bench/gateway_throughput.py

lint: install-dev
	$(BIN)/ruff check agent gateway adapters tests bench
	$(BIN)/ruff format --check agent gateway adapters tests bench
	$(BIN)/mypy agent gateway adapters
