#!/usr/bin/env python3
"""export: write JAX functions as StableHLO with inputs and JAX's own results.

For each function below, writes testdata/jax/NAME/model.mlir (the text of
jax.jit(f).lower(*args).as_text(debug_info=True): locations, result attributes
and all), argN.npy (the inputs, from a fixed seed) and resultN.npy (what JAX
computed on the CPU). cmd/tpucc's TestMlirJAX runs each model.mlir through
`tpucc run` and compares. bf16 is computed inside the functions but their
inputs and results are f32, since numpy writes bfloat16 as an opaque '<V2'.

Usage (the pinned jax of .venv):
  .venv/bin/python tools/jaxexport/export.py [OUTDIR]   (default testdata/jax)
"""
import os
import sys

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

rng = np.random.default_rng(33)
HERE = os.path.dirname(os.path.abspath(__file__))


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def i32(lo, hi, *shape):
    return rng.integers(lo, hi, shape).astype(np.int32)


def mlp(x, w1, b1, w2, b2):
    return jax.nn.relu(x @ w1 + b1) @ w2 + b2


def attention(q, k, v):
    s = jnp.einsum("bqd,bkd->bqk", q, k) / jnp.sqrt(q.shape[-1]).astype(q.dtype)
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, axis=-1), v)


def layer_norm(x, g, b):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean((x - m) ** 2, axis=-1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5) * g + b


def rms_norm(x, g):
    return x * lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g


def int_arith(a, b):
    return (a * b + a // 3 - b % 5, jnp.maximum(a, b) & 0xFF, jnp.abs(a) ^ b, jnp.minimum(a, -b) | 3,
            jnp.sum(a, axis=0), jnp.max(b, axis=1))


def bf16_matmul(x, w):
    y = jnp.dot(x.astype(jnp.bfloat16), w.astype(jnp.bfloat16), preferred_element_type=jnp.float32)
    z = (x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)).astype(jnp.float32)
    return y, z


def cumsum(x, n):
    return jnp.cumsum(x, axis=1), jnp.cumsum(n, axis=0)


def take(x, i):
    return x[i], jnp.take(x, i, axis=1), x[2]


def scatter_add(x, i, u):
    return x.at[i].add(u)


def activations(x):
    return jax.nn.gelu(x, approximate=True), jax.scipy.special.erf(x), jax.nn.silu(x), jax.nn.sigmoid(x), jnp.tanh(x)


def logsumexp(x):
    return jax.scipy.special.logsumexp(x, axis=-1), jax.nn.log_softmax(x, axis=0)


def where_clip(x, y):
    return jnp.where(x > y, x, y * 2), jnp.clip(x, -0.5, 0.5), jnp.isfinite(x / y)


def shapes(x):
    return (jnp.concatenate([x, x * 2], axis=1), jnp.pad(x, ((1, 0), (0, 2))), x.T, x.reshape(4, 6)[:, 1:5:2],
            jnp.broadcast_to(x[:, :1], (3, 8)))


def dynamic(x, i, u):
    return lax.dynamic_slice(x, (i, 1), (2, 3)), lax.dynamic_update_slice(x, u, (i, i))


def iota_onehot(i):
    return jax.nn.one_hot(i, 6), jnp.arange(10, dtype=jnp.float32) * 0.5


def top_k(x):
    return lax.top_k(x, 3)


def argmax(x, n):
    return jnp.argmax(x, axis=1), jnp.argmin(x, axis=0), jnp.argmax(n, axis=0), jnp.argmin(n, axis=1)


def sort(x, y):
    return jnp.sort(x), jnp.argsort(x), jnp.argsort(y, axis=1), jnp.argsort(y, axis=0)


def specials():
    # -0 and +0, NaNs of both signs, infinities and ties: where sort orders differ.
    return np.array([3, -0.0, 0.0, np.nan, -1, np.inf, -np.inf, 3, -np.nan, 0.0], np.float32)


def shift(a):
    return jnp.left_shift(a, 3)


def bits(a, n, x):
    return (lax.population_count(a), lax.clz(a), lax.shift_right_logical(a, n), lax.shift_right_arithmetic(a, n),
            jnp.tan(x * 0.5), lax.round(x * 3, lax.RoundingMethod.AWAY_FROM_ZERO),
            lax.reduce_precision(x, exponent_bits=5, mantissa_bits=2), lax.bitcast_convert_type(x, jnp.int16))


def gather2d(x, r, c, u):
    # Two index arrays: StableHLO's general gather and scatter.
    return x[r, c], x[r, 1:4], x.at[r, c].add(u)


def sort_by_key(k, v):
    return lax.sort((k, v), dimension=0, num_keys=1)


def trisolve(a, b):
    # bf16: jax writes stablehlo.triangular_solve (f32 on the CPU becomes a LAPACK custom call).
    a = (jnp.tril(a) * 0.2 + 2 * jnp.eye(4)).astype(jnp.bfloat16)
    x = lax.linalg.triangular_solve(a, b.astype(jnp.bfloat16), left_side=True, lower=True, transpose_a=True)
    return x.astype(jnp.float32)


