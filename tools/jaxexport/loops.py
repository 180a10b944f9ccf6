#!/usr/bin/env python3
"""loops: JAX's control flow as users write it, exported as export.py does.

Each function below is written to testdata/jax/NAME (model.mlir, argN.npy,
resultN.npy) like export.py's: gradients of scans and fori loops (the
reverse loops with stacked residuals JAX emits), checkpointed scans, nested
scans, scans of mixed-dtype carries, reversed and unrolled scans, while
loops with tuple state, vmapped loops (a while whose condition reduces over
the batch), lax.map, associative_scan, cumsum/cumprod, and a small
transformer whose layers are a scan over stacked weights, with its gradient
and one AdamW step. cmd/tpucc's TestMlirJAX runs them all.

Usage (the pinned jax of .venv):
  .venv/bin/python tools/jaxexport/loops.py [OUTDIR [NAME...]]   (default testdata/jax, all)
"""
import os
import sys
import zlib

import numpy as np

from export import f32, i32, rng, write  # export.py's (it sets JAX_PLATFORMS=cpu before jax loads)
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402


def rnn_loss(h0, xs, wx, wh):
    def step(h, x):
        h = jnp.tanh(x @ wx + h @ wh)
        return h, jnp.sum(h * h)
    h, ys = lax.scan(step, h0, xs)
    return jnp.sum(h) + jnp.sum(ys)


def scan_grad(h0, xs, wx, wh):
    # The reverse scan JAX writes for the backward pass, its residuals stacked
    # by the forward loop with dynamic_update_slice.
    loss, g = jax.value_and_grad(rnn_loss, argnums=(0, 2, 3))(h0, xs, wx, wh)
    return (loss,) + g


def scan_vjp(h0, xs):
    def f(h0, xs):
        return lax.scan(lambda h, x: (jnp.sin(h) * x, h * 2), h0, xs)
    out, pull = jax.vjp(f, h0, xs)
    return out + pull(out)


def fori_grad(x, w):
    def loss(x, w):
        return jnp.sum(lax.fori_loop(0, 4, lambda i, h: jnp.tanh(h @ w) * (i + 1).astype(jnp.float32), x) ** 2)
    return jax.grad(loss, argnums=(0, 1))(x, w)


def remat_scan_grad(h0, xs, w):
    def body(h, x):
        return jnp.tanh(h @ w + x), None

    def loss(h0, w, policy):
        f = jax.checkpoint(body, policy=policy) if policy is not False else jax.checkpoint(body)
        h, _ = lax.scan(f, h0, xs)
        return jnp.sum(h ** 2)
    g1 = jax.grad(lambda a, b: loss(a, b, False), argnums=(0, 1))(h0, w)
    g2 = jax.grad(lambda a, b: loss(a, b, jax.checkpoint_policies.dots_saveable), argnums=(0, 1))(h0, w)
    g3 = jax.grad(lambda a, b: loss(a, b, jax.checkpoint_policies.nothing_saveable), argnums=(0, 1))(h0, w)
    return g1 + g2 + g3


def nested_scan(xs, w):
    def outer(c, row):
        def inner(d, x):
            d = d * 0.5 + jnp.sin(x * w)
            return d, d.sum()
        d, ys = lax.scan(inner, c, row)
        return d + 1, ys
    return lax.scan(outer, jnp.zeros(w.shape, jnp.float32), xs)


def mixed_carry(xs):
    def step(c, x):
        a, b, n, flag = c
        a = a + x
        b = (b.astype(jnp.float32) * 0.5 + x).astype(jnp.bfloat16)
        n = n + (x.sum() > 0).astype(jnp.int32)
        flag = jnp.logical_xor(flag, x[0] > 0)
        return (a, b, n, flag), (a * 2, n)
    init = (jnp.zeros(3, jnp.float32), jnp.ones(3, jnp.bfloat16), jnp.int32(0), jnp.bool_(False))
    (a, b, n, flag), (ys, ns) = lax.scan(step, init, xs)
    return a, b.astype(jnp.float32), n, flag, ys, ns


def scan_variants(xs, h):
    f = lambda c, x: (c * 0.9 + x, c.sum())  # noqa: E731
    r = lax.scan(f, h, xs, reverse=True)
    u2 = lax.scan(f, h, xs, unroll=2)
    ut = lax.scan(f, h, xs, unroll=True)
    ln = lax.scan(lambda c, _: (c * 1.5 - 1, c), h, None, length=4)
    tree = lax.scan(lambda c, x: (c + x["a"] * x["b"][0], None), h, {"a": xs, "b": (xs * 2,)})
    return r, u2, ut, ln, tree


