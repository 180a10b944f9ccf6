#!/usr/bin/env python3
"""tpu_compile: compile StableHLO modules for TPU topologies on a host without a TPU.

libtpu's compile-only client (jax.experimental.topologies) describes a TPU slice that
is not there and compiles for it, all the way to a TPU executable; nothing runs.
Needs .venv-tpu (`make venv-tpu`), which holds libtpu.

Usage:
  .venv-tpu/bin/python tools/xlacheck/tpu_compile.py [--topology v5e:2x2 ...] [--json] MODULE.hlo ...
      Prints one line per module and topology, "ok" or the error; exit status 0 when
      all compiled, 1 when some did not, 2 when the harness itself failed.
  .venv-tpu/bin/python tools/xlacheck/tpu_compile.py [--topology ...] --manifest FILE|-
      The batch mode the Go driver (tools/xlacheck/tpu.go) uses. FILE ("-" is stdin)
      is {"modules": [{"id": "...", "text": "module @m ..."}, ...]}; diagnostics name
      a module by its id. Prints one JSON object a line, for every module and
      topology in that order (module-major), as --json does but with "id" for
      "module". Exit status 0 when the harness worked, whatever the modules did; 2
      when it did not.

Topologies default to v5e:2x2 and v6e:2x2 (names are GENERATION:CHIPS, e.g. v5e:4x4,
v4:2x2x1, v5p:2x2x1). A module is compiled for as many chips as its
mhlo.num_replicas * mhlo.num_partitions asks for (1 if it does not say), taken from the
topology's first devices. Each topology is created once per process and every module
is parsed once, then compiled for each topology.
"""

import argparse
import json
import os
import sys

# libtpu probes for the TPU VM it would run on (metadata server, worker hostnames) and
# complains on stderr when there is none. Say "one host, this one" so it stays quiet;
# none of this describes the target, which comes from the topology name.
#
# libtpu also takes /tmp/libtpu_lockfile, so that two processes do not drive one chip;
# a second process fails with "ABORTED: Internal error when accessing libtpu
# multi-process lockfile", and a killed one leaves the file behind for every later run.
# Compiling drives no chip, and `go test ./...` runs packages side by side, so skip it.
for k, v in {"TPU_SKIP_MDS_QUERY": "1", "TPU_WORKER_ID": "0",
             "TPU_WORKER_HOSTNAMES": "localhost", "TPU_HOST_BOUNDS": "1,1,1",
             "ALLOW_MULTIPLE_LIBTPU_LOAD": "1"}.items():
    os.environ.setdefault(k, v)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xlacheck  # noqa: E402  (parsing, verifying and the diagnostics format are shared)

DEFAULT_TOPOLOGIES = ["v5e:2x2", "v6e:2x2"]


def int_attr(ir, module, name, default):
    attrs = module.operation.attributes
    return ir.IntegerAttr(attrs[name]).value if name in attrs else default


def parse(oracle, name, text):
    """Returns (ctx, module, error); error is "" when the module parsed and verified.
    name is what diagnostics call the module (its path, or its id in a manifest)."""
    try:
        ctx, module = oracle.parse(name, text)
    except xlacheck.CaseError as e:
        return None, None, "%s: %s" % (e.stage, e.error)
    return ctx, module, ""


def compile_for(oracle, ctx, module, topo):
    """Returns (ok, error, info) for one parsed module on one topology."""
    ir = oracle.ir
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
    cost = exe.cost_analysis()
    cost = (cost[0] if cost else {}) if isinstance(cost, list) else (cost or {})
    return True, "", {"devices": n, "generated_code_bytes": stats.generated_code_size_in_bytes,
                      "temp_bytes": stats.temp_size_in_bytes,
                      # XLA:TPU's own cost analysis (bench/moe compares it with ours).
                      "flops": float(cost.get("flops", 0.0)),
                      "bytes_accessed": float(cost.get("bytes accessed", 0.0)),
                      "optimal_seconds": float(cost.get("optimal_seconds", 0.0))}


def compile_all(oracle, topos, sources, emit):
    """Compiles every (name, text, error) source for every topology, module-major, and
    calls emit(name, topology, kind, ok, error, info) for each; returns how many failed.
    A source that could not be read comes with its error and is reported, not parsed."""
    failed = 0
    for name, text, read_error in sources:
        ctx, module, err = (None, None, read_error) if read_error else parse(oracle, name, text)
        for tname, topo in topos:
            kind = topo.devices[0].device_kind
            if err:
                ok, cerr, info = False, err, {}
            else:
                ok, cerr, info = compile_for(oracle, ctx, module, topo)
            failed += not ok
            emit(name, tname, kind, ok, cerr, info)
    return failed


def file_sources(paths):
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                yield path, f.read(), ""
        except (OSError, UnicodeDecodeError) as e:
            yield path, "", "parse: cannot read module: %s" % e


def load_manifest(path):
    if path == "-":
        manifest = json.load(sys.stdin)
    else:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    return [(str(m["id"]), str(m["text"]), "") for m in manifest["modules"]]


def main(argv):
    p = argparse.ArgumentParser(prog="tpu_compile.py", description=__doc__.split("\n")[0])
    p.add_argument("modules", nargs="*", metavar="MODULE.hlo")
    p.add_argument("--topology", action="append", help="a TPU topology name; repeatable")
    p.add_argument("--json", action="store_true", help="print one JSON object per line")
    p.add_argument("--manifest", metavar="FILE", help='compile the modules of a JSON manifest ("-": stdin)')
    args = p.parse_args(argv)
    if bool(args.modules) == bool(args.manifest):
        p.error("give either MODULE.hlo files or --manifest")
    names = args.topology or DEFAULT_TOPOLOGIES

    # The results own stdout; anything libtpu or XLA writes to file descriptor 1 from
    # C++ goes to stderr instead, so that a reader of stdout sees only results.
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    sys.stdout.flush()
    os.dup2(2, 1)

    if args.manifest:
        try:
            sources = load_manifest(args.manifest)
        except (OSError, ValueError, KeyError, TypeError) as e:
            print("tpu_compile: bad manifest %s: %s" % (args.manifest, e), file=sys.stderr)
            return 2
    else:
        sources = file_sources(args.modules)

    try:
        oracle = xlacheck.Oracle()
        from jax.experimental import topologies
        topos = [(name, topologies.get_topology_desc(name, "tpu")) for name in names]
    except Exception as e:
        print("tpu_compile: cannot get the TPU compile-only client: %s: %s" % (type(e).__name__, e),
              file=sys.stderr)
        return 2

    key = "id" if args.manifest else "module"

    def emit(name, tname, kind, ok, err, info):
        if args.json or args.manifest:
            out.write(json.dumps({key: name, "topology": tname, "device_kind": kind,
                                  "ok": ok, "error": err, **info}) + "\n")
        elif ok:
            out.write("%s\t%s (%s)\tok\t%d bytes of code\n" % (name, tname, kind, info["generated_code_bytes"]))
        else:
            out.write("%s\t%s (%s)\terror\t%s\n" % (name, tname, kind, err))
        out.flush()  # a crash later on keeps what was already reported

    failed = compile_all(oracle, topos, sources, emit)
    if args.manifest:
        return 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
