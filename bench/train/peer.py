"""bench/train's Python peer: one training step of transformers' Qwen3 / Qwen3-MoE in PyTorch
on the CPU, f32: the causal-LM loss (labels = the tokens), its backward pass and
torch.optim.AdamW's step, as tpucc train's step computes them.

Usage: peer.py CONFIG.json WORK.json

CONFIG.json is the model's config.json (random weights: the model is built from it, not
loaded). WORK.json is {"name", "batch", "tokens", "repeat", "lr"}. For each mode (eager, then
torch.compile of the model; the optimizer's step runs eagerly in both, as a fused foreach
update) it prints one JSON line {"mode", "name", "seconds", "error"}: seconds is the median
over `repeat` timed steps after two warm-up steps (under torch.compile they compile),
and "compile_seconds" is the warm-up steps' time. The thread count is torch's, set by
TPUCC_BENCH_THREADS.
"""

import json
import os
import statistics
import sys
import time

import torch
from transformers import AutoConfig, AutoModelForCausalLM


def build(config_path):
    with open(config_path) as f:
        raw = json.load(f)
    cfg = AutoConfig.for_model(**raw)
    torch.manual_seed(0)
    return AutoModelForCausalLM.from_config(cfg, dtype=torch.float32).train()


def step(fn, opt, ids):
    t0 = time.perf_counter()
    loss = fn(input_ids=ids, labels=ids).loss
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return time.perf_counter() - t0


def main():
    torch.set_num_threads(int(os.environ.get("TPUCC_BENCH_THREADS", "2")))
    model = build(sys.argv[1])
    with open(sys.argv[2]) as f:
        w = json.load(f)
    opt = torch.optim.AdamW(model.parameters(), lr=w["lr"])
    g = torch.Generator().manual_seed(7)
    ids = torch.randint(0, model.config.vocab_size, (w["batch"], w["tokens"]), generator=g)
    modes = [("eager", model)]
    if os.environ.get("TPUCC_BENCH_NO_COMPILE") != "1":
        modes.append(("torch.compile", torch.compile(model)))
    for mode, fn in modes:
        rec = {"mode": mode, "name": w["name"], "seconds": 0.0, "compile_seconds": 0.0, "error": ""}
        try:
            # Two warm-up steps: torch.compile compiles on the first and, its guards
            # failing on the gradients and optimizer state the first step made, again
            # on the second (a -quick run timed 491 s for that second step).
            rec["compile_seconds"] = step(fn, opt, ids) + step(fn, opt, ids)
            rec["seconds"] = statistics.median(step(fn, opt, ids) for _ in range(w["repeat"]))
        except Exception as e:  # a mode that fails here is reported, not fatal
            rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