def while_tuple(x, limit):
    def cond(s):
        i, v, acc = s
        return (jnp.sum(acc) < limit) & (i < 50)

    def body(s):
        i, v, acc = s
        return i + 1, v * 1.1, acc + jnp.abs(v)
    return lax.while_loop(cond, body, (jnp.int32(0), x, jnp.zeros_like(x)))


def while_in_cond_in_scan(xs):
    def step(c, x):
        def grow(v):
            return lax.while_loop(lambda s: s[0] < 10.0, lambda s: (s[0] * 2 + 1, s[1] + 1), (v, jnp.int32(0)))
        v, n = lax.cond(x > 0, grow, lambda v: (v - 1, jnp.int32(-1)), c + x)
        return v * 0.1, n
    return lax.scan(step, jnp.float32(0.5), xs)


def switch_clamp(k, x):
    bs = [lambda v: v + 1, lambda v: v * v, lambda v: -v]
    return lax.switch(k, bs, x), lax.switch(k * 7 - 3, bs, x)


def cond_dtypes(p, x, n, b):
    def t(x, n, b):
        return x * 2, n + 1, jnp.logical_not(b), (x * 3).astype(jnp.bfloat16)

    def f(x, n, b):
        return x - 1, n * 3, b, x.astype(jnp.bfloat16)
    a, c, d, e = lax.cond(p > 0, t, f, x, n, b)
    a2, c2, d2, e2 = lax.cond(p < 0, t, f, x, n, b)
    return a, c, d, e.astype(jnp.float32), a2, c2, d2, e2.astype(jnp.float32)


def map_fn(xs):
    return lax.map(lambda x: jnp.sum(jnp.sin(x) * x), xs)


def vmap_scan(xs, h):
    f = lambda h, xs: lax.scan(lambda c, x: (jnp.tanh(c + x), c), h, xs)  # noqa: E731
    return jax.vmap(f)(h, xs)


def vmap_while(x):
    def f(v):
        return lax.while_loop(lambda s: s[0] < 20.0, lambda s: (s[0] * 1.7 + 0.5, s[1] + 1), (v, jnp.int32(0)))
    return jax.vmap(f)(x)


def assoc_scan(x):
    return lax.associative_scan(jnp.add, x), lax.associative_scan(jnp.maximum, x, reverse=True), \
        lax.associative_scan(lambda a, b: (a[0] * b[0], a[1] * b[0] + b[1]), (x, x * 0.5))


def cum(x, n):
    return jnp.cumsum(x, axis=0), jnp.cumprod(x, axis=1), lax.cumsum(n, axis=1, reverse=True), \
        jnp.cumprod(n, axis=0), lax.cummax(x, axis=1), lax.cummin(x, axis=0), jax.nn.logsumexp(x)


D, H, F, L, T = 8, 2, 16, 3, 5


