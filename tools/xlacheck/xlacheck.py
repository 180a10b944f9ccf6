#!/usr/bin/env python3
"""xlacheck: the oracle. Hands StableHLO text to real XLA and writes back what it computes.

Each case goes through four stages, and the first that fails is reported:

  parse    XLA's MLIR parser (jaxlib's bundled MLIR, stablehlo/chlo/mhlo/sdy registered)
  verify   the MLIR/StableHLO op verifiers
  compile  XLA:CPU, through the same client call jax uses for a jitted function
  run      execute with the inputs; outputs are written as .npy

Usage:
  xlacheck.py run MANIFEST.json
      MANIFEST.json is {"cases": [{"id": "...", "module": "m.hlo",
                                   "inputs": ["a.npy", ...], "outdir": "dir"}, ...]}.
      Relative paths are taken from the manifest's directory. For every case the
      outdir gets status.json ({"ok": true, "outputs": N} or {"ok": false,
      "stage": "parse|verify|compile|run", "error": "..."}) and, when ok,
      result0.npy, result1.npy, ... in return order. Exit status 0 when the
      harness itself worked, whatever the cases did; 2 when it did not.
  xlacheck.py run-one MODULE.hlo [--input A.npy ...] --outdir DIR
      One case, for a human reproducing a failure: prints the status and the
      results. Exit status 0 when the case is ok, 1 when it failed.
  xlacheck.py time MODULE.hlo [--input A.npy ...] [--repeat N]
      For the benchmarks: compiles once, runs once to warm up, then N times, and
      prints {"median_s": ..., "runs": N}.

Every mode runs XLA with --xla_allow_excess_precision=false added to XLA_FLAGS
(unless XLA_FLAGS already names that flag), so that f16/bf16 ops round as tpucc's do.

A case that kills the process outright (a crash inside XLA) leaves its
status.json saying stage "crash", written before the case starts.

bf16 arrays travel in .npy files whose header descr is 'bfloat16' (see
internal/npy): np.load reads them as ml_dtypes.bfloat16 once ml_dtypes is imported.
"""

import argparse
import json
import os
import re
import statistics
import sys
import time

# The oracle is XLA:CPU. Without this, an installed libtpu would be initialised.
os.environ["JAX_PLATFORMS"] = "cpu"

# tpucc's semantics round the result of every f16/bf16 op to its dtype (docs/ops.md).
# XLA, left to itself, may keep an f16/bf16 intermediate in f32 (simplify-fp-conversions
# removes the round trip), and then a bf16 program's results differ from tpucc's by far
# more than a rounding. XLA reads XLA_FLAGS when its first client starts, so this must
# come before jax does; every mode, and tpu_compile.py, which imports this file, gets it.
# A value the caller put in XLA_FLAGS for this flag is left as it is.
EXCESS_PRECISION_FLAG = "--xla_allow_excess_precision=false"


def set_xla_flags(env):
    flags = env.get("XLA_FLAGS", "")
    if "xla_allow_excess_precision" not in flags:
        env["XLA_FLAGS"] = (flags + " " + EXCESS_PRECISION_FLAG).strip()


set_xla_flags(os.environ)

import ml_dtypes  # noqa: E402  (registers bfloat16 with numpy, which np.load needs)
import numpy as np  # noqa: E402

