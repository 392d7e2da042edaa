# The two commands of the README:
#   make demo   set up .venv (babysit + the CPU build of torch) and run `babysit demo`
#   make test   set up .venv with the test tools and run lint, types and the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test setup setup-test lint bench chaos clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

setup: $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[demo]'

setup-test: $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[demo,test]'

demo: setup
	$(BIN)/babysit demo

lint: setup-test
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint
	$(BIN)/python -m pytest

bench: setup-test
	$(BIN)/python benchmarks/run_all.py

# The chaos suite in full (about an hour on 2 cores): three repeats, docs/chaos.md + .svg
chaos: setup-test
	$(BIN)/python benchmarks/chaos.py --repeats 3 --docs docs/chaos.md

clean:
	rm -rf $(VENV) babysit-demo .babysit .pytest_cache .mypy_cache .ruff_cache
