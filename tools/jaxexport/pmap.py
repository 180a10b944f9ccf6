#!/usr/bin/env python3
"""pmap: JAX's results for a program of several replicas.

jax 0.10.2 lowers jax.pmap to a shard_map over a mesh (sdy.manual_computation,
mhlo.num_partitions), no longer to mhlo.num_replicas, so the program here is
tpucc's own: testdata/jax-pmap/NAME/model.tir declares `replicas = 4` and
computes, per replica, what the pmapped function below computes. This script
writes that model.tir, arg0.npy (the input, a leading axis of the four
replicas, from a fixed seed) and resultN.npy (what jax.pmap computed on four
XLA:CPU devices, stacked along the leading axis as pmap returns them).
cmd/tpucc's TestRunReplicasJAX runs model.tir through `tpucc run --device pjrt`
and `--backend reference` with arg0.npy and compares.

Usage (the pinned jax of .venv):
  .venv/bin/python tools/jaxexport/pmap.py [OUTDIR]   (default testdata/jax-pmap)
"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
import numpy as np  # noqa: E402
import jax  # noqa: E402
from jax import lax  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

MODEL = """replicas = 4

func @collectives(%x: f32[2,3]) -> (f32[2,3], f32[8,3], f32[2,3], f32[2,3], u32[]) {
  %s = all_reduce %x {groups=[[0,1,2,3]], kind=sum} : f32[2,3]
  %g = all_gather %x {dim=0, groups=[[0,1,2,3]]} : f32[8,3]
  %m = all_reduce %x {groups=[[0,1,2,3]], kind=max} : f32[2,3]
  %p = collective_permute %x {pairs=[[0,1],[1,2],[2,3],[3,0]]} : f32[2,3]
  %i = replica_id : u32[]
  return %s, %g, %m, %p, %i
}
"""


def collectives(x):
    return (lax.psum(x, "i"), lax.all_gather(x, "i", tiled=True), lax.pmax(x, "i"),
            lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]),
            lax.axis_index("i").astype(np.uint32))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "testdata", "jax-pmap")
    d = os.path.join(out, "collectives")
    os.makedirs(d, exist_ok=True)
    x = np.random.default_rng(32).standard_normal((4, 2, 3)).astype(np.float32)
    results = jax.pmap(collectives, axis_name="i")(x)
    with open(os.path.join(d, "model.tir"), "w") as f:
        f.write(MODEL)
    np.save(os.path.join(d, "arg0.npy"), x)
    for i, r in enumerate(results):
        np.save(os.path.join(d, "result%d.npy" % i), np.asarray(r))
    print("wrote", d)


if __name__ == "__main__":
    main()
