# ina: `make run` sets everything up and runs the demo; `make test` sets up and runs the tests.
VENV ?= .venv
PY := $(VENV)/bin/python
INA := $(VENV)/bin/ina
WORKERS ?= 4
TARGET ?= auto
PYTEST_ARGS ?=

.PHONY: setup run test lint bench bench-full clean

setup:
	@VENV=$(VENV) bash scripts/setup.sh

run: setup
	$(INA) run --workers $(WORKERS) --target $(TARGET)

test: setup
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -q $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: setup
	$(INA) bench all --quick

bench-full: setup
	$(INA) bench all --full

clean:
	rm -rf build out runs .pytest_cache
	-$(INA) run --clean
