#!/usr/bin/env bash
# Runs tpucc's PJRT checks on an NVIDIA GPU through the CUDA PJRT plugin
# (xla_cuda_plugin.so of jax-cuda13-pjrt or jax-cuda12-pjrt, as installed
# with JAX). Nothing in CI depends on it. It needs no Go and no network: the
# binaries come from tools/pjrtgpu/build.sh, run where Go is.
#
#   tools/pjrtgpu/run.sh [BIN [OUT]]   (from the repository root;
#                                       BIN: build/pjrtgpu/bin, OUT: build/pjrtgpu)
#
# It writes OUT/gpu.txt (the machine, the plugin, the MLP on --device gpu,
# the dispatch comparison with jax.jit on the same GPU) and one log per
# agreement run:
#   suite-fp32.log   every golden module, example and 60 random programs
#                    against the reference executor, with TF32 off
#                    (NVIDIA_TF32_OVERRIDE=0, dots through cuBLAS): the
#                    oracle's own tolerances, which assume f32 arithmetic;
#   suite-highest.log  the same with the plugin's defaults and every product
#                    lowered at HIGHEST precision (-oracle.precision, which
#                    compile.Precision and tpucc --precision set);
#   suite-tf32.log   the same with the plugin's defaults and DEFAULT
#                    precision, where an f32 dot may run in TF32 (10-bit
#                    mantissas) on tensor cores, as JAX's does by default.
# Each run compiles without autotuning (--xla_gpu_autotune_level=0) to keep
# compile time short; kernels are chosen by XLA's heuristics instead.
set -uo pipefail
BIN=${1:-build/pjrtgpu/bin}
OUT=${2:-build/pjrtgpu}
ROOT=$PWD
mkdir -p "$OUT" /tmp/pjrtgpu
for f in "$BIN"/*.gz; do
	gzip -dc "$f" >"/tmp/pjrtgpu/$(basename "$f" .gz)"
done
chmod +x /tmp/pjrtgpu/*
B=/tmp/pjrtgpu
log() { echo "$*" | tee -a "$OUT/gpu.txt"; }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
PY=$(command -v python3)
SITE=$("$PY" -c 'import site; print(site.getsitepackages()[0])')
PLUGIN=$(ls "$SITE"/jax_plugins/xla_cuda1*/xla_cuda_plugin.so 2>/dev/null | head -n1)
[ -n "$PLUGIN" ] || { log "run.sh: no xla_cuda_plugin.so under $SITE/jax_plugins"; exit 1; }
log "plugin: $PLUGIN ($("$PY" -m pip show jax-cuda13-pjrt jax-cuda12-pjrt 2>/dev/null | grep -E '^(Name|Version)' | tr '\n' ' '))"
# The libraries the plugin opens (cudart, cublas, cudnn, nvrtc, ...) live in
# the nvidia/* packages beside it; JAX preloads them, a Go process does not.
LD_LIBRARY_PATH=$(ls -d "$SITE"/nvidia/*/lib 2>/dev/null | tr '\n' ':')${LD_LIBRARY_PATH:-}
export LD_LIBRARY_PATH

# XLA's informational log lines would bury the results.
export TF_CPP_MIN_LOG_LEVEL=1
# f32 arithmetic on the GPU: cuBLAS without TF32, no Triton gemms.
F32=(NVIDIA_TF32_OVERRIDE=0 XLA_FLAGS="--xla_gpu_autotune_level=0 --xla_gpu_enable_triton_gemm=false")

# The device option end to end: the MLP traced in Go, compiled and run on
# the GPU (backend pjrt-gpu loads the plugin $TPUCC_PJRT_PLUGIN names: it
# looks in $VIRTUAL_ENV and the project's .venv only), with the plugin's
# defaults (TF32 dots) and in f32.
export TPUCC_PJRT_PLUGIN=$PLUGIN
log "--- go run ./examples/go/mlp --device gpu"
(time timeout 120 "$B/mlp" --device gpu) 2>&1 | tee -a "$OUT/gpu.txt"
log "--- the same in f32: ${F32[*]}"
env "${F32[@]}" timeout 120 "$B/mlp" --device gpu 2>&1 | tee -a "$OUT/gpu.txt"
log "--- the same with --precision highest (HIGHEST products, the plugin's defaults)"
timeout 120 "$B/mlp" --device gpu --precision highest 2>&1 | tee -a "$OUT/gpu.txt"
log "--- tpucc run examples/mlp.tir --device gpu (zero inputs)"
timeout 60 "$B/tpucc" run examples/mlp.tir --device gpu 2>&1 | head -c 600 | tee -a "$OUT/gpu.txt"
echo | tee -a "$OUT/gpu.txt"

log "--- dispatch: Go's PJRT client against jax.jit, both on the GPU"
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 120 "$B/benchpjrt" -plugin "$PLUGIN" -python "$PY" -tpu-compile=false 2>&1 | tee -a "$OUT/gpu.txt"

log "--- backend/pjrt on the GPU: end to end with serialize/deserialize, errors and handle counts, 16 goroutines, donation, persisted executables"
(cd backend/pjrt && timeout 120 "$B/pjrt.test" -test.count=1 -test.v \
	-test.run 'TestCPUAddEndToEnd|TestCPUErrors|TestCPUConcurrent|TestDonat|TestBufferDonor|TestCompileExpecting' 2>&1) |
	grep -E '^(--- |ok|FAIL|PASS)|_test.go' | head -n 60 | tee -a "$OUT/gpu.txt"

suite() { # name, precision, extra environment...
	local name=$1 precision=$2
	shift 2
	local start=$SECONDS
	(cd internal/oracle && env "$@" timeout 240 "$B/oracle.test" -test.count=1 -test.v \
		-test.run 'ThroughPJRT' -oracle.precision="$precision" 2>&1) | head -c 12000000 >"$OUT/suite-$name.log"
	log "suite $name: exit ${PIPESTATUS[0]}, $((SECONDS - start))s; $(grep -E 'modules run on|programs \(seeds' "$OUT/suite-$name.log" | sed 's/^ *//' | tr '\n' ' ')"
	log "  failing checks: $(grep -cE ' through PJRT:$' "$OUT/suite-$name.log")"
}
suite fp32 "" "${F32[@]}"
suite highest highest XLA_FLAGS="--xla_gpu_autotune_level=0"
suite tf32 "" XLA_FLAGS="--xla_gpu_autotune_level=0"
cd "$ROOT"
