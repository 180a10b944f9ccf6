# tpucc Makefile.
#
#   make demo   build tpucc, compile examples/transformer_block.tir to StableHLO,
#               run it on this CPU (the llvm backend, tpucc run's default) and on
#               XLA:CPU, and compare
#   make test   every check CI runs (creates the Python environments itself)
#   make demo-model  a tiny Qwen3 saved by transformers, generated from by tpucc generate and trained by tpucc train
#   make build  bin/tpucc

GO ?= go

.PHONY: build test demo lint clean clang pjrt-cpu-plugin

build:
	$(GO) build -o bin/tpucc ./cmd/tpucc

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Packages run side by side, and several compile for TPU through libtpu at once: compiling
# drives no chip, so libtpu's multi-process lockfile is turned off for the tests.
test: export ALLOW_MULTIPLE_LIBTPU_LOAD = 1
# Every module the llvm backend generates in the tests passes LLVM's verifier first
# (llvm-as, when installed): clang's release build does not check its input.
test: export TPUCC_LLVM_VERIFY = 1
# The race detector runs over the runtime code: PJRT, the compile caches, the runtime, tensors,
# tracing, and the llvm backend (kernels on its own threads, result storage recycled).
#
# Every go test line has an explicit -timeout: go test's default of 10 minutes per package
# killed ./models and ./backend/llvm on a busy 2-core machine (about 8 minutes each when
# quiet). The limits leave CI's 90 minutes some margin and still stop a hung test.
test: venv venv-tpu venv-hf pjrt-cpu-plugin lint clang
	$(GO) test -count=1 -timeout 40m ./...
	CGO_ENABLED=0 $(GO) test -count=1 -timeout 10m ./backend/pjrt/...
	$(GO) test -count=1 -timeout 15m -race ./backend/pjrt/...
	$(GO) test -count=1 -timeout 20m -race ./compile/... ./engine/... ./tensor/... ./frontend/trace/...
	$(GO) test -count=1 -timeout 25m -race ./backend/llvm/...
	@mkdir -p build
	$(GO) run ./cmd/tpucc test-stablehlo testdata/stablehlo-interpret > build/stablehlo-interpret.log || { cat build/stablehlo-interpret.log; exit 1; }
	@tail -n 1 build/stablehlo-interpret.log

# The main job on an example: .tir to StableHLO, run on this CPU by tpucc run (the llvm
# backend, or the reference executor where clang is missing), the same StableHLO run by
# XLA:CPU on the same inputs, and the two compared.
DEMO := build/demo
demo: venv clang build
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

# The pinned XLA:CPU PJRT plugin backend/pjrt's tests run on, fetched once into a
# private cache directory and hash-checked (docs/PJRT.md).
pjrt-cpu-plugin: venv
	tools/pjrtcpu/fetch.sh $(PY)

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

# ---------------------------------------------------------------------------
# bench-cpu: the CPU benchmark (bench/cpu) and its Python peers in .venv-bench/
# (jax for XLA:CPU, ONNX Runtime and onnx; bench/cpu/requirements.txt). Its MKL
# peer is torch's matmul, run with .venv-hf's interpreter (make venv-hf; without
# it matmul_vs_mkl is nan).
# ---------------------------------------------------------------------------

VENV_BENCH ?= .venv-bench
PY_BENCH := $(VENV_BENCH)/bin/python
BENCH_REQ := bench/cpu/requirements.txt

.PHONY: venv-bench bench-cpu

venv-bench: $(VENV_BENCH)/.stamp

$(VENV_BENCH)/.stamp: $(BENCH_REQ)
	rm -rf $(VENV_BENCH)
	python3 -m venv $(VENV_BENCH)
	$(PY_BENCH) -m pip install $(PIP_FLAGS) -r $(BENCH_REQ)
	touch $@

bench-cpu: venv-bench
	$(GO) run ./bench/cpu

# ---------------------------------------------------------------------------
# bench/models' llama.cpp peer: .venv-llama/ with llama-cpp-python built from its
# sdist for this host (GGML_NATIVE; pins in bench/models/llama/requirements.txt;
# bench only, never a test dependency). The sdist stays unpacked in
# $(VENV_LLAMA)/src: its vendored convert_hf_to_gguf.py (run with .venv-hf's torch)
# writes the GGUF checkpoints. The build is long on 2 cores (tens of minutes: ggml,
# llama and llama.cpp's common library); cmake and ninja come from the package index
# when the host lacks them (scikit-build-core).
# ---------------------------------------------------------------------------