def fori(x, w):
    # w is read from the enclosing scope: StableHLO's implicit capture.
    return lax.fori_loop(0, 5, lambda i, h: jnp.tanh(h @ w) + i.astype(jnp.float32), x)


def while_count(x):
    # The trip count depends on the data: halve until the sum of squares is at most 1.
    def cond(c):
        return (c[1] > 1.0) & (c[0] < 100)

    def body(c):
        return c[0] + 1, c[1] * 0.25, c[2] * 0.5

    return lax.while_loop(cond, body, (jnp.int32(0), jnp.sum(x * x), x))


def rnn(xs, h0, wx, wh, b):
    def step(h, x):
        h = jnp.tanh(x @ wx + h @ wh + b)
        return h, jnp.sum(h, axis=-1)

    return lax.scan(step, h0, xs)


def cond(x, y):
    pos = lax.cond(jnp.sum(x) > 0, lambda v: jnp.sin(v) * y, lambda v: jnp.cos(v) - y, x)
    neg = lax.cond(jnp.sum(x) < 0, lambda v: jnp.sin(v) * y, lambda v: jnp.cos(v) - y, x)
    return pos, neg


def switch(k, x, y):
    branches = [lambda v: v * y, lambda v: jnp.exp(v), lambda v: v - jnp.max(y)]
    # switch clamps its index: k+6 runs the last branch, k-4 the first.
    return lax.switch(k, branches, x), lax.switch(k + 6, branches, x), lax.switch(k - 4, branches, x)


def convnet(x, w1, b1, w2):
    """A small conv net with pooling (NHWC): a 3x3 conv, relu, 2x2 max pool, a
    grouped 3x3 conv with stride 2, average pool; and the gradient of a loss
    with respect to both kernels (conv transposes, max pooling's
    select_and_scatter)."""
    def net(w1, w2):
        y = lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")) + b1
        y = jax.nn.relu(y)
        y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        z = lax.conv_general_dilated(y, w2, (2, 2), ((1, 1), (1, 1)), dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                     feature_group_count=2)
        return lax.reduce_window(z, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "VALID") / 4.0
    out = net(w1, w2)
    loss, grads = jax.value_and_grad(lambda a, b: jnp.sum(net(a, b) ** 2), argnums=(0, 1))(w1, w2)
    return out, loss, grads[0], grads[1]


FUNCS = [
    ("mlp", mlp, lambda: (f32(4, 8), f32(8, 16), f32(16), f32(16, 3), f32(3))),
    ("attention", attention, lambda: (f32(2, 5, 8), f32(2, 7, 8), f32(2, 7, 8))),
    ("layer_norm", layer_norm, lambda: (f32(3, 16), f32(16), f32(16))),
    ("rms_norm", rms_norm, lambda: (f32(3, 16), f32(16))),
    ("int_arith", int_arith, lambda: (i32(-100, 100, 4, 5), i32(-100, 100, 4, 5))),
    ("bf16_matmul", bf16_matmul, lambda: (f32(4, 32), f32(32, 8))),
    ("cumsum", cumsum, lambda: (f32(3, 7), i32(-9, 9, 6))),
    ("take", take, lambda: (f32(5, 4), i32(-5, 5, 3))),
    ("scatter_add", scatter_add, lambda: (f32(6, 3), i32(0, 6, 4), f32(4, 3))),
    ("activations", activations, lambda: (f32(2, 9),)),
    ("logsumexp", logsumexp, lambda: (f32(4, 6),)),
    ("where_clip", where_clip, lambda: (f32(3, 4), f32(3, 4))),
    ("shapes", shapes, lambda: (f32(3, 8),)),
    ("dynamic", dynamic, lambda: (f32(5, 6), np.int32(2), f32(2, 2))),
    ("iota_onehot", iota_onehot, lambda: (i32(0, 6, 5),)),
    ("top_k", top_k, lambda: (f32(3, 10),)),
    ("argmax", argmax, lambda: (f32(4, 6), i32(-5, 5, 3, 4))),
    ("sort", sort, lambda: (specials(), specials().reshape(2, 5))),
    ("shift", shift, lambda: (i32(-9, 9, 4),)),
    ("fori", fori, lambda: (f32(2, 4), f32(4, 4) * 0.5)),
    ("while_count", while_count, lambda: (f32(3, 4) * 4,)),
    ("rnn", rnn, lambda: (f32(6, 2, 4), f32(2, 8), f32(4, 8) * 0.5, f32(8, 8) * 0.3, f32(8))),
    ("cond", cond, lambda: (f32(3, 4), f32(3, 4))),
    ("switch", switch, lambda: (np.int32(1), f32(5), f32(5))),
    ("convnet", convnet, lambda: (f32(2, 8, 8, 3), f32(3, 3, 3, 4) * 0.3, f32(4), f32(3, 3, 2, 6) * 0.3)),
    ("bits", bits, lambda: (i32(-1000, 1000, 8), i32(-3, 40, 8), f32(8))),
    ("gather2d", gather2d, lambda: (f32(5, 6), i32(-5, 5, 4), i32(0, 6, 4), f32(4))),
    ("sort_by_key", sort_by_key, lambda: (i32(-3, 3, 5, 3), f32(5, 3))),
    ("trisolve", trisolve, lambda: (f32(4, 4), f32(4, 3))),
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "jax")
    for name, f, make in FUNCS:
        args = [np.asarray(a) for a in make()]
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        lowered = jax.jit(f).lower(*args)
        # Locations name this script by its own name, not by where it was checked out.
        text = lowered.as_text(debug_info=True).replace(HERE + os.sep, "")
        with open(os.path.join(d, "model.mlir"), "w") as fh:
            fh.write(text)
        results = jax.tree_util.tree_leaves(jax.jit(f)(*args))
        for i, a in enumerate(args):
            np.save(os.path.join(d, "arg%d.npy" % i), a)
        for i, r in enumerate(results):
            np.save(os.path.join(d, "result%d.npy" % i), np.asarray(r))
        print(name, len(args), "inputs", len(results), "results")


