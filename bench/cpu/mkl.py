#!/usr/bin/env python3
"""bench/cpu's MKL peer: torch's f32 matmul, which is MKL's sgemm in torch's x86 wheels.

Run with .venv-hf's interpreter (torch is not in .venv-bench; bench/cpu finds it as bench/models
does, at .venv-hf/bin/python under the repository root):

  .venv-hf/bin/python bench/cpu/mkl.py M K N [--rhs-t] [--repeat R] [--threads T]

times torch.matmul of an M x K and a K x N f32 matrix (with --rhs-t the rhs is stored N x K,
a Hugging Face weight, and multiplied transposed: torch.nn.functional.linear) on T threads
(torch.set_num_threads), once to warm up and then R times, and prints
{"median_s": ..., "mkl": true|false, "torch": "..."}: mkl is torch.backends.mkl.is_available(),
whether the product ran on MKL at all.
"""

import argparse
import json
import statistics
import sys
import time

import torch


def main(argv):
    p = argparse.ArgumentParser(prog="mkl.py")
    p.add_argument("m", type=int)
    p.add_argument("k", type=int)
    p.add_argument("n", type=int)
    p.add_argument("--rhs-t", action="store_true")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    g = torch.Generator().manual_seed(1)
    a = torch.randn(args.m, args.k, generator=g, dtype=torch.float32)
    if args.rhs_t:
        w = torch.randn(args.n, args.k, generator=g, dtype=torch.float32)
        fn = lambda: torch.nn.functional.linear(a, w)  # noqa: E731
    else:
        b = torch.randn(args.k, args.n, generator=g, dtype=torch.float32)
        fn = lambda: torch.matmul(a, b)  # noqa: E731
    with torch.inference_mode():
        fn()
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    print(json.dumps({"median_s": statistics.median(times), "mkl": torch.backends.mkl.is_available(),
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main(sys.argv[1:])