def block(x, p):
    def ln(x, g):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) * lax.rsqrt(v + 1e-5) * g
    h = ln(x, p["g1"])
    q, k, v = (h @ p["wq"]).reshape(T, H, D // H), (h @ p["wk"]).reshape(T, H, D // H), (h @ p["wv"]).reshape(T, H, D // H)
    s = jnp.einsum("thd,shd->hts", q, k) / np.sqrt(D // H)
    s = jnp.where(jnp.tril(jnp.ones((T, T), bool)), s, -1e9)
    a = jnp.einsum("hts,shd->thd", jax.nn.softmax(s, -1), v).reshape(T, D)
    x = x + a @ p["wo"]
    return x + jax.nn.gelu(ln(x, p["g2"]) @ p["w1"]) @ p["w2"]


def transformer(params, x):
    # The layers as one scan over stacked weights, as flax's nn.scan writes them.
    y, _ = lax.scan(lambda x, p: (block(x, p), None), x, params)
    return jnp.sum(y ** 2) / y.size


def tparams():
    s = 0.3
    return {"g1": 1 + 0.1 * f32(L, D), "g2": 1 + 0.1 * f32(L, D), "wq": s * f32(L, D, D), "wk": s * f32(L, D, D),
            "wv": s * f32(L, D, D), "wo": s * f32(L, D, D), "w1": s * f32(L, D, F), "w2": s * f32(L, F, D)}


def transformer_fwd(params, x):
    return transformer(params, x)


def transformer_grad(params, x):
    return jax.value_and_grad(transformer)(params, x)


def adamw_step(params, m, v, x, step):
    loss, g = jax.value_and_grad(transformer)(params, x)
    b1, b2, lr, wd, eps = 0.9, 0.999, 1e-2, 0.01, 1e-8
    t = step + 1
    m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
    v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
    c1 = 1 - b1 ** t.astype(jnp.float32)
    c2 = 1 - b2 ** t.astype(jnp.float32)
    params = jax.tree_util.tree_map(lambda p, m, v: p - lr * ((m / c1) / (jnp.sqrt(v / c2) + eps) + wd * p), params, m, v)
    return loss, params, m, v, t


def zero_len_scan(h, xs):
    return lax.scan(lambda c, x: (c + x, c * 2), h, xs)


def fori_traced(x, n):
    return lax.fori_loop(0, n, lambda i, h: h * 0.9 + jnp.sin(i.astype(jnp.float32)), x), \
        lax.fori_loop(n, 2 * n + 1, lambda i, h: h + i, jnp.int32(0))


def fori_unroll(x):
    return lax.fori_loop(0, 6, lambda i, h: h * 0.9 + i, x, unroll=3)


def dropout_scan(key, xs, w):
    key = jax.random.wrap_key_data(key)
    def step(c, x):
        h, k = c
        k, sub = jax.random.split(k)
        keep = jax.random.bernoulli(sub, 0.7, h.shape)
        h = jnp.where(keep, jnp.tanh(h @ w + x) / 0.7, 0)
        return (h, k), jax.random.uniform(sub, (2,))
    (h, k), ys = lax.scan(step, (jnp.zeros(4), key), xs)
    return h, jax.random.key_data(k), ys


def gamma_poisson(key):
    k1, k2 = jax.random.split(jax.random.wrap_key_data(key))
    return jax.random.gamma(k1, jnp.array([0.5, 1.0, 3.0])), jax.random.poisson(k2, jnp.array([0.5, 4.0, 30.0]))


def remat_top(x, w):
    f = jax.checkpoint(lambda x: jnp.sin(x @ w) @ w)
    return jax.grad(lambda x: jnp.sum(f(x) ** 2))(x)


def searchsorted(a, v):
    return jnp.searchsorted(a, v), jnp.searchsorted(a, v, side="right"), jnp.polyval(a[:4], v)


@jax.custom_vjp
def clip_grad(x):
    return x
clip_grad.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -0.1, 0.1),))


def custom_vjp_scan(h, xs):
    def loss(h):
        y, _ = lax.scan(lambda c, x: (clip_grad(jnp.sin(c * x)), None), h, xs)
        return jnp.sum(y * 3)
    return jax.grad(loss)(h)


def narrow_carries(xs):
    def step(c, x):
        a, b, u, s = c
        return (a + x.astype(jnp.int8), (b * 0.5 + x).astype(jnp.float16), u * 3 + 1, s + x.astype(jnp.uint8)), a
    (a, b, u, s), ys = lax.scan(step, (jnp.int8(1), jnp.float16(0), jnp.uint32(7), jnp.uint8(250)), xs)
    return a, b.astype(jnp.float32), u, s, ys


def while_capture(x, w):
    return lax.while_loop(lambda s: jnp.sum(s * w) < 30, lambda s: s * 1.5 + w, x)


def jit_in_scan(h, xs):
    @jax.jit
    def inner(a, b):
        return jnp.tanh(a * b + 1)
    return lax.scan(lambda c, x: (inner(c, x), inner(x, c).sum()), h, xs)


def embed_loop(table, ids):
    def step(c, i):
        row = lax.dynamic_index_in_dim(table, i, keepdims=False)
        return c + row, table[i] * 2
    return lax.scan(step, jnp.zeros(table.shape[1]), ids)


def greedy_decode(emb, w, start):
    V, D = emb.shape
    def cond(s):
        i, tok, out, done = s
        return (i < 6) & ~done
    def body(s):
        i, tok, out, done = s
        logits = jnp.tanh(emb[tok]) @ w
        nxt = jnp.argmax(logits).astype(jnp.int32)
        out = lax.dynamic_update_slice(out, nxt[None], (i,))
        return i + 1, nxt, out, nxt == 0
    return lax.while_loop(cond, body, (jnp.int32(0), start, jnp.full((6,), -1, jnp.int32), jnp.bool_(False)))


def vmap_cond_switch(k, x):
    f = lambda k, x: (lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x), lax.switch(k, [jnp.sin, jnp.cos, jnp.exp], x))
    return jax.vmap(f)(k, x)


