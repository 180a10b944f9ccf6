#!/usr/bin/env python3
"""pallas: export Pallas kernels for the TPU platform as StableHLO.

jax.export.export(jax.jit(f), platforms=["tpu"]) lowers a pl.pallas_call to
a stablehlo.custom_call @tpu_custom_call whose backend_config holds the
kernel as serialized Mosaic MLIR; lowering needs no TPU. For each kernel
below this writes testdata/jax-tpu/NAME/model.mlir (the exported module's
text, locations and all). Nothing runs them here: no CPU has the kernel.
cmd/tpucc's TestPallasCompilesForV6e imports each, lowers it again and
compiles it for v6e through libtpu's compile-only client.

Usage (the pinned jax of .venv):
  .venv/bin/python tools/jaxexport/pallas.py [OUTDIR]   (default testdata/jax-tpu)
"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402


def add_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]


def pallas_add(x, y):
    return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x, y)


def matmul_kernel(x_ref, w_ref, o_ref):
    o_ref[...] = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)


def pallas_matmul(x, w):
    return pl.pallas_call(matmul_kernel, out_shape=jax.ShapeDtypeStruct((x.shape[0], w.shape[1]), jnp.float32))(x, w)


KERNELS = {
    "pallas_add": (pallas_add, [((8, 128), jnp.float32), ((8, 128), jnp.float32)]),
    "pallas_matmul": (pallas_matmul, [((128, 256), jnp.bfloat16), ((256, 128), jnp.bfloat16)]),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("testdata", "jax-tpu")
    for name, (f, specs) in KERNELS.items():
        args = [jax.ShapeDtypeStruct(s, d) for s, d in specs]
        exp = jax.export.export(jax.jit(f), platforms=["tpu"])(*args)
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "model.mlir"), "w") as fh:
            fh.write(exp.mlir_module())
        print(f"{name}: {d}/model.mlir (jax {jax.__version__})")


if __name__ == "__main__":
    main()
