# ina: `make run` sets everything up and runs the demo; `make test` sets up and runs the tests.
VENV ?= .venv
PY := $(VENV)/bin/python
INA := $(VENV)/bin/ina
WORKERS ?= 4
TARGET ?= auto
PYTEST_ARGS ?=
# the per-packet modules' tests again on their interpreted source (the run above loads what `make
# setup` compiled with mypyc: ina/compiled.py)
INTERPRETED_TESTS := tests/hosts/test_core.py tests/hosts/test_rto.py tests/hosts/test_chunks.py \
	tests/hosts/test_inprocess.py tests/hosts/test_compiled.py tests/hosts/test_slots.py tests/hosts/test_dispatch.py \
	tests/sim/test_events.py tests/sim/test_links.py tests/sim/test_nodes.py

.PHONY: setup ns3 run test lint stf-render bench bench-full clean

setup:
	@VENV=$(VENV) bash scripts/setup.sh

# ns-3 (requirements-ns3.txt) in $(VENV)-ns3 for tests/sim/test_ns3.py, which skips without it:
# about 5 minutes and 520 MB, so `make setup` leaves it out; .ci/run installs it. After setup,
# which installs python3-venv.
ns3: setup
	@bash scripts/side_venv.sh $(VENV)-ns3 requirements-ns3.txt ns-3

run: setup
	$(INA) run --workers $(WORKERS) --target $(TARGET)

test: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m pytest -q $(PYTEST_ARGS)
	INA_COMPILED=0 $(PY) -m pytest -q $(INTERPRETED_TESTS)

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# the aggregation STF files from their descriptions (tests/dataplane/cases/); test_stf_render.py
# fails while one is stale
stf-render: setup
	$(PY) tests/dataplane/stf_render.py

bench: setup
	$(INA) bench all --quick

bench-full: setup
	$(INA) bench all --full

clean:
	rm -rf build out runs .pytest_cache
	-$(INA) run --clean