def vmap_fori(x, n):
    return jax.vmap(lambda x, n: lax.fori_loop(0, n, lambda i, h: h * 1.1 + 1, x))(x, n)


def jac_scan(h, xs):
    f = lambda h: lax.scan(lambda c, x: (jnp.sin(c) * x, c.sum()), h, xs)[0]
    return jax.jacrev(f)(h), jax.jacfwd(f)(h), jax.hessian(lambda h: jnp.sum(f(h) ** 2))(h)


def jvp_while(x):
    f = lambda x: lax.while_loop(lambda s: s[1] < 5, lambda s: (jnp.sin(s[0]) * 1.3, s[1] + 1), (x, 0))[0]
    return jax.jvp(f, (x,), (jnp.ones_like(x),))


def grad_cond_switch(x, k):
    def loss(x):
        a = lax.cond(x.sum() > 0, lambda v: jnp.sin(v) * v, lambda v: jnp.exp(v), x)
        b = lax.switch(k, [lambda v: v * v, lambda v: jnp.tanh(v), lambda v: v ** 3], x)
        return jnp.sum(a * b)
    return jax.grad(loss)(x)


def sort_in_scan(xs):
    return lax.scan(lambda c, x: (c + jnp.sort(x), lax.top_k(x, 2)[1]), jnp.zeros(5), xs)


def cum_more(x, b):
    return jnp.cumsum(b, axis=0), jnp.cumsum(x.astype(jnp.bfloat16), axis=1).astype(jnp.float32), \
        lax.cumlogsumexp(x, axis=1), jnp.cumulative_sum(x, axis=0, include_initial=True)


def empty_state(x):
    return lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1], s[2] + 1), (0, jnp.zeros((0,)), x))


def langevin(key, x0):
    # jax.random.normal (chlo.erf_inv) inside a fori loop: the key is split each step.
    def step(i, c):
        x, k = c
        k, sub = jax.random.split(k)
        return x - 0.05 * x + 0.3 * jax.random.normal(sub, x.shape), k
    x, k = lax.fori_loop(0, 5, step, (x0, jax.random.wrap_key_data(key)))
    return x, jax.random.key_data(k), jax.random.truncated_normal(k, -1.0, 2.0, (4,))


def special(u, g):
    # erf_inv, lgamma, digamma (also lgamma's gradient) and nextafter at their edges (±1, ±0, poles, ±inf, NaN), in f32 and bf16.
    ub = u.astype(jnp.bfloat16)
    return (lax.erf_inv(u), lax.erf_inv(ub).astype(jnp.float32), lax.lgamma(g),
            lax.lgamma(g.astype(jnp.bfloat16)).astype(jnp.float32), jax.scipy.special.gammaln(g * 0.5 + 0.25),
            lax.nextafter(u, u[::-1]), lax.nextafter(u * 0, -u), lax.nextafter(ub, ub[::-1]).astype(jnp.float32),
            lax.digamma(g), lax.digamma(g.astype(jnp.bfloat16)).astype(jnp.float32),
            jax.grad(lambda a: jnp.sum(jnp.where(a > 0, lax.lgamma(a), 0.0)))(g))


def odeint_fn(y0, t, w):
    from jax.experimental.ode import odeint
    f = lambda y, t, w: jnp.tanh(w @ y) - 0.1 * y * t
    ys = odeint(f, y0, t, w, rtol=1e-6, atol=1e-6)
    g = jax.grad(lambda w: jnp.sum(odeint(f, y0, t, w, rtol=1e-6, atol=1e-6)[-1] ** 2))(w)
    return ys, g


def bfgs(x0, a):
    from jax.scipy.optimize import minimize
    f = lambda x: jnp.sum((a @ x - 1.0) ** 2) + 0.1 * jnp.sum(x ** 4)
    r = minimize(f, x0, method="BFGS")
    return r.x, r.fun, r.nit


def train_loop(params, x):
    def step(i, c):
        p, m, v = c
        loss, g = jax.value_and_grad(transformer)(p, x)
        gn = jnp.sqrt(sum(jnp.sum(a * a) for a in jax.tree_util.tree_leaves(g)))
        g = jax.tree_util.tree_map(lambda a: a * jnp.minimum(1.0, 1.0 / (gn + 1e-6)), g)
        m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: 0.99 * v + 0.01 * g * g, v, g)
        t = (i + 1).astype(jnp.float32)
        p = jax.tree_util.tree_map(lambda p, m, v: p - 1e-2 * (m / (1 - 0.9 ** t)) / (jnp.sqrt(v / (1 - 0.99 ** t)) + 1e-8), p, m, v)
        return p, m, v
    z = jax.tree_util.tree_map(jnp.zeros_like, params)
    p, _, _ = lax.fori_loop(0, 3, step, (params, z, z))
    return transformer(p, x), p["wq"]