VENV_LLAMA ?= .venv-llama
PY_LLAMA := $(VENV_LLAMA)/bin/python
LLAMA_REQ := bench/models/llama/requirements.txt
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=ON -DLLAVA_BUILD=OFF

.PHONY: venv-llama

venv-llama: $(VENV_LLAMA)/.stamp

$(VENV_LLAMA)/.stamp: $(LLAMA_REQ)
	rm -rf $(VENV_LLAMA)
	python3 -m venv $(VENV_LLAMA)
	$(PY_LLAMA) -m pip download $(PIP_FLAGS) --no-deps --no-binary llama-cpp-python -d $(VENV_LLAMA)/sdist \
	    $$(grep '^llama-cpp-python==' $(LLAMA_REQ))
	mkdir -p $(VENV_LLAMA)/src
	tar -xzf $(VENV_LLAMA)/sdist/llama_cpp_python-*.tar.gz -C $(VENV_LLAMA)/src --strip-components=1
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(PY_LLAMA) -m pip install $(PIP_FLAGS) \
	    --no-binary llama-cpp-python --find-links $(VENV_LLAMA)/sdist -r $(LLAMA_REQ)
	touch $@

# ---------------------------------------------------------------------------
# The Hugging Face oracle: .venv-hf/ with pinned torch, transformers, safetensors
# and tokenizers (tools/hf/requirements.txt; test and bench only, about 5.6 GB).
# ---------------------------------------------------------------------------

VENV_HF ?= .venv-hf
PY_HF := $(VENV_HF)/bin/python
HF_REQ := tools/hf/requirements.txt

.PHONY: venv-hf

venv-hf: $(VENV_HF)/.stamp

$(VENV_HF)/.stamp: $(HF_REQ)
	rm -rf $(VENV_HF)
	python3 -m venv $(VENV_HF)
	$(PY_HF) -m pip install $(PIP_FLAGS) -r $(HF_REQ)
	touch $@

# A tiny random Qwen3 made and saved by transformers (tools/hf/oracle.py, which
# also records transformers' own greedy tokens), then generated from with tpucc.
DEMO_MODEL := build/demo-model
.PHONY: demo-model
demo-model: venv-hf build
	@rm -rf $(DEMO_MODEL) && mkdir -p $(DEMO_MODEL)
	$(PY_HF) tools/hf/oracle.py $(DEMO_MODEL) qwen3 2>/dev/null
	bin/tpucc generate --model $(DEMO_MODEL)/qwen3 --prompt-ids 3,17,42,5,9,11,30,2,7,61,13 --prompt-ids 8,1,50 \
	    --max-new-tokens 32 --output-dir $(DEMO_MODEL)/out
	@echo "--- transformers' greedy tokens for the same prompts (model.generate):"
	@$(PY_HF) -c 'import json; [print(*g) for g in json.load(open("$(DEMO_MODEL)/qwen3/oracle.json"))["greedy"][:2]]'
	@$(PY_HF) -c 'import numpy as np; np.save("$(DEMO_MODEL)/tokens.npy", np.random.default_rng(0).integers(0, 64, (8, 16), dtype=np.int32))'
	bin/tpucc train --model $(DEMO_MODEL)/qwen3 --tokens $(DEMO_MODEL)/tokens.npy --steps 8 \
	    --batch 2 --optimizer adamw --lr 0.01 --output-dir $(DEMO_MODEL)/trained

# ---------------------------------------------------------------------------
# The model tests' Python environment (tools/models): the `tokenizers` package
# that models/tokenizer is compared against.
#
#   make venv-models   .venv-models/ with tools/models/requirements.txt's pins
#
# `go test ./models/...` runs the comparison when .venv-models (or .venv-hf,
# which pins the same tokenizers) exists, skips it when neither does, and fails
# without them under CI=true.
# ---------------------------------------------------------------------------

VENV_MODELS ?= .venv-models
MODELS_REQ := tools/models/requirements.txt

.PHONY: venv-models

venv-models: $(VENV_MODELS)/.stamp

$(VENV_MODELS)/.stamp: $(MODELS_REQ)
	rm -rf $(VENV_MODELS)
	python3 -m venv $(VENV_MODELS)
	$(VENV_MODELS)/bin/python -m pip install $(PIP_FLAGS) -r $(MODELS_REQ)
	touch $@

# --- end of models section ---------------------------------------------------
