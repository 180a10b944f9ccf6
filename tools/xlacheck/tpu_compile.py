#!/usr/bin/env python3
"""tpu_compile: compile StableHLO modules for TPU topologies on a host without a TPU.

libtpu's compile-only client (jax.experimental.topologies) describes a TPU slice that
is not there and compiles for it, all the way to a TPU executable; nothing runs.
Needs .venv-tpu (`make venv-tpu`), which holds libtpu.

Usage:
  .venv-tpu/bin/python tools/xlacheck/tpu_compile.py [--topology v5e:2x2 ...] [--json] MODULE.hlo ...

Topologies default to v5e:2x2 and v6e:2x2 (names are GENERATION:CHIPS, e.g. v5e:4x4,
v4:2x2x1, v5p:2x2x1). A module is compiled for as many chips as its
mhlo.num_replicas * mhlo.num_partitions asks for (1 if it does not say), taken from the
topology's first devices. Prints one line per module and topology, "ok" or the error;
exit status 0 when all compiled, 1 when some did not, 2 when the harness itself failed.
"""

import argparse
import json
import os
import sys

# libtpu probes for the TPU VM it would run on (metadata server, worker hostnames) and
# complains on stderr when there is none. Say "one host, this one" so it stays quiet;
# none of this describes the target, which comes from the topology name.
for k, v in {"TPU_SKIP_MDS_QUERY": "1", "TPU_WORKER_ID": "0",
             "TPU_WORKER_HOSTNAMES": "localhost", "TPU_HOST_BOUNDS": "1,1,1"}.items():
    os.environ.setdefault(k, v)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xlacheck  # noqa: E402  (parsing, verifying and the diagnostics format are shared)

DEFAULT_TOPOLOGIES = ["v5e:2x2", "v6e:2x2"]


def int_attr(ir, module, name, default):
    attrs = module.operation.attributes
    return ir.IntegerAttr(attrs[name]).value if name in attrs else default


def compile_one(oracle, topo, path):
    """Returns (ok, error, info) for one module on one topology."""
    ir = oracle.ir
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        return False, "parse: cannot read module: %s" % e, {}
    try:
        ctx, module = oracle.parse(path, text)
    except xlacheck.CaseError as e:
        return False, "%s: %s" % (e.stage, e.error), {}
    with ctx:
        replicas = int_attr(ir, module, "mhlo.num_replicas", 1)
        partitions = int_attr(ir, module, "mhlo.num_partitions", 1)
        n = replicas * partitions
        if n > len(topo.devices):
            return False, "compile: module wants %d devices, topology has %d" % (n, len(topo.devices)), {}
        devices = topo.devices[:n]
        assignment = [[devices[r * partitions + p] for p in range(partitions)] for r in range(replicas)]
        opts = oracle.compiler.get_compile_options(
            num_replicas=replicas, num_partitions=partitions, device_assignment=assignment)
        try:
            exe = devices[0].client.compile(
                module, executable_devices=oracle.xc.DeviceList(tuple(devices)), compile_options=opts)
        except Exception as e:
            return False, "compile: %s" % xlacheck.xla_error(e), {}
    stats = exe.get_compiled_memory_stats()
    return True, "", {"devices": n, "generated_code_bytes": stats.generated_code_size_in_bytes,
                      "temp_bytes": stats.temp_size_in_bytes}


def main(argv):
    p = argparse.ArgumentParser(prog="tpu_compile.py", description=__doc__.split("\n")[0])
    p.add_argument("modules", nargs="+", metavar="MODULE.hlo")
    p.add_argument("--topology", action="append", help="a TPU topology name; repeatable")
    p.add_argument("--json", action="store_true", help="print one JSON object per line")
    args = p.parse_args(argv)
    names = args.topology or DEFAULT_TOPOLOGIES

    try:
        oracle = xlacheck.Oracle()
        from jax.experimental import topologies
        topos = []
        for name in names:
            t = topologies.get_topology_desc(name, "tpu")
            topos.append((name, t))
    except Exception as e:
        print("tpu_compile: cannot get the TPU compile-only client: %s: %s" % (type(e).__name__, e),
              file=sys.stderr)
        return 2

    failed = 0
    for name, topo in topos:
        kind = topo.devices[0].device_kind
        for path in args.modules:
            ok, err, info = compile_one(oracle, topo, path)
            failed += not ok
            if args.json:
                print(json.dumps(dict(module=path, topology=name, device_kind=kind, ok=ok, error=err, **info)))
            elif ok:
                print("%s\t%s (%s)\tok\t%d bytes of code" % (path, name, kind, info["generated_code_bytes"]))
            else:
                print("%s\t%s (%s)\terror\t%s" % (path, name, kind, err))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