def sample_decode(key, emb, w):
    key = jax.random.wrap_key_data(key)
    def body(c, k):
        tok, = c
        logits = jnp.tanh(emb[tok]) @ w
        # top-p: sort descending, cumsum, mask
        srt = jnp.sort(logits)[::-1]
        cum = jnp.cumsum(jax.nn.softmax(srt))
        cutoff = srt[jnp.argmax(cum > 0.8)]
        logits = jnp.where(logits < cutoff, -jnp.inf, logits)
        nxt = jax.random.categorical(k, logits).astype(jnp.int32)
        return (nxt,), nxt
    _, toks = lax.scan(body, (jnp.int32(1),), jax.random.split(key, 6))
    k2 = jax.random.fold_in(key, 3)
    return toks, jax.random.permutation(k2, 7), jax.random.choice(k2, 5, (4,), p=jnp.array([0.1, 0.2, 0.3, 0.2, 0.2])), \
        jnp.nonzero(toks > 1, size=4, fill_value=-1)[0]


def named_remat(h0, xs, w):
    from jax.ad_checkpoint import checkpoint_name
    def body(h, x):
        a = checkpoint_name(h @ w, "a")
        return jnp.tanh(a + x), None
    pol = jax.checkpoint_policies.save_only_these_names("a")
    loss = lambda h0, w: jnp.sum(lax.scan(jax.checkpoint(body, policy=pol), h0, xs)[0] ** 2)
    return jax.grad(loss, argnums=(0, 1))(h0, w)


def dpa(q, k, v):
    return jax.nn.dot_product_attention(q, k, v, is_causal=True)


def scan_in_cond_grad(x, p):
    def loss(x):
        f = lambda v: lax.scan(lambda c, _: (jnp.sin(c) * 1.1, c.sum()), v, None, length=3)
        a = lax.cond(p > 0, lambda v: f(v)[0], lambda v: v * 2, x)
        return jnp.sum(a ** 2)
    return jax.grad(loss)(x)


def sort_while(x):
    # Bubble passes until sorted: .at[:-1].set and .at[1:].max are scatters of one window.
    def cond(s):
        v, n = s
        return jnp.any(v[1:] < v[:-1]) & (n < 20)
    def body(s):
        v, n = s
        a, b = v[:-1], v[1:]
        lo, hi = jnp.minimum(a, b), jnp.maximum(a, b)
        v = v.at[:-1].set(lo).at[1:].max(hi)
        return v, n + 1
    return lax.while_loop(cond, body, (x, 0))


def scatter_loop(x, idx):
    # .at[i].set / .at[:, j].max / .at[i, j].multiply with a traced index in a
    # loop: scatters of one window, some indices out of range (dropped).
    def step(k, c):
        a, b = c
        i = idx[k]
        a = a.at[i].set(a[(i + 1) % 4] * 0.5 + k.astype(jnp.float32), mode="drop")
        a = a.at[:, i].max(jnp.sin(a[:, 0]), mode="drop")
        b = b.at[i, 2].multiply(1.5, mode="drop").at[i].add(1.0, mode="drop")
        return a, b
    return lax.fori_loop(0, idx.shape[0], step, (x, x * 2))


def segments(x, seg):
    # Scatters of several windows with add, max, min and multiply bodies.
    return jax.ops.segment_sum(x, seg, 4), jax.ops.segment_max(x, seg, 4), jax.ops.segment_min(x, seg, 4), jax.ops.segment_prod(x, seg, 4)


def set_many(x, idx, v):
    # .at[idx].set with a repeated index (the later update wins) and one out of range.
    def step(k, a):
        return a.at[idx].set(v * k)
    return lax.fori_loop(0, 3, step, x), x.at[idx].set(v), x.at[idx].max(v), jnp.zeros(6, bool).at[idx].set(True)


def misc(x, n, s):
    return (jnp.bincount(n, length=6), jnp.unique(n, size=5, fill_value=-1), jnp.roll(x, s), jnp.interp(x, jnp.sort(x), x * 2),
            jnp.searchsorted(jnp.sort(x), x, method="sort"), jnp.searchsorted(jnp.sort(x), x, method="compare_all"),
            jnp.where(n > 0, size=3, fill_value=-1)[0], jnp.histogram(x, bins=3, range=(-2, 2))[0])


