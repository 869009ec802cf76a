# physlayout: `make demo` and `make test` do all set-up (a .venv with the project installed).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.physlayout-installed
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: all demo test lint pytest lit bench models fuzz docs clean torch-test

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

# The PyTorch frontend's tests (test/python/test_torch_frontend*.py: from_torch, the
# torch.compile backend, torchvision models) in a venv of their own: `make test` needs no torch
# and skips them. TORCH_PACKAGES go in once (a CPU-only torch works: TORCH_PACKAGES="torch==2.13.0
# torch-mlir==20261001", then the torchvision tests are skipped).
TORCH_VENV ?= .venv-torch
TORCH_PACKAGES ?= torch==2.14.1 torchvision==0.29.1 torch-mlir==20261001
TORCH_STAMP := $(TORCH_VENV)/.physlayout-installed
$(TORCH_STAMP): pyproject.toml
	test -x $(TORCH_VENV)/bin/python || $(PYTHON) -m venv $(TORCH_VENV)
	$(TORCH_VENV)/bin/python -c "import torch, torch_mlir.fx" 2>/dev/null || \
	  $(TORCH_VENV)/bin/python -m pip install -q $(TORCH_PACKAGES)
	PYTHONWARNINGS=ignore $(TORCH_VENV)/bin/python -m pip install -q -e '.[torch,opencl,test]'
	touch $(TORCH_STAMP)

torch-test: $(TORCH_STAMP)
	PHYSLAYOUT_TORCH_SLOW=1 $(TORCH_VENV)/bin/python -m pytest -p no:cacheprovider \
	  test/python/test_torch_frontend.py test/python/test_torch_frontend_without_torch.py

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

# The README tutorial's pictures (test/python/test_viz.py checks the committed ones) and the
# pass options table of docs/passes.md (test/python/test_readme.py checks it).
docs: $(STAMP)
	$(BIN)/python -m physlayout.viz.pictures docs
	$(BIN)/python -m physlayout.pass_help docs/passes.md

clean:
	rm -rf $(VENV) $(TORCH_VENV) build *.egg-info .pytest_cache .ruff_cache .hypothesis
	find test -name Output -type d -prune -exec rm -rf {} +
