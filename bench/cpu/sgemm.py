#!/usr/bin/env python3
"""OpenBLAS sgemm (the copy numpy bundles) on the matmul shapes of bench/cpu, for the decision
in docs/CPU_BACKEND.md whether backend/llvm should call cblas_sgemm instead of its own kernel.

  OPENBLAS_NUM_THREADS=1 .venv-bench/bin/python bench/cpu/sgemm.py [--repeat R]

Prints, per shape M x K x N, the median wall time and CPU time of R runs after a warm-up, and
GFLOP/s on the wall time. Compare with
  go test ./backend/llvm -run '^$' -bench Gemm -benchtime 10x
which times backend/llvm's kernel on the same shapes (threads=1 and all cores).
"""

import argparse
import os
import statistics
import time

import numpy as np

SHAPES = [(1024, 1024, 1024), (64, 1024, 4096), (64, 4096, 1024)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=10)
    args = p.parse_args()
    rng = np.random.default_rng(1)
    print(f"numpy {np.__version__}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    for m, k, n in SHAPES:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        a @ b
        wall, cpu = [], []
        for _ in range(args.repeat):
            w0, c0 = time.perf_counter(), time.process_time()
            a @ b
            wall.append(time.perf_counter() - w0)
            cpu.append(time.process_time() - c0)
        w, c = statistics.median(wall), statistics.median(cpu)
        print(f"{m}x{k}x{n}: wall {w * 1e3:.2f} ms, cpu {c * 1e3:.2f} ms, {2 * m * k * n / w / 1e9:.1f} GFLOP/s")


if __name__ == "__main__":
    main()
