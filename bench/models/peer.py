"""bench/models' Python peer: transformers' Qwen3 / Qwen3-MoE in PyTorch on the CPU, f32 or bf16.

Usage: peer.py CONFIG.json WORKLOADS.json

CONFIG.json is the model's config.json (random weights: the model is built from it, not
loaded). WORKLOADS.json lists {"name", "kind": "prefill"|"decode", "batch", "tokens",
"steps", "repeat"}. For each workload in turn and each mode (eager, then torch.compile) it
prints one JSON line {"mode", "name", "seconds", "error"} as soon as it is measured (so
bench/models can print the workload's row before the next one starts): seconds is the
median over `repeat` timed runs, after one warm-up run (which, under torch.compile,
compiles). A third mode, "torch.compile static", decodes under torch.compile with
transformers' StaticCache (one cache of fixed length, so every step has the same shapes
and compiles once, as tpucc's decode does); it runs the decode workloads only. After a
workload's modes it prints {"mode": "done", "name"}.

The weights are f32, or bf16 (f16) where TPUCC_BENCH_DTYPE=bf16 (f16): the whole model is built in
that dtype (as a bf16 checkpoint loads with dtype=torch.bfloat16), so its products are PyTorch's
half-precision kernels (oneDNN's on x86, AMX or AVX512-BF16 where the host has them).

  prefill  batch rows of `tokens` tokens through the model (a fresh cache), timed whole
  decode   a prefill of `tokens` tokens per row (untimed), then `steps` one-token steps
           with the cache, greedy; seconds is per step

Every forward asks for the last token's logits only (logits_to_keep=1), as transformers'
generate() does and as tpucc's prefill computes them: without it a 512-token prefill of a
151936-word vocabulary would also multiply 511 rows by the output embedding, work that
generation never asks for.

The thread count is torch's, set by TPUCC_BENCH_THREADS (bench/models passes its own).
"""

import json
import os
import statistics
import sys
import time

import torch
from transformers import AutoConfig, AutoModelForCausalLM, DynamicCache, StaticCache


DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def build(config_path, dtype):
    with open(config_path) as f:
        raw = json.load(f)
    cfg = AutoConfig.for_model(**raw)
    torch.manual_seed(0)
    with torch.no_grad():
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype)
    return model.eval()


def prefill(fn, w, vocab):
    ids = torch.randint(0, vocab, (w["batch"], w["tokens"]))
    t0 = time.perf_counter()
    fn(input_ids=ids, use_cache=True, logits_to_keep=1)
    return time.perf_counter() - t0


def decode(fn, w, vocab):
    ids = torch.randint(0, vocab, (w["batch"], w["tokens"]))
    cache = DynamicCache()
    out = fn(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
    nxt = out.logits[:, -1:].argmax(-1)
    t0 = time.perf_counter()
    for _ in range(w["steps"]):
        out = fn(input_ids=nxt, past_key_values=cache, use_cache=True, logits_to_keep=1)
        nxt = out.logits[:, -1:].argmax(-1)
    return (time.perf_counter() - t0) / w["steps"]


def decode_static(fn, w, vocab, config):
    """decode with a StaticCache sized for the prompt and the steps, positions given."""
    ids = torch.randint(0, vocab, (w["batch"], w["tokens"]))
    cache = StaticCache(config=config, max_cache_len=w["tokens"] + w["steps"] + 1)
    pos = torch.arange(w["tokens"])
    out = fn(input_ids=ids, past_key_values=cache, cache_position=pos, use_cache=True, logits_to_keep=1)
    nxt = out.logits[:, -1:].argmax(-1)
    t0 = time.perf_counter()
    for i in range(w["steps"]):
        pos = torch.tensor([w["tokens"] + i])
        out = fn(input_ids=nxt, past_key_values=cache, cache_position=pos, use_cache=True, logits_to_keep=1)
        nxt = out.logits[:, -1:].argmax(-1)
    return (time.perf_counter() - t0) / w["steps"]


def main():
    torch.set_num_threads(int(os.environ.get("TPUCC_BENCH_THREADS", "2")))
    # Both compiled modes share the model's code objects: a dynamic cache recompiles on new
    # lengths, and past the default limit dynamo would quietly fall back to eager.
    torch._dynamo.config.recompile_limit = 64
    dtype = os.environ.get("TPUCC_BENCH_DTYPE", "f32")
    if dtype not in DTYPES:
        sys.exit(f"peer.py: TPUCC_BENCH_DTYPE={dtype}: want f32, bf16 or f16")
    model = build(sys.argv[1], DTYPES[dtype])
    with open(sys.argv[2]) as f:
        workloads = json.load(f)
    vocab = model.config.vocab_size
    modes = [("eager", model)]
    if os.environ.get("TPUCC_BENCH_NO_COMPILE") != "1":
        compiled = torch.compile(model)
        modes.append(("torch.compile", compiled))
        modes.append(("torch.compile static", compiled))
    for w in workloads:
        for mode, fn in modes:
            if mode == "torch.compile static":
                if w["kind"] != "decode":
                    continue
                run = lambda f, w, v: decode_static(f, w, v, model.config)
            else:
                run = prefill if w["kind"] == "prefill" else decode
            rec = {"mode": mode, "name": w["name"], "seconds": 0.0, "error": ""}
            try:
                with torch.no_grad():
                    run(fn, w, vocab)
                    rec["seconds"] = statistics.median(run(fn, w, vocab) for _ in range(w["repeat"]))
            except Exception as e:  # a mode that fails here is reported, not fatal
                rec["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
            print(json.dumps(rec), flush=True)
        print(json.dumps({"mode": "done", "name": w["name"]}), flush=True)


if __name__ == "__main__":
    main()