# numpy dtype -> (tpucc dtype name, MLIR element type)
DTYPES = {
    np.dtype(np.float32): ("f32", "f32"),
    np.dtype(np.float16): ("f16", "f16"),
    np.dtype(ml_dtypes.bfloat16): ("bf16", "bf16"),
    np.dtype(np.float64): ("f64", "f64"),
    np.dtype(np.bool_): ("i1", "i1"),
    np.dtype(np.int8): ("i8", "i8"),
    np.dtype(np.int16): ("i16", "i16"),
    np.dtype(np.int32): ("i32", "i32"),
    np.dtype(np.int64): ("i64", "i64"),
    np.dtype(np.uint8): ("u8", "ui8"),
    np.dtype(np.uint32): ("u32", "ui32"),
    np.dtype(np.complex64): ("c64", "complex<f32>"),
    np.dtype(np.complex128): ("c128", "complex<f64>"),
    np.dtype(np.uint16): ("u16", "ui16"),
    np.dtype(np.uint64): ("u64", "ui64"),
    np.dtype(ml_dtypes.int2): ("i2", "i2"),
    np.dtype(ml_dtypes.int4): ("i4", "i4"),
    np.dtype(ml_dtypes.uint2): ("u2", "ui2"),
    np.dtype(ml_dtypes.uint4): ("u4", "ui4"),
    np.dtype(ml_dtypes.float8_e4m3fn): ("f8e4m3fn", "f8E4M3FN"),
    np.dtype(ml_dtypes.float8_e5m2): ("f8e5m2", "f8E5M2"),
    np.dtype(ml_dtypes.float8_e4m3fnuz): ("f8e4m3fnuz", "f8E4M3FNUZ"),
    np.dtype(ml_dtypes.float8_e5m2fnuz): ("f8e5m2fnuz", "f8E5M2FNUZ"),
    np.dtype(ml_dtypes.float8_e4m3b11fnuz): ("f8e4m3b11fnuz", "f8E4M3B11FNUZ"),
    np.dtype(ml_dtypes.float8_e4m3): ("f8e4m3", "f8E4M3"),
    np.dtype(ml_dtypes.float8_e3m4): ("f8e3m4", "f8E3M4"),
    np.dtype(ml_dtypes.float8_e8m0fnu): ("f8e8m0fnu", "f8E8M0FNU"),
    np.dtype(ml_dtypes.float6_e2m3fn): ("f6e2m3fn", "f6E2M3FN"),
    np.dtype(ml_dtypes.float6_e3m2fn): ("f6e3m2fn", "f6E3M2FN"),
    np.dtype(ml_dtypes.float4_e2m1fn): ("f4e2m1fn", "f4E2M1FN"),
}
BF16 = np.dtype(ml_dtypes.bfloat16)
# ml_dtypes types whose np.save descr ('<V2', '<V1') loses the dtype: their files
# carry the ml_dtypes name instead, as internal/npy reads and writes them.
NAMED_DESCR = {BF16: "bfloat16", np.dtype(ml_dtypes.int2): "int2", np.dtype(ml_dtypes.int4): "int4",
               np.dtype(ml_dtypes.uint2): "uint2", np.dtype(ml_dtypes.uint4): "uint4"}
# ...and the f8, f6 and f4 types, under ml_dtypes' names (np.save writes '<V1', or '<f1' for e5m2).
NAMED_DESCR.update({d: d.name for d in DTYPES if d.name.startswith(("float8_", "float6_", "float4_"))})


def xla_error(e):
    """An XLA exception's message without the Python-location trailer jax appends."""
    return str(e).split("Suspected Python Code Location:")[0].strip()


class CaseError(Exception):
    def __init__(self, stage, error):
        super().__init__(error)
        self.stage = stage
        self.error = error


def type_str(a):
    return "%s[%s]" % (DTYPES[a.dtype][0], ",".join(str(d) for d in a.shape))


def load_npy(path):
    a = np.load(path, allow_pickle=False)
    if a.dtype not in DTYPES:
        raise CaseError("run", "%s: unsupported dtype %s" % (path, a.dtype.str))
    return a


def save_npy(path, a):
    """np.save, except that bf16 gets descr 'bfloat16' (np.save would write '<V2'), int4 'int4' and so on."""
    a = np.asarray(a, order="C")  # not ascontiguousarray: that makes rank 0 into rank 1
    if a.dtype not in NAMED_DESCR:
        np.save(path, a, allow_pickle=False)
        return
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": NAMED_DESCR[a.dtype], "fortran_order": False, "shape": a.shape})
        f.write(a.tobytes())


_LOC = re.compile(r'^loc\("(?:[^"\\]|\\.)*":(\d+):(\d+)\)$')
_OP_ERROR = re.compile(r"^'[\w.$-]+' op ")


def format_diagnostics(module_path, diags):
    """MLIR diagnostics as FILE:LINE:COL: error: MESSAGE lines, notes indented below."""
    lines = []

    def where(loc):
        m = _LOC.match(str(loc))
        return "%s:%s:%s" % (module_path, m.group(1), m.group(2)) if m else str(loc)

    for d in diags:
        lines.append("%s: error: %s" % (where(d.location), d.message))
        for n in d.notes:
            lines.append("  %s: note: %s" % (where(n.location), n.message))
    return "\n".join(lines)