def conv_scan(xs, w):
    def step(c, x):
        y = lax.conv_general_dilated(x[None], w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))[0]
        y = lax.reduce_window(y, -jnp.inf, lax.max, (2, 2, 1), (1, 1, 1), "SAME")
        return c + y.sum(), y.mean()
    return lax.scan(step, 0.0, xs)


def gnn(h, src, dst, w):
    def layer(h, _):
        msg = h[src] @ w
        agg = jax.ops.segment_sum(msg, dst, h.shape[0])
        return jnp.tanh(h + agg), None
    return lax.scan(layer, h, None, length=3)[0]


def scatter_ij(x, i, j):
    # x.at[i, j] with traced i, j: tensor<2xi32> indices, index_vector_dim 0 left unwritten.
    return x.at[i, j].add(2.0), x.at[i, j].set(7.0), x.at[i, j].max(0.5), x.at[i + 9, j].add(1.0)


def sharded(x, w):
    # with_sharding_constraint on one device in a scan: sdy.mesh @empty_mesh
    # and sdy.sharding_constraint, which split nothing.
    def step(c, _):
        c = jax.lax.with_sharding_constraint(jnp.tanh(c @ w), jax.sharding.SingleDeviceSharding(jax.devices()[0]))
        return c, c.sum()
    return lax.scan(step, x, None, length=3)


def bf16_train(params, x):
    # Mixed precision: f32 parameters, the scanned layers in bf16, the loss and grads in f32.
    def loss(p):
        p16 = jax.tree_util.tree_map(lambda a: a.astype(jnp.bfloat16), p)
        y, _ = lax.scan(lambda h, q: (block(h, q).astype(jnp.bfloat16), None), x.astype(jnp.bfloat16), p16)
        return jnp.mean(y.astype(jnp.float32) ** 2)
    return jax.value_and_grad(loss)(params)


def key_loop(seed):
    # A typed key (jax.random.key) carried through a scan, split each step.
    k = jax.random.key(seed)
    def step(c, _):
        k, acc = c
        k, s = jax.random.split(k)
        return (k, acc + jax.random.randint(s, (3,), 0, 100)), jax.random.uniform(s)
    (k, acc), us = lax.scan(step, (k, jnp.zeros(3, jnp.int32)), None, length=4)
    return acc, us, jax.random.key_data(k)


def long_scan(x):
    # 2000 steps: the loop is run, not unrolled.
    return lax.scan(lambda c, _: (c * 0.999 + jnp.sin(c), c[0]), x, None, length=2000)


def map_batch(xs):
    return lax.map(lambda x: jnp.cumsum(x) * x.sum(), xs, batch_size=2)


def per_example_grads(h0, xs, wx, wh):
    return jax.vmap(jax.grad(rnn_loss, argnums=2), in_axes=(0, 1, None, None))(h0, xs, wx, wh)


def misc2(x, n):
    # associative_scan along axis 1, an i8 cumsum that wraps, a while whose condition is a norm.
    return lax.associative_scan(jnp.multiply, x, axis=1), jnp.cumsum(n, axis=1, dtype=jnp.int8), \
        lax.while_loop(lambda s: jnp.linalg.norm(s) > 0.1, lambda s: jax.nn.softmax(s) * s * 0.5, x)


def vmap_cond_in_scan(xs, p):
    def f(p):
        return lax.scan(lambda c, x: (lax.cond(p > x.sum(), lambda c: c + x, lambda c: c * 0.5, c), c.sum()), jnp.zeros(2), xs)
    return jax.vmap(f)(p)


def zeros_like_tree(t):
    return jax.tree_util.tree_map(lambda a: np.zeros_like(a), t)


