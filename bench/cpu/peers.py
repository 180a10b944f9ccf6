#!/usr/bin/env python3
"""bench/cpu's Python peers, run from .venv-bench (make bench-cpu creates it).

  peers.py ort KIND --input a.npy ... [--repeat N] [--threads T] [--out y.npy]
      Builds the workload KIND (mlp, block, chain, layernorm, matmul) as an ONNX model with
      the onnx package, exactly as bench/cpu writes it for tpucc, runs it with ONNX Runtime
      (all graph optimisations, T intra-op threads) on the inputs, once to warm up and then
      N times, and prints {"median_s": ...}. --out saves the result for comparison.
  peers.py sgemm N [--repeat R]
      numpy's float32 matmul of two NxN matrices (OpenBLAS sgemm): {"median_s": ...}.
  peers.py gemm M K N [--rhs-t] [--repeat R]
      numpy's float32 matmul of M x K by K x N (with --rhs-t, by the transpose of an N x K
      matrix: a Hugging Face weight): {"median_s": ...}.

MKL, the other sgemm peer, is torch's and runs from .venv-hf: bench/cpu/mkl.py.
"""

import argparse
import json
import math
import statistics
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT


class Graph:
    """A small builder: every value is a name; constants become initializers."""

    def __init__(self, inputs):
        self.nodes, self.inits, self.n = [], [], 0
        self.inputs = [helper.make_tensor_value_info(name, F32, list(a.shape)) for name, a in inputs]

    def fresh(self):
        self.n += 1
        return "v%d" % self.n

    def op(self, kind, *args, **attrs):
        out = self.fresh()
        self.nodes.append(helper.make_node(kind, list(args), [out], **attrs))
        return out

    def const(self, value, dtype=np.float32):
        name = self.fresh()
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def model(self, out):
        graph = helper.make_graph(self.nodes, "bench", self.inputs,
                                  [helper.make_tensor_value_info(out, F32, None)], self.inits)
        # IR version 10 with opset 18: what this ONNX Runtime reads (onnx writes a newer IR by default).
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)


def rms_norm(g, x, scale, eps):
    """x / sqrt(mean(x^2) + eps) * scale over the last axis, as tpucc's rms_norm."""
    ms = g.op("ReduceMean", g.op("Mul", x, x), g.const([-1], np.int64), keepdims=1)
    return g.op("Mul", g.op("Div", x, g.op("Sqrt", g.op("Add", ms, g.const(eps)))), scale)