# Defined after main so that the locations of the exports above stay as
# they were when they were exported.
def complex_ops(z, x):
    # complex64 throughout: constants, exp, abs/real/imag, conj (a complex of
    # real and -imag), sqrt, a sum and a product with no conjugation.
    w = z * jnp.exp(1j * x) + jnp.array([1 + 2j, 0.5j, -1, 2], dtype=jnp.complex64)
    return jnp.abs(w), jnp.conj(w) * w, jnp.real(jnp.sqrt(w)), jnp.sum(w * w), jnp.dot(w, z)


def c64(*shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


FUNCS.append(("complex", complex_ops, lambda: (c64(4), f32(4))))


def sort_exported(x, m, k1, k2, f):
    # jax.export's module (not as_text's): it hoists the comparators'
    # constants out of their regions, so the regions read outer values.
    return (jnp.argsort(x), lax.top_k(x, 3), jnp.sort(x), jnp.lexsort((k1, k2)), jnp.sort(m, axis=1),
            jnp.argsort(m, axis=0), jnp.lexsort((f, k2)), lax.sort((k2, f), num_keys=2))


def exported_text(f, args):
    from jax import export
    return export.export(jax.jit(f))(*[jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]).mlir_module()


# Written by main_exported: through jax.export rather than as_text.
EXPORTED = [
    ("sort_exported", sort_exported, lambda: (
        np.array([3, -0.0, 0.0, np.nan, -1, np.inf, -np.nan, 0.0], np.float32), f32(3, 5),
        i32(0, 3, 10), i32(0, 3, 10), np.array([1, -0.0, 0.0, np.nan, 2, 1, 0.0, -np.nan, 2, -1], np.float32))),
]


def main_exported():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "jax")
    for name, f, make in EXPORTED:
        args = [np.asarray(a) for a in make()]
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        text = exported_text(f, args).replace(HERE + os.sep, "")
        with open(os.path.join(d, "model.mlir"), "w") as fh:
            fh.write(text)
        results = jax.tree_util.tree_leaves(jax.jit(f)(*args))
        for i, a in enumerate(args):
            np.save(os.path.join(d, "arg%d.npy" % i), a)
        for i, r in enumerate(results):
            np.save(os.path.join(d, "result%d.npy" % i), np.asarray(r))
        print(name, len(args), "inputs", len(results), "results")


def random_bits(key):
    # lax.rng_bit_generator under each algorithm, chained through its new
    # state, and uniform floats made from the bits as jax.random does.
    s1, a = lax.rng_bit_generator(key, (3, 5), jnp.uint32, algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
    s2, b = lax.rng_bit_generator(s1, (7,), jnp.uint16, algorithm=lax.RandomAlgorithm.RNG_PHILOX)
    s3, c = lax.rng_bit_generator(s2, (2, 4), jnp.uint8, algorithm=lax.RandomAlgorithm.RNG_DEFAULT)
    u = lax.bitcast_convert_type((a >> 9) | jnp.uint32(0x3F800000), jnp.float32) - 1
    return s3, a, b, c, u


# The key is fixed rather than drawn, so that the draws of the exports
# above stay as they were.
FUNCS.append(("random_bits", random_bits, lambda: (np.array([0x89ABCDEF, 0x01234567, 0xFFFFFFFE, 0xFFFFFFFF], np.uint32),)))


def write(d, text, args, results):
    """Writes one export: d/model.mlir (text, with this directory's paths
    made relative), d/argN.npy and d/resultN.npy. loops.py's exports use it."""
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.mlir"), "w") as fh:
        fh.write(text.replace(HERE + os.sep, ""))
    for i, a in enumerate(args):
        np.save(os.path.join(d, "arg%d.npy" % i), a)
    for i, r in enumerate(results):
        np.save(os.path.join(d, "result%d.npy" % i), np.asarray(r))


if __name__ == "__main__":
    main()
    main_exported()
