# physlayout: `make demo` and `make test` do all set-up (a .venv with the project installed).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.physlayout-installed
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: all demo test lint pytest lit bench models fuzz docs clean

all: test

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install -q -e '.[opencl,test,lint,viz]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/physlayout demo

test: $(STAMP)
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory pytest
	$(MAKE) --no-print-directory lit

# pyright resolves `physlayout.*` through a link (the package maps to this directory).
lint: $(STAMP)
	$(BIN)/ruff check .
	mkdir -p build/typing && ln -sfn ../.. build/typing/physlayout
	$(BIN)/pyright -p pyproject.toml

pytest: $(STAMP)
	$(BIN)/python -m pytest test

lit: $(STAMP)
	$(BIN)/lit -sv test

# The long random-program campaign (test/python/fuzz): counts by outcome, failing programs
# (minimized) under FUZZ_OUT; exits non-zero on any mismatch, crash or invalid program.
FUZZ_COUNT ?= 10000
FUZZ_SEED ?= 0
FUZZ_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
FUZZ_FEATURES ?= all
FUZZ_OUT ?= build/fuzz
FUZZ_ARGS ?=
fuzz: $(STAMP)
	PYTHONPATH=test/python $(BIN)/python -m fuzz.campaign --count $(FUZZ_COUNT) \
	  --seed $(FUZZ_SEED) --jobs $(FUZZ_JOBS) --features $(FUZZ_FEATURES) --out $(FUZZ_OUT) $(FUZZ_ARGS)

# Each script writes its section of bench/RESULTS.md; plots.py last (PNGs with matplotlib).
bench: $(STAMP)
	for f in bench/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done
	$(BIN)/python bench/plots.py

# Every real model (the shared torch-mlir exports beside the repository, else examples/models)
# end to end on the OpenCL device against PyTorch's outputs: the compile/launch/error table.
models: $(STAMP)
	$(BIN)/python bench/bench_models.py

# The README tutorial's pictures (test/python/test_viz.py checks the committed ones) and its
# pass options table (test/python/test_readme.py checks it).
docs: $(STAMP)
	$(BIN)/python -m physlayout.viz.pictures docs
	$(BIN)/python -m physlayout.pass_help README.md

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .hypothesis
	find test -name Output -type d -prune -exec rm -rf {} +
