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

# mypy cannot follow setuptools' editable import hook, so lint shows it the clarigate package as
# pyproject.toml's package-dir maps it: a tree of links to the three code folders
MYPY_TREE = build/mypy

$(RUNTIME): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

$(DEV): pyproject.toml $(RUNTIME)
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

# tests/platform_dist: a platform shipped as its own distribution (entry point in
# clarigate.platforms), for the tests of "Adding a platform". Installed as a user installs it
# (not editable) but into a folder of its own, which only the test session puts on sys.path
# (pytest's pythonpath in pyproject.toml): clarigate serve, doctor and chat run from this .venv,
# and the install test's environment built on its packages, never see a platform that exists
# only for the tests. Dev installs before this one put it in site-packages: it is taken out.
TEST_PLATFORM = .cache/test-platform
TEST_PLATFORM_STAMP = $(VENV)/.installed-test-platform
PLATFORM_DIST = tests/platform_dist/pyproject.toml $(wildcard tests/platform_dist/clarigate_parrot/*.py)
$(TEST_PLATFORM_STAMP): $(PLATFORM_DIST) | $(DEV)
	if $(BIN)/pip show --quiet clarigate-parrot 2>/dev/null; then $(BIN)/pip uninstall --quiet --yes clarigate-parrot; fi
	rm -rf $(TEST_PLATFORM)
	$(BIN)/pip install --quiet --no-deps --target $(TEST_PLATFORM) ./tests/platform_dist
	touch $@

# TypeScript under .cache/node, to compile DeerFlow's own parser in the protocol test
# (tests/agent/deerflow); without npm that test skips or says why
TYPESCRIPT = .cache/node/node_modules/typescript/package.json
$(TYPESCRIPT): tests/agent/deerflow_parser.py | $(DEV)
	$(BIN)/python -m tests.agent.deerflow_parser
	@if [ -f $@ ]; then touch $@; fi

install: $(RUNTIME)

install-dev: $(DEV) $(TEST_PLATFORM_STAMP) $(TYPESCRIPT)

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
	rm -rf $(MYPY_TREE) && mkdir -p $(MYPY_TREE)/clarigate
	ln -s $(CURDIR)/gateway/_clarigate/__init__.py $(MYPY_TREE)/clarigate/__init__.py
	for folder in gateway adapters agent; do ln -s $(CURDIR)/$$folder $(MYPY_TREE)/clarigate/$$folder; done
	MYPYPATH=$(MYPY_TREE) $(BIN)/mypy -p clarigate
