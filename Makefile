# gpuport: `make demo` runs the main job on the bundled example; `make test` runs every check.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.gpuport-installed
DEMO_STAMP := $(VENV)/.gpuport-demo
# bench/validate tests run on the CPU build of torch (a local wheel on the dev machines).
# TORCH_INDEX adds an index that has it: make test TORCH_INDEX=https://download.pytorch.org/whl/cpu
# (192 MB). Without one, PyPI's torch on Linux x86-64 is the CUDA build (several GB of nvidia-*
# wheels): tools/torch_route.py stops before that download and names the routes, among them
# `make test-lite` (no torch). TORCH_SPEC picks another build or a wheel file.
TORCH_SPEC ?= torch==2.13.0
TORCH_INDEX ?=

.PHONY: venv demo test test-lite lint typecheck unit docs bench-scan clean api-map dist kb-audit

# Two install levels in one .venv. `make demo` needs only gpuport and jinja2 (the HTML report):
# no torch. `make test` adds torch (CPU build), the other extras and the dev tools.
$(DEMO_STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e . 'jinja2>=3.1'
	@touch $(DEMO_STAMP)

$(STAMP): $(DEMO_STAMP)
	$(BIN)/python tools/torch_route.py '$(TORCH_SPEC)' '$(TORCH_INDEX)'
	$(BIN)/python -m pip install --quiet --disable-pip-version-check \
		$(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX)) $(TORCH_SPEC)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,all]'
	@touch $(STAMP)

venv: $(STAMP)

# The main job on the bundled example: one self-contained HTML readiness report under build/.
REPORT := build/assessment.html

demo: $(DEMO_STAMP)
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

# Everything but torch, in its own .venv-lite (PyPI only, no torch download): ruff, mypy and
# every test that does not need torch. bench's and validate's tests (tests/bench, tests/validate)
# are left out, and the tests marked `torch` elsewhere are skipped with that reason (listed).
LITE := .venv-lite
$(LITE)/.gpuport-installed: pyproject.toml
	@test -x $(LITE)/bin/python || $(PYTHON) -m venv $(LITE)
	$(LITE)/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev,report]'
	@touch $@

test-lite: $(LITE)/.gpuport-installed
	$(LITE)/bin/ruff check src tests benchmarks tools
	$(LITE)/bin/ruff format --check src tests benchmarks tools
	$(LITE)/bin/mypy
	GPUPORT_TEST_LITE=1 $(LITE)/bin/python -m pytest -q -n 2 --ignore=tests/bench --ignore=tests/validate
	@echo "make test-lite: left out (they need torch): tests/bench and tests/validate, and the tests marked torch (skipped above, with that reason); make test runs them all"

# Coverage-guided fuzz of every reader of project or result files (issues 14, 23): atheris, one
# process per target, FUZZ_TIME seconds each, FUZZ_JOBS at once; per-target coverage, crashing
# and hanging inputs under build/fuzz/ (fuzz-results.json). FUZZ_SEEDS: a folder of real
# repositories' files sorted by tools/fuzz_seeds.py. Short runs are part of `make unit`
# (tests/security/test_fuzz.py).
FUZZ_TIME ?= 300
FUZZ_JOBS ?= 2
FUZZ_SEEDS ?=
.PHONY: fuzz
fuzz: venv
	$(BIN)/python tools/fuzz.py --time-s $(FUZZ_TIME) --jobs $(FUZZ_JOBS) \
	  $(if $(FUZZ_SEEDS),--seeds $(FUZZ_SEEDS)) --out build/fuzz

# CUDA->HIP API map (issue 3): regenerate from tools/hipify-tables (MIT, ROCm/HIPIFY) + tools/api_map_extra.toml.
api-map: venv
	$(BIN)/python tools/gen_api_map.py

# Knowledge audit (issues 15, 28): reads PyPI, the PyTorch/AMD package indexes, GitHub
# releases and threads, and AMD's docs pages each entry cites, and recomputes GPU peaks.
# A lookup that fails (offline) is listed and claims nothing. KB_AUDIT_ARGS: e.g.
# --record build/kb-audit-answers, --replay DIR, --offline. Paste the report into
# docs/knowledge.md with its date.
kb-audit: venv
	@mkdir -p build
	$(BIN)/python tools/kb_audit.py --output build/kb-audit.md $(KB_AUDIT_ARGS)
	@echo "make kb-audit: report in build/kb-audit.md"

docs: venv
	$(BIN)/gpuport rules --format markdown --output docs/rules.md

# Benchmark of issue 2: scan the Python files of an installed torch (CPU build from local disk).
bench-scan: venv
	$(BIN)/python benchmarks/scan_torch.py

# Wheel and sdist under dist/ (tests/test_packaging.py installs the wheel into a clean venv).
dist: venv
	rm -rf dist
	$(BIN)/python -m build --outdir dist .

clean:
	rm -rf dist $(VENV) $(LITE) .pytest_cache .mypy_cache .ruff_cache
