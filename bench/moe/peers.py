#!/usr/bin/env python3
"""bench/moe's peers: XLA:CPU timing of a StableHLO module, and XLA:TPU's cost analysis.

  peers.py time MODULE.hlo --input a.npy ... [--repeat N]
      Compiles the module on XLA:CPU (the oracle's settings), runs it once to warm up,
      then N times, and prints {"median_s": ..., "runs": N} as JSON.
  peers.py tpu-cost MODULE.hlo ... [--topology v6e:2x2]
      Compiles each module for one chip of the topology (libtpu's compile-only path;
      needs .venv-tpu) and prints one JSON object a line with XLA's cost analysis:
      flops, bytes accessed and optimal_seconds.
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "xlacheck"))


def cmd_time(args):
    import xlacheck  # sets XLA's flags as the oracle does

    o = xlacheck.Oracle()
    with open(args.module, encoding="utf-8") as f:
        ctx, module = o.parse(args.module, f.read())
    with ctx:
        exe = o.compile(module)
    bufs = [o.jax.device_put(xlacheck.load_npy(p), o.device) for p in args.input]
    for out in exe.execute(bufs):  # warm-up
        out.block_until_ready()
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        for out in exe.execute(bufs):
            out.block_until_ready()
        times.append(time.perf_counter() - t0)
    print(json.dumps({"median_s": statistics.median(times), "runs": len(times)}))


def cmd_tpu_cost(args):
    import tpu_compile  # noqa: F401  (sets libtpu's environment before jax loads it)
    import xlacheck
    from jax.experimental import topologies

    o = xlacheck.Oracle()
    topo = topologies.get_topology_desc(args.topology, "tpu")
    dev = topo.devices[:1]
    for path in args.modules:
        with open(path, encoding="utf-8") as f:
            ctx, module = o.parse(path, f.read())
        with ctx:
            opts = o.compiler.get_compile_options(num_replicas=1, num_partitions=1, device_assignment=[[dev[0]]])
            exe = dev[0].client.compile(module, executable_devices=o.xc.DeviceList(tuple(dev)), compile_options=opts)
        ca = exe.cost_analysis()
        ca = ca[0] if isinstance(ca, list) else ca
        print(json.dumps({"module": path, "flops": ca.get("flops", 0.0), "bytes": ca.get("bytes accessed", 0.0),
                          "seconds": ca.get("optimal_seconds", 0.0)}), flush=True)


def main(argv):
    p = argparse.ArgumentParser(prog="peers.py")
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("time")
    t.add_argument("module")
    t.add_argument("--input", action="append", default=[])
    t.add_argument("--repeat", type=int, default=5)
    c = sub.add_parser("tpu-cost")
    c.add_argument("modules", nargs="+")
    c.add_argument("--topology", default="v6e:2x2")
    args = p.parse_args(argv)
    {"time": cmd_time, "tpu-cost": cmd_tpu_cost}[args.cmd](args)


if __name__ == "__main__":
    main(sys.argv[1:])