def rotary(t, hd):
    """cos and sin [t, hd/2], computed in f32 as examples/go/models.Rotary does."""
    pos = np.broadcast_to(np.arange(t, dtype=np.float32)[:, None], (t, hd // 2))
    idx = np.broadcast_to(np.arange(hd // 2, dtype=np.float32)[None, :], (t, hd // 2))
    inv = np.exp(idx * np.float32(-2 * math.log(10000) / hd)).astype(np.float32)
    ang = (pos * inv).astype(np.float32)
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def rope(g, x, cos, sin, hd):
    a, b = g.fresh(), g.fresh()
    g.nodes.append(helper.make_node("Split", [x, g.const([hd // 2, hd // 2], np.int64)], [a, b], axis=-1))
    first = g.op("Sub", g.op("Mul", a, cos), g.op("Mul", b, sin))
    second = g.op("Add", g.op("Mul", b, cos), g.op("Mul", a, sin))
    return g.op("Concat", first, second, axis=-1)


def block(inputs, heads=4, eps=1e-6):
    """bench/block's decoder block with 4 heads on x [batch, tokens, width]."""
    names = ["x", "attn_norm", "wq", "wk", "wv", "wo", "q_norm", "k_norm", "mlp_norm", "w_gate", "w_up", "w_down"]
    g = Graph(list(zip(names, inputs)))
    b, t, d = inputs[0].shape
    hd = d // heads
    h = rms_norm(g, "x", "attn_norm", eps)
    split = g.const([b, t, heads, hd], np.int64)

    def project(w):
        return g.op("Transpose", g.op("Reshape", g.op("MatMul", h, w), split), perm=[0, 2, 1, 3])

    cos, sin = rotary(t, hd)
    cos, sin = g.const(cos), g.const(sin)
    q = rope(g, rms_norm(g, project("wq"), "q_norm", eps), cos, sin, hd)
    k = rope(g, rms_norm(g, project("wk"), "k_norm", eps), cos, sin, hd)
    v = project("wv")
    scores = g.op("Mul", g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2])), g.const(1 / math.sqrt(hd)))
    visible = g.const(np.tril(np.ones((t, t), dtype=bool)), np.bool_)
    probs = g.op("Softmax", g.op("Where", visible, scores, g.const(-np.inf)), axis=-1)
    ctx = g.op("Reshape", g.op("Transpose", g.op("MatMul", probs, v), perm=[0, 2, 1, 3]), g.const([b, t, d], np.int64))
    x1 = g.op("Add", "x", g.op("MatMul", ctx, "wo"))
    h2 = rms_norm(g, x1, "mlp_norm", eps)
    gate = g.op("MatMul", h2, "w_gate")
    gu = g.op("Mul", g.op("Mul", gate, g.op("Sigmoid", gate)), g.op("MatMul", h2, "w_up"))
    return g.model(g.op("Add", x1, g.op("MatMul", gu, "w_down")))


def mlp(inputs):
    g = Graph(list(zip(["x", "w1", "b1", "w2"], inputs)))
    return g.model(g.op("MatMul", g.op("Relu", g.op("Add", g.op("MatMul", "x", "w1"), "b1")), "w2"))


def chain(inputs):
    g = Graph(list(zip(["x", "bias", "res"], inputs)))
    return g.model(g.op("Add", g.op("Add", g.op("Mul", "x", g.op("Sigmoid", "x")), "bias"), "res"))


def layernorm(inputs):
    g = Graph(list(zip(["x", "scale", "bias"], inputs)))
    return g.model(g.op("LayerNormalization", "x", "scale", "bias", axis=-1, epsilon=1e-5))


def matmul(inputs):
    g = Graph(list(zip(["a", "b"], inputs)))
    return g.model(g.op("MatMul", "a", "b"))


BUILDERS = {"mlp": mlp, "block": block, "chain": chain, "layernorm": layernorm, "matmul": matmul}


def timed(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cmd_ort(args):
    import onnxruntime as ort

    inputs = [np.load(p) for p in args.input]
    model = BUILDERS[args.kind](inputs)
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    feed = {i.name: a for i, a in zip(sess.get_inputs(), inputs)}
    out = []
    med = timed(lambda: out.append(sess.run(None, feed)[0]), args.repeat)
    if args.out:
        np.save(args.out, out[-1])
    print(json.dumps({"median_s": med}))


def cmd_sgemm(args):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((args.n, args.n), dtype=np.float32)
    b = rng.standard_normal((args.n, args.n), dtype=np.float32)
    print(json.dumps({"median_s": timed(lambda: a @ b, args.repeat)}))


def cmd_gemm(args):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((args.m, args.k), dtype=np.float32)
    if args.rhs_t:
        w = rng.standard_normal((args.n, args.k), dtype=np.float32)
        fn = lambda: a @ w.T  # noqa: E731  (sgemm with the rhs transposed)
    else:
        b = rng.standard_normal((args.k, args.n), dtype=np.float32)
        fn = lambda: a @ b  # noqa: E731
    print(json.dumps({"median_s": timed(fn, args.repeat)}))


def main(argv):
    p = argparse.ArgumentParser(prog="peers.py")
    sub = p.add_subparsers(dest="cmd", required=True)
    o = sub.add_parser("ort")
    o.add_argument("kind", choices=sorted(BUILDERS))
    o.add_argument("--input", action="append", default=[])
    o.add_argument("--repeat", type=int, default=5)
    o.add_argument("--threads", type=int, default=2)
    o.add_argument("--out")
    s = sub.add_parser("sgemm")
    s.add_argument("n", type=int)
    s.add_argument("--repeat", type=int, default=5)
    m = sub.add_parser("gemm")
    for d in "mkn":
        m.add_argument(d, type=int)
    m.add_argument("--rhs-t", action="store_true")
    m.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    {"ort": cmd_ort, "sgemm": cmd_sgemm, "gemm": cmd_gemm}[args.cmd](args)


if __name__ == "__main__":
    main(sys.argv[1:])
