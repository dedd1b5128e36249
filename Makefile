# gpuport: `make demo` runs the main job on the bundled example; `make test` runs every check.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.gpuport-installed
# bench/validate tests run on the CPU build of torch (a local wheel on the dev machines);
# override to use another build, e.g. make TORCH_SPEC='torch==2.14.1' test
TORCH_SPEC ?= torch==2.13.0

.PHONY: venv demo test lint typecheck unit docs bench-scan clean api-map

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check $(TORCH_SPEC)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,all]'
	@touch $(STAMP)

venv: $(STAMP)

# The main job on the bundled example: one self-contained HTML readiness report under build/.
REPORT := build/assessment.html

demo: venv
	@mkdir -p $(dir $(REPORT))
	$(BIN)/gpuport assess examples/llm-service --format html --output $(REPORT) --no-progress
	@echo "make demo: the readiness report is $(abspath $(REPORT)); open it in a browser"

lint: venv
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/ruff format --check src tests benchmarks tools

typecheck: venv
	$(BIN)/mypy

unit: venv
	$(BIN)/python -m pytest -q -n 2

test: lint typecheck unit

# Long fuzz of every parser of untrusted input (issue 14): ~1 M inputs, 0 crashes/hangs expected.
# Short runs are part of `make unit` (tests/security/test_fuzz.py). Crashing inputs: build/fuzz/.
FUZZ_INPUTS ?= 1000000
.PHONY: fuzz
fuzz: venv
	$(BIN)/python tools/fuzz.py --inputs $(FUZZ_INPUTS) --out build/fuzz

# CUDA->HIP API map (issue 3): regenerate from ../shared/data/hipify-tables + tools/api_map_extra.toml.
api-map: venv
	$(BIN)/python tools/gen_api_map.py

docs: venv
	$(BIN)/gpuport rules --format markdown --output docs/rules.md

# Benchmark of issue 2: scan the Python files of an installed torch (CPU build from local disk).
bench-scan: venv
	$(BIN)/python benchmarks/scan_torch.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