class Oracle:
    """Holds what is paid for once per process: jax, the CPU client, its device."""

    def __init__(self):
        import jax

        jax.config.update("jax_enable_x64", True)  # keep f64/i64 inputs as they are
        from jax._src import compiler
        from jax._src import xla_bridge
        from jax._src.interpreters import mlir
        from jax._src.lib import xla_client
        from jax._src.lib.mlir import ir

        self.jax, self.compiler, self.mlir, self.ir, self.xc = jax, compiler, mlir, ir, xla_client
        self.backend = xla_bridge.get_backend("cpu")
        self.device = self.backend.local_devices()[0]

    def parse(self, module_path, text):
        """Parses and verifies. MLIR's parser runs the verifier itself, so a verifier
        failure shows up as a parse exception: it is told apart by its diagnostics,
        which the verifier always words "'op.name' op ..."."""
        ir = self.ir
        ctx = self.mlir.make_ir_context()
        with ctx:
            try:
                module = ir.Module.parse(text)
            except ir.MLIRError as e:
                diags = list(e.error_diagnostics)
                stage = "verify" if diags and all(_OP_ERROR.match(d.message) for d in diags) else "parse"
                msg = format_diagnostics(module_path, diags) or str(e)
                raise CaseError(stage, msg) from None
            try:
                module.operation.verify()
            except ir.MLIRError as e:
                raise CaseError("verify", format_diagnostics(module_path, e.error_diagnostics) or str(e)) from None
        return ctx, module

    def main_arg_types(self, module):
        ir = self.ir
        for op in module.body.operations:
            if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
                return list(ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value).inputs)
        raise CaseError("compile", "module has no func.func @main")

    def check_inputs(self, module, inputs):
        want = self.main_arg_types(module)
        if len(want) != len(inputs):
            raise CaseError("run", "@main takes %d arguments, %d inputs given" % (len(want), len(inputs)))
        ir = self.ir
        for i, (t, a) in enumerate(zip(want, inputs)):
            ok = isinstance(t, ir.RankedTensorType) and str(t.element_type) == DTYPES[a.dtype][1] \
                and t.rank == a.ndim \
                and all(t.is_dynamic_dim(k) or t.get_dim_size(k) == a.shape[k] for k in range(t.rank))
            if not ok:
                raise CaseError("run", "input %d is %s, @main argument %d is %s" % (i, type_str(a), i, t))

    def compile(self, module):
        opts = self.compiler.get_compile_options(
            num_replicas=1, num_partitions=1, device_assignment=[self.device], backend=self.backend)
        try:
            return self.backend.compile_and_load(
                module, executable_devices=self.xc.DeviceList((self.device,)), compile_options=opts)
        except Exception as e:  # JaxRuntimeError and friends
            raise CaseError("compile", xla_error(e)) from None

    def run_case(self, module_path, input_paths, outdir):
        """Runs one case and returns its status dict; writes outdir/result*.npy."""
        try:
            with open(module_path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise CaseError("parse", "cannot read module: %s" % e) from None
        ctx, module = self.parse(module_path, text)
        with ctx:
            exe = self.compile(module)
            try:
                inputs = [load_npy(p) for p in input_paths]
            except CaseError:
                raise
            except Exception as e:
                raise CaseError("run", "cannot read input: %s" % e) from None
            self.check_inputs(module, inputs)
        try:
            bufs = [self.jax.device_put(a, self.device) for a in inputs]
            outs = [np.asarray(o) for o in exe.execute(bufs)]
        except Exception as e:
            raise CaseError("run", xla_error(e)) from None
        for i, o in enumerate(outs):
            if o.dtype not in DTYPES:
                raise CaseError("run", "result %d has dtype %s, which the .npy exchange does not carry" % (i, o.dtype))
        for i, o in enumerate(outs):
            save_npy(os.path.join(outdir, "result%d.npy" % i), o)
        return {"ok": True, "outputs": len(outs)}


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f)
        f.write("\n")
    os.replace(tmp, path)


def do_case(oracle, module_path, input_paths, outdir):
    """Runs one case end to end, status.json included, and returns the status."""
    os.makedirs(outdir, exist_ok=True)
    for name in os.listdir(outdir):
        if re.fullmatch(r"result\d+\.npy", name):
            os.remove(os.path.join(outdir, name))
    status_path = os.path.join(outdir, "status.json")
    write_json(status_path, {"ok": False, "stage": "crash",
                             "error": "xlacheck died while running this case (see its stderr)"})
    try:
        status = oracle.run_case(module_path, input_paths, outdir)
    except CaseError as e:
        status = {"ok": False, "stage": e.stage, "error": e.error}
    except Exception as e:  # a bug in a stage we did not foresee: still only this case
        status = {"ok": False, "stage": "run", "error": "%s: %s" % (type(e).__name__, e)}
    write_json(status_path, status)
    return status


def cmd_run(manifest_path):
    try:
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)
        base = os.path.dirname(os.path.abspath(manifest_path))
        cases = manifest["cases"]
        todo = []
        for c in cases:
            todo.append((str(c["id"]),
                         os.path.join(base, c["module"]),
                         [os.path.join(base, p) for p in c.get("inputs", [])],
                         os.path.join(base, c["outdir"])))
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("xlacheck: bad manifest %s: %s" % (manifest_path, e), file=sys.stderr)
        return 2
    oracle = Oracle()
    failed = 0
    for _id, module, inputs, outdir in todo:
        if not do_case(oracle, module, inputs, outdir)["ok"]:
            failed += 1
    print("xlacheck: %d cases, %d ok, %d failed" % (len(todo), len(todo) - failed, failed), file=sys.stderr)
    return 0


