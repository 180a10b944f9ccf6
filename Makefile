# tpucc Makefile.
#
#   make demo   build tpucc, compile examples/transformer_block.tir to StableHLO,
#               run it on the CPU executor and on XLA:CPU, and compare
#   make test   every check CI runs (creates both Python environments itself)
#   make build  bin/tpucc

GO ?= go

.PHONY: build test demo lint clean clang

build:
	$(GO) build -o bin/tpucc ./cmd/tpucc

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test: venv venv-tpu lint clang
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -race ./compile/... ./runtime/... ./tensor/... ./frontend/trace/...

# The main job on an example: .tir to StableHLO, run on the CPU reference executor,
# the same StableHLO run by XLA:CPU on the same inputs, and the two compared.
DEMO := build/demo
demo: venv build
	@rm -rf $(DEMO) && mkdir -p $(DEMO)
	bin/tpucc build examples/transformer_block.tir -o $(DEMO)/transformer_block.hlo
	@echo "--- $(DEMO)/transformer_block.hlo (first lines)"
	@head -c 1500 $(DEMO)/transformer_block.hlo | head -n 8; echo "    ..."
	bin/tpucc run examples/transformer_block.tir --seed 1
	bin/tpucc run examples/transformer_block.tir --seed 1 --output-dir $(DEMO)/cpu --save-inputs
	$(PY) tools/xlacheck/xlacheck.py run-one $(DEMO)/transformer_block.hlo \
	    $$(for f in $$(ls $(DEMO)/cpu/arg*.npy | sort -V); do echo --input $$f; done) --outdir $(DEMO)/xla > $(DEMO)/xla.log
	$(PY) tools/xlacheck/xlacheck.py compare $(DEMO)/cpu $(DEMO)/xla

clean:
	rm -rf bin build

# The LLVM CPU backend (backend/llvm) builds its kernels with the system clang;
# install it from the distribution's packages when it is missing.
clang:
	@command -v clang >/dev/null 2>&1 || { apt-get update && apt-get install -y clang; }

# ---------------------------------------------------------------------------
# xlacheck: the Python environment of the XLA oracle (tools/xlacheck).
#
#   make venv       .venv/ with the pinned jax/jaxlib/numpy (tools/xlacheck/requirements.txt)
#   make venv-tpu   .venv-tpu/ with the same pins plus libtpu, for TPU compile-only checks
#
# Each venv is rebuilt from scratch when its requirements file changes, and left
# alone otherwise (the stamp file records the last successful install).
# ---------------------------------------------------------------------------

VENV ?= .venv
PY := $(VENV)/bin/python
VENV_TPU ?= .venv-tpu
PY_TPU := $(VENV_TPU)/bin/python
XLACHECK_REQ := tools/xlacheck/requirements.txt
XLACHECK_REQ_TPU := tools/xlacheck/requirements-tpu.txt
PIP_FLAGS := --disable-pip-version-check --no-input --quiet

.PHONY: venv venv-tpu

venv: $(VENV)/.stamp

$(VENV)/.stamp: $(XLACHECK_REQ)
	rm -rf $(VENV)
	python3 -m venv $(VENV)
	$(PY) -m pip install $(PIP_FLAGS) -r $(XLACHECK_REQ)
	touch $@

venv-tpu: $(VENV_TPU)/.stamp

$(VENV_TPU)/.stamp: $(XLACHECK_REQ_TPU) $(XLACHECK_REQ)
	rm -rf $(VENV_TPU)
	python3 -m venv $(VENV_TPU)
	$(PY_TPU) -m pip install $(PIP_FLAGS) -r $(XLACHECK_REQ_TPU)
	touch $@

# --- end of xlacheck section -------------------------------------------------