FUNCS = [
    ("scan_grad", scan_grad, lambda: (f32(2, 4), f32(5, 2, 3), 0.5 * f32(3, 4), 0.4 * f32(4, 4))),
    ("scan_vjp", scan_vjp, lambda: (f32(3), f32(4, 3))),
    ("fori_grad", fori_grad, lambda: (f32(2, 4), 0.5 * f32(4, 4))),
    ("remat_scan_grad", remat_scan_grad, lambda: (f32(2, 4), f32(6, 2, 4), 0.5 * f32(4, 4))),
    ("nested_scan", nested_scan, lambda: (f32(3, 4, 2), f32(2))),
    ("mixed_carry", mixed_carry, lambda: (f32(5, 3),)),
    ("scan_variants", scan_variants, lambda: (f32(5, 3), f32(3))),
    ("while_tuple", while_tuple, lambda: (np.abs(f32(4)), np.float32(20.0))),
    ("while_tuple_zero", while_tuple, lambda: (np.abs(f32(4)), np.float32(-1.0))),
    ("while_in_cond_in_scan", while_in_cond_in_scan, lambda: (f32(6),)),
    ("switch_clamp", switch_clamp, lambda: (np.int32(2), f32(4))),
    ("cond_dtypes", cond_dtypes, lambda: (np.float32(0.5), f32(3), i32(-5, 5, 3), np.array([True, False]))),
    ("lax_map", map_fn, lambda: (f32(4, 5),)),
    ("vmap_scan", vmap_scan, lambda: (f32(3, 4, 2), f32(3, 2))),
    ("vmap_while", vmap_while, lambda: (np.array([0.1, 3.0, 25.0, -0.2], np.float32),)),
    ("assoc_scan", assoc_scan, lambda: (f32(7),)),
    ("cum_reduce_window", cum, lambda: (f32(4, 5), i32(-3, 4, 3, 4))),
    ("transformer_scan", transformer_fwd, lambda: (tparams(), f32(T, D))),
    ("transformer_grad", transformer_grad, lambda: (tparams(), f32(T, D))),
    ("zero_len_scan", zero_len_scan, lambda: (f32(3), f32(0, 3))),
    ("fori_traced", fori_traced, lambda: (f32(3), np.int32(4))),
    ("fori_traced_zero", fori_traced, lambda: (f32(3), np.int32(-2))),
    ("fori_unroll", fori_unroll, lambda: (f32(3),)),
    ("dropout_scan", dropout_scan, lambda: (np.array([1, 2], np.uint32), f32(5, 4), 0.5 * f32(4, 4))),
    ("gamma_poisson", gamma_poisson, lambda: (np.array([3, 9], np.uint32),)),
    ("remat_top", remat_top, lambda: (f32(2, 3), f32(3, 3))),
    ("searchsorted", searchsorted, lambda: (np.sort(f32(8)), f32(5))),
    ("custom_vjp_scan", custom_vjp_scan, lambda: (f32(3), f32(4, 3))),
    ("narrow_carries", narrow_carries, lambda: (np.abs(f32(5)) * 3,)),
    ("while_capture", while_capture, lambda: (np.abs(f32(4)), np.abs(f32(4)))),
    ("jit_in_scan", jit_in_scan, lambda: (f32(3), f32(4, 3))),
    ("embed_loop", embed_loop, lambda: (f32(6, 3), np.array([0, 5, 2, 9, -1], np.int32))),
    ("greedy_decode", greedy_decode, lambda: (f32(5, 4), f32(4, 5), np.int32(2))),
    ("vmap_cond_switch", vmap_cond_switch, lambda: (np.array([0, 2, 5, -1], np.int32), f32(4, 3))),
    ("vmap_fori", vmap_fori, lambda: (f32(4), np.array([0, 3, -1, 5], np.int32))),
    ("jac_scan", jac_scan, lambda: (f32(3), f32(4, 3))),
    ("jvp_while", jvp_while, lambda: (f32(3),)),
    ("grad_cond_switch", grad_cond_switch, lambda: (f32(3), np.int32(1))),
    ("sort_in_scan", sort_in_scan, lambda: (f32(3, 5),)),
    ("cum_more", cum_more, lambda: (f32(3, 4), rng.random((3, 4)) > 0.5)),
    ("empty_state", empty_state, lambda: (f32(3),)),
    ("odeint", odeint_fn, lambda: (f32(3), np.linspace(0, 1, 4).astype(np.float32), 0.5 * f32(3, 3))),
    ("bfgs", bfgs, lambda: (f32(3), f32(4, 3))),
    ("train_loop", train_loop, lambda: (tparams(), f32(T, D))),
    ("sample_decode", sample_decode, lambda: (np.array([4, 2], np.uint32), f32(5, 4), f32(4, 5))),
    ("named_remat", named_remat, lambda: (f32(2, 4), f32(5, 2, 4), 0.5 * f32(4, 4))),
    ("dpa", dpa, lambda: (f32(1, 5, 2, 4), f32(1, 5, 2, 4), f32(1, 5, 2, 4))),
    ("scan_in_cond_grad", scan_in_cond_grad, lambda: (f32(3), np.float32(1))),
    ("sort_while", sort_while, lambda: (f32(6),)),
    ("scatter_loop", scatter_loop, lambda: (f32(4, 5), np.array([0, 3, 7, 2, -1, 4, 1], np.int32))),
    ("segments", segments, lambda: (f32(7), np.array([0, 2, 2, 1, 0, 5, 2], np.int32))),
    ("set_many", set_many, lambda: (f32(6), np.array([1, 4, 1, 9], np.int32), f32(4))),
    ("misc", misc, lambda: (f32(6), np.array([1, 0, 3, 3, -1, 5], np.int32), np.int32(2))),
    ("conv_scan", conv_scan, lambda: (f32(3, 4, 4, 2), f32(3, 3, 2, 3))),
    ("gnn", gnn, lambda: (f32(5, 3), np.array([0, 1, 2, 3, 4, 0], np.int32), np.array([1, 2, 3, 4, 0, 2], np.int32), 0.5 * f32(3, 3))),
    ("scatter_ij", scatter_ij, lambda: (f32(4, 5), np.int32(2), np.int32(3))),
    ("sharded", sharded, lambda: (f32(2, 4), 0.5 * f32(4, 4))),
    ("bf16_train", bf16_train, lambda: (tparams(), f32(T, D))),
    ("key_loop", key_loop, lambda: (np.uint32(7),)),
    ("long_scan", long_scan, lambda: (f32(16),)),
    ("map_batch", map_batch, lambda: (f32(5, 3),)),
    ("per_example_grads", per_example_grads, lambda: (f32(3, 4), f32(5, 3, 3), 0.5 * f32(3, 4), 0.4 * f32(4, 4))),
    ("misc2", misc2, lambda: (f32(2, 5), np.array([[1, 2, 3, 100], [50, 60, 70, 80]], np.int8))),
    ("vmap_cond_in_scan", vmap_cond_in_scan, lambda: (f32(4, 2), f32(3))),
    ("langevin", langevin, lambda: (np.array([5, 7], np.uint32), f32(3))),
    ("special", special, lambda: (np.array([-1, -0.999999, -0.7, -1e-8, 0, 0.3, 0.99, 0.9999, 1, 1.5, np.nan], np.float32),
                                  np.array([-np.inf, -2.5, -2, -0.5, -0.1, 0, 1e-3, 0.5, 1, 2, 3.7, 30, 1e10, np.inf, np.nan],
                                           np.float32))),
]


