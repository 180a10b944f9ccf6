#!/usr/bin/env bash
# Runs backend/pjrt's suite on an NVIDIA GPU through the CUDA PJRT plugin
# (xla_cuda_plugin.so from the jax-cuda12-pjrt package). Prepared for a
# machine with a GPU; nothing in CI depends on it. NOT YET RUN: no GPU was
# available when it was written.
#
#   tools/pjrtgpu/run.sh            (from the repository root)
#
# It installs jax-cuda12-pjrt into .venv-gpu, points TPUCC_PJRT_PLUGIN at its
# plugin, and runs the golden/example and random-program agreement tests, the MLP with --device gpu and the dispatch
# benchmark through the pjrt backend, writing build/pjrtgpu/{test,bench}.log.
set -euo pipefail
OUT=build/pjrtgpu
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
if [ ! -x .venv-gpu/bin/python ]; then
	python3 -m venv .venv-gpu
	.venv-gpu/bin/python -m pip install --disable-pip-version-check --quiet \
		"jax-cuda12-pjrt==$(.venv/bin/python -c 'import jaxlib; print(jaxlib.__version__)')"
fi
PLUGIN=$(find .venv-gpu -name xla_cuda_plugin.so | head -n1)
[ -n "$PLUGIN" ] || { echo "run.sh: no xla_cuda_plugin.so in .venv-gpu" >&2; exit 1; }
export TPUCC_PJRT_PLUGIN=$PWD/$PLUGIN
echo "plugin: $TPUCC_PJRT_PLUGIN" | tee -a "$OUT/gpu.txt"
start=$(date +%s)
go test -count=1 -v -run 'ThroughPJRT' ./internal/oracle 2>&1 | tee "$OUT/test.log" | tail -n 5
echo "suite: $(( $(date +%s) - start ))s" | tee -a "$OUT/gpu.txt"
# The device option end to end: the MLP on the GPU (backend pjrt-gpu, which
# finds the plugin through TPUCC_PJRT_PLUGIN).
go run ./examples/go/mlp --device gpu 2>&1 | tee -a "$OUT/gpu.txt"
echo "Record $OUT/gpu.txt and the last lines of $OUT/test.log in docs/PJRT.md."
