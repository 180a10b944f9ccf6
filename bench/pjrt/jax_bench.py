"""JAX's side of bench/pjrt (run by main.go, not by hand).

  python jax_bench.py dispatch N
      jax.jit(lambda a, b: a + b) on two f32[4] arrays already on the CPU device:
      prints the median over 5 rounds of N cached calls (each to block_until_ready)
      in microseconds per call; then, on a second line, the same from two numpy
      arrays with the result read back by np.asarray (host in, host out).
  python jax_bench.py tpu-compile TOPOLOGY ROUNDS MODULE.hlo ...
      parses and compiles each StableHLO module ROUNDS times for the TPU topology
      with JAX's compile-only client (tools/xlacheck/tpu_compile.py) and prints one
      line per module: its path and the median seconds of its compiles.
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "xlacheck"))


def dispatch(n):
    import jax
    import numpy as np

    f = jax.jit(lambda a, b: a + b)
    a = jax.device_put(np.arange(4, dtype=np.float32))
    b = jax.device_put(np.ones(4, dtype=np.float32))
    print("%.3f" % median_us(n, lambda: f(a, b).block_until_ready()))
    ha, hb = np.asarray(a), np.asarray(b)
    print("%.3f" % median_us(n, lambda: np.asarray(f(ha, hb))))


def median_us(n, call):
    """The median over 5 rounds of n calls, after 1000, in microseconds per call."""
    for _ in range(1000):
        call()
    rounds = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            call()
        rounds.append((time.perf_counter() - t) / n * 1e6)
    return sorted(rounds)[2]


def tpu_compile(topology, rounds, paths):
    import tpu_compile as tc
    import xlacheck
    from jax.experimental import topologies

    oracle = xlacheck.Oracle()
    topo = topologies.get_topology_desc(topology, "tpu")
    for p in paths:
        with open(p) as f:
            text = f.read()
        secs = []
        for _ in range(rounds):
            t = time.perf_counter()
            ctx, module, err = tc.parse(oracle, p, text)
            ok, cerr, _ = (False, err, None) if err else tc.compile_for(oracle, ctx, module, topo)
            secs.append(time.perf_counter() - t)
            if not ok:
                sys.exit("%s: %s" % (p, cerr))
        print("%s %.4f" % (p, sorted(secs)[len(secs) // 2]))


if __name__ == "__main__":
    if sys.argv[1] == "dispatch":
        dispatch(int(sys.argv[2]))
    else:
        tpu_compile(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