def adamw_args():
    p = tparams()
    return p, zeros_like_tree(p), zeros_like_tree(p), f32(T, D), np.int32(0)


FUNCS.append(("adamw_step", adamw_step, adamw_args))


def x64_loops(x, u, n):
    # Under jax_enable_x64: f64 carries, i64 loop counters and argmax
    # indices, f64 erf_inv and lgamma (their three-range and Lanczos forms).
    def step(c, row):
        h, i = c
        h = jnp.tanh(h * row + i.astype(jnp.float64) * 0.1)
        return (h, i + 1), jnp.argmax(h)
    (h, i), ys = lax.scan(step, (x, jnp.int64(0)), jnp.stack([x, x * 2, -x]))
    m = lax.fori_loop(0, n, lambda j, a: a * 1.5 + j, jnp.float64(0.25))
    return h, i, ys, m, lax.erf_inv(u), lax.lgamma(x * 4), jnp.argmin(u)


def f64(*shape):
    return rng.standard_normal(shape)


# Exported with jax_enable_x64 on, after FUNCS.
FUNCS64 = [
    ("x64_loops", x64_loops, lambda: (f64(5), np.array([-1, -0.9999999, -0.99, -0.3, 0, 1e-12, 0.7, 0.999999999, 1]),
                                      np.int64(6))),
    ("x64_greedy_decode", greedy_decode, lambda: (f64(5, 4), f64(4, 5), np.int32(2))),
]


def export_all(out, funcs, only):
    for name, f, make in funcs:
        if only and name not in only:
            continue
        # Each export draws from a seed of its own name, so that adding one
        # or exporting a few leaves the others' inputs as they are.
        rng.bit_generator.state = np.random.default_rng(zlib.crc32(name.encode())).bit_generator.state
        args = make()
        leaves = [np.asarray(a) for a in jax.tree_util.tree_leaves(args)]
        results = jax.tree_util.tree_leaves(jax.jit(f)(*args))
        write(os.path.join(out, name), jax.jit(f).lower(*args).as_text(debug_info=True), leaves, results)
        print(name, len(leaves), "inputs", len(results), "results")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "jax")
    only = set(sys.argv[2:])
    export_all(out, FUNCS, only)
    jax.config.update("jax_enable_x64", True)
    export_all(out, FUNCS64, only)


if __name__ == "__main__":
    main()
