"""bench/models' llama.cpp peer: prefill and batch-1 decode tokens/s of a GGUF model.

Usage: peer.py MODEL.gguf THREADS PROMPT GEN REPEAT
       peer.py MODEL.gguf THREADS PROMPT GEN turns

Run with .venv-llama's interpreter (llama-cpp-python built from its sdist for this host,
make venv-llama). It times what `llama-bench -t THREADS -p PROMPT -n GEN` times, through
llama-cpp-python's bindings of llama.cpp's C API, with the same steps:

  prefill  PROMPT random tokens decoded as one batch into an empty cache (n_batch 2048,
           n_ubatch 512, llama-bench's defaults), logits of the last token only
  decode   GEN one-token steps from an empty cache, each a random token, batch 1

Each is run once to warm up, then REPEAT times, the cache cleared before each run; the
result is the median tokens/s. One JSON line each, as soon as it is measured:
{"test": "prefill"|"decode", "tokens": N, "tokens_per_s": R, "runs": [...]}, first a
line {"system": "..."} with llama.cpp's system info (the instruction sets it was built for),
and last a line {"pages": "..."}: the text of /proc/self/smaps_rollup ("" where there is
none), which says how much of the mapped GGUF is in 2 MiB pages.
The context's other settings are the library's defaults (llama_context_default_params).

With "turns" in REPEAT's place it loads the model, prints the system line, runs each test
once to warm up, prints the pages line, then times one run of the test named by each line of stdin ("prefill" or
"decode") and prints its JSON line (without "runs"), until stdin closes: bench/models
then alternates these runs with its own, so that both sides of each pair see the host's
memory at the same minute (its bandwidth moves 2-3x over minutes on a shared VM).
"""

import ctypes
import json
import random
import statistics
import sys
import time

import llama_cpp as ll


@ll.llama_log_callback
def quiet(level, text, user_data):
    """llama.cpp logs every load at length on stderr; only errors are kept."""
    if level == 4:  # GGML_LOG_LEVEL_ERROR
        sys.stderr.write(text.decode(errors="replace"))


def load(path, threads, n_ctx):
    ll.llama_log_set(quiet, ctypes.c_void_p())
    ll.llama_backend_init()
    model = ll.llama_model_load_from_file(path.encode(), ll.llama_model_default_params())
    if not model:
        sys.exit(f"peer.py: {path}: llama.cpp could not load the model")
    p = ll.llama_context_default_params()
    p.n_ctx, p.n_batch, p.n_ubatch = n_ctx, 2048, 512
    p.n_threads, p.n_threads_batch = threads, threads
    ctx = ll.llama_init_from_model(model, p)
    if not ctx:
        sys.exit(f"peer.py: {path}: llama.cpp could not make a context")
    return model, ctx


def decode(ctx, tokens):
    arr = (ll.llama_token * len(tokens))(*tokens)
    rc = ll.llama_decode(ctx, ll.llama_batch_get_one(arr, len(tokens)))
    if rc != 0:
        sys.exit(f"peer.py: llama_decode of {len(tokens)} tokens returned {rc}")


def prefill(ctx, n, vocab, rng):
    t0 = time.perf_counter()
    decode(ctx, [rng.randrange(vocab) for _ in range(n)])
    ll.llama_synchronize(ctx)
    return n / (time.perf_counter() - t0)


def generate(ctx, n, vocab, rng):
    token = rng.randrange(vocab)
    t0 = time.perf_counter()
    for _ in range(n):
        decode(ctx, [token])
        ll.llama_synchronize(ctx)
        token = rng.randrange(vocab)
    return n / (time.perf_counter() - t0)


def pages():
    """Prints this process's /proc/self/smaps_rollup ("" where there is none): how much of
    the model's memory is in 2 MiB pages, which bench/models prints beside its own."""
    try:
        with open("/proc/self/smaps_rollup") as f:
            text = f.read()
    except OSError:
        text = ""
    print(json.dumps({"pages": text}), flush=True)


def turns(tests, run):
    """Times one run of each test stdin names, after a warm-up run of each (then the
    pages line)."""
    for test in tests:
        run(test)
    pages()
    for line in sys.stdin:
        test = line.strip()
        if test not in tests:
            sys.exit(f"peer.py: unknown test {test!r} on stdin (want prefill or decode)")
        n, r = tests[test][0], run(test)
        print(json.dumps({"test": test, "tokens": n, "tokens_per_s": r}), flush=True)


def main():
    if len(sys.argv) != 6:
        sys.exit("usage: peer.py MODEL.gguf THREADS PROMPT GEN REPEAT|turns")
    path = sys.argv[1]
    threads, prompt, gen = (int(a) for a in sys.argv[2:5])
    model, ctx = load(path, threads, prompt + gen)
    print(json.dumps({"system": ll.llama_print_system_info().decode().strip()}), flush=True)
    vocab = ll.llama_vocab_n_tokens(ll.llama_model_get_vocab(model))
    mem = ll.llama_get_memory(ctx)
    rng = random.Random(0)
    tests = {"prefill": (prompt, prefill), "decode": (gen, generate)}

    def run(test):
        n, fn = tests[test]
        ll.llama_memory_clear(mem, False)
        return fn(ctx, n, vocab, rng)

    if sys.argv[5] == "turns":
        turns(tests, run)
    else:
        for test in tests:
            runs = [run(test) for _ in range(int(sys.argv[5]) + 1)][1:]
            print(json.dumps({"test": test, "tokens": tests[test][0], "tokens_per_s": statistics.median(runs), "runs": runs}), flush=True)
        pages()
    ll.llama_free(ctx)
    ll.llama_model_free(model)


if __name__ == "__main__":
    main()