def cmd_run_one(module, inputs, outdir):
    status = do_case(Oracle(), module, inputs, outdir)
    print(json.dumps(status))
    if not status["ok"]:
        return 1
    np.set_printoptions(threshold=64, edgeitems=3)
    for i in range(status["outputs"]):
        path = os.path.join(outdir, "result%d.npy" % i)
        a = np.load(path)
        print("%s: %s\n%s" % (path, type_str(a), a))
    return 0


def cmd_time(module_path, input_paths, repeat):
    """Times one module on XLA:CPU for the benchmarks: compiled once, run once to
    warm up, then repeat times; prints {"median_s": ..., "runs": N}."""
    oracle = Oracle()
    with open(module_path, encoding="utf-8") as f:
        ctx, module = oracle.parse(module_path, f.read())
    with ctx:
        exe = oracle.compile(module)
        inputs = [load_npy(p) for p in input_paths]
        oracle.check_inputs(module, inputs)
    bufs = [oracle.jax.device_put(a, oracle.device) for a in inputs]
    times = []
    for i in range(repeat + 1):
        t0 = time.perf_counter()
        for out in exe.execute(bufs):
            out.block_until_ready()
        if i > 0:
            times.append(time.perf_counter() - t0)
    print(json.dumps({"median_s": statistics.median(times), "runs": len(times)}))
    return 0


def cmd_compare(want_dir, got_dir, rtol):
    """Compares resultN.npy of two directories, for the demo and for humans.

    Floats agree when max|got - want| <= rtol * max|want| (the error relative to
    the result's largest magnitude), with NaN and infinities in the same places;
    everything else must be equal. The oracle test's per-dtype tolerances live in
    internal/oracle.
    """
    names = sorted(n for n in os.listdir(want_dir) if re.fullmatch(r"result\d+\.npy", n))
    if not names:
        print("compare: no resultN.npy in %s" % want_dir, file=sys.stderr)
        return 1
    bad = 0
    for n in names:
        w = load_npy(os.path.join(want_dir, n))
        g = load_npy(os.path.join(got_dir, n))
        if w.dtype != g.dtype or w.shape != g.shape:
            print("%s: %s vs %s: FAIL" % (n, type_str(w), type_str(g)))
            bad += 1
            continue
        if w.dtype.kind == "f" or w.dtype == BF16:
            wf, gf = w.astype(np.float64), g.astype(np.float64)
            same_special = np.array_equal(np.isnan(wf), np.isnan(gf)) and np.array_equal(wf[np.isinf(wf)], gf[np.isinf(wf)])
            fin = np.isfinite(wf) & np.isfinite(gf)
            scale = float(np.max(np.abs(wf[fin]))) if fin.any() else 0.0
            err = float(np.max(np.abs(wf[fin] - gf[fin]))) if fin.any() else 0.0
            rel = err / scale if scale > 0 else err
            ok = same_special and rel <= rtol
            print("%s: %s, max |difference| %.3g, relative to max |value| %.3g: %.2e (tolerance %.0e): %s"
                  % (n, type_str(w), err, scale, rel, rtol, "ok" if ok else "FAIL"))
        else:
            ok = np.array_equal(w, g)
            print("%s: %s, %s" % (n, type_str(w), "equal: ok" if ok else "differ: FAIL"))
        bad += 0 if ok else 1
    return 1 if bad else 0


def main(argv):
    p = argparse.ArgumentParser(prog="xlacheck.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run every case of a manifest")
    r.add_argument("manifest")
    o = sub.add_parser("run-one", help="run one module, for reproducing a failure")
    o.add_argument("module")
    o.add_argument("--input", action="append", default=[], help="an input .npy, once per argument, in order")
    o.add_argument("--outdir", required=True)
    t = sub.add_parser("time", help="time one module on XLA:CPU (median of --repeat runs after a warm-up)")
    t.add_argument("module")
    t.add_argument("--input", action="append", default=[], help="an input .npy, once per argument, in order")
    t.add_argument("--repeat", type=int, default=5)
    c = sub.add_parser("compare", help="compare resultN.npy of two directories")
    c.add_argument("want_dir")
    c.add_argument("got_dir")
    c.add_argument("--rtol", type=float, default=1e-4)
    args = p.parse_args(argv)
    if args.cmd == "run":
        return cmd_run(args.manifest)
    if args.cmd == "time":
        return cmd_time(args.module, args.input, args.repeat)
    if args.cmd == "compare":
        return cmd_compare(args.want_dir, args.got_dir, args.rtol)
    return cmd_run_one(args.module, args.input, args.outdir)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
