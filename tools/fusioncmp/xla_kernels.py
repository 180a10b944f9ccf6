"""xla_kernels: the kernels of XLA's optimised HLO for StableHLO modules, as JSON.

For each module and platform, XLA compiles the module (XLA:CPU through jax's CPU
client; XLA:TPU through libtpu's compile-only client, as tools/xlacheck/tpu_compile.py
does) and this prints the top-level instructions of the optimised entry computation
that run as kernels (fusions, dots, copies, custom calls, ...; not parameters,
constants, tuples, get-tuple-element or bitcasts), each with its operand and result
types in .tir spelling, so that cmd fusioncmp can cost them under tpucc's model.

  .venv/bin/python tools/fusioncmp/xla_kernels.py --platform cpu MODULE.hlo ...
  .venv-tpu/bin/python tools/fusioncmp/xla_kernels.py --platform v6e MODULE.hlo ...
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "xlacheck"))

FREE = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast", "after-all"}
DTYPES = {"pred": "i1", "s8": "i8", "s16": "i16", "s32": "i32", "s64": "i64", "u8": "u8",
          "u16": "u16", "u32": "u32", "u64": "u64", "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64"}
SHAPE = re.compile(r"\b(pred|[suf]\d+|bf16)\[([0-9,]*)\](?:\{[^}]*\})?")
INSTR = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*?)\s+([\w\-]+)\((.*)$")


def tir_types(text):
    return ["%s[%s]" % (DTYPES[d], dims) for d, dims in SHAPE.findall(text) if d in DTYPES]


def entry_kernels(hlo):
    """The kernels of the ENTRY computation; operands are resolved by name to the
    types their defining instructions give (the optimised text omits operand shapes)."""
    rows, types, in_entry = [], {}, False
    for line in hlo.splitlines():
        if line.startswith("ENTRY"):
            in_entry = True
            continue
        if in_entry and line.startswith("}"):
            break
        if not in_entry:
            continue
        m = INSTR.match(line)
        if not m:
            continue
        name, result, op, rest = m.groups()
        types[name] = tir_types(result)
        depth, end = 1, len(rest)
        for i, c in enumerate(rest):
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    end = i
                    break
        if op in FREE:
            continue
        kind = re.search(r"kind=(k\w+)", rest[end:])
        names = re.findall(r"%([\w.\-]+)", rest[:end])
        rows.append((name, op, kind.group(1) if kind else "", names))
    out = []
    for name, op, kind, names in rows:
        operands = []
        for n in dict.fromkeys(names):  # each operand read once
            operands += types.get(n, [])
        out.append({"name": name, "op": op, "kind": kind, "results": types[name], "operands": operands})
    return out


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("--platform", default="cpu", help="cpu, v5e or v6e")
    p.add_argument("--hlo-dir", help="also write each optimised HLO text here")
    p.add_argument("modules", nargs="+")
    args = p.parse_args(argv)
    if args.platform == "cpu":
        import xlacheck
        oracle = xlacheck.Oracle()

        def compile_(module):
            return oracle.compile(module)
    else:
        import tpu_compile
        import xlacheck
        oracle = xlacheck.Oracle()
        from jax.experimental import topologies
        topo = topologies.get_topology_desc(platform="tpu", topology_name=args.platform + ":2x2")
        dev = topo.devices[0]

        def compile_(module):
            opts = oracle.compiler.get_compile_options(num_replicas=1, num_partitions=1, device_assignment=[[dev]])
            return dev.client.compile(module, executable_devices=oracle.xc.DeviceList((dev,)), compile_options=opts)
    res = []
    for path in args.modules:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        ctx, module = oracle.parse(path, text)
        with ctx:
            exe = compile_(module)
        hlo = "\n".join(m.to_string() for m in exe.hlo_modules())
        if args.hlo_dir:
            base = os.path.basename(path).rsplit(".", 1)[0]
            with open(os.path.join(args.hlo_dir, "%s.%s.txt" % (base, args.platform)), "w") as f:
                f.write(hlo)
        ks = entry_kernels(hlo)
        res.append({"module": path, "platform": args.platform,
                    "fusions": sum(1 for k in ks if k["op"] == "fusion"), "kernels": ks})
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
