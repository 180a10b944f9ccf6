"""Regenerates the .npy fixtures in this directory with the pinned numpy.

Run from the repo root:  .venv/bin/python internal/npy/testdata/gen.py
The Go tests compute the same values (see roundtrip_test.go): element k of a
fixture (k = 0, 1, ... in C order) is (k-2)*1.5 for floats, k-2 for signed
integers, k for unsigned ones, k%2 == 0 for bool and (k-2)*1.5 + k*0.5j for
complex.
"""

import os
import sys

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "xlacheck"))
from xlacheck import save_npy  # noqa: E402  (the bf16 convention lives there)

DTYPES = {
    "f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f64": np.float64,
    "i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u32": np.uint32, "c64": np.complex64, "c128": np.complex128,
    "u16": np.uint16, "u64": np.uint64,
    "i2": ml_dtypes.int2, "i4": ml_dtypes.int4, "u2": ml_dtypes.uint2, "u4": ml_dtypes.uint4,
    "f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2,
    "f8e4m3fnuz": ml_dtypes.float8_e4m3fnuz, "f8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz, "f8e4m3": ml_dtypes.float8_e4m3,
    "f8e3m4": ml_dtypes.float8_e3m4, "f8e8m0fnu": ml_dtypes.float8_e8m0fnu,
    "f6e2m3fn": ml_dtypes.float6_e2m3fn, "f6e3m2fn": ml_dtypes.float6_e3m2fn, "f4e2m1fn": ml_dtypes.float4_e2m1fn,
}
SUB_BYTE = {"i2": 2, "i4": 4, "u2": 2, "u4": 4}


def values(name, shape):
    k = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    if name == "i1":
        return k % 2 == 0
    if name in SUB_BYTE:  # wrapped to the width first: out-of-range casts are not wrapping in ml_dtypes
        bits = SUB_BYTE[name]
        v = k - 2 if name.startswith("i") else k
        v = v & (2**bits - 1)
        if name.startswith("i"):
            v = np.where(v >= 2 ** (bits - 1), v - 2**bits, v)
        return v.astype(DTYPES[name])
    if name.startswith("u"):
        return k.astype(DTYPES[name])
    if name.startswith("c"):
        return ((k - 2) * 1.5 + k * 0.5j).astype(DTYPES[name])
    if name.startswith("i"):
        return (k - 2).astype(DTYPES[name])
    return ((k - 2) * 1.5).astype(DTYPES[name])


def out(name):
    return os.path.join(HERE, name)


def save_sub_byte(path, name, a):
    """ml_dtypes' int2/int4/uint2/uint4 with descr 'int4' etc. (np.save would write '<V1')."""
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": DTYPES[name].__name__, "fortran_order": False, "shape": a.shape})
        f.write(a.tobytes())


for name in DTYPES:
    if name in SUB_BYTE:
        save_sub_byte(out(name + "_2x3.npy"), name, values(name, (2, 3)))
        continue
    save_npy(out(name + "_2x3.npy"), values(name, (2, 3)))
save_npy(out("f32_scalar.npy"), values("f32", ()))
save_npy(out("i1_scalar.npy"), values("i1", ()))
save_npy(out("bf16_scalar.npy"), values("bf16", ()))
save_npy(out("f32_0x3.npy"), values("f32", (0, 3)))
save_npy(out("i64_1x2x1x3.npy"), values("i64", (1, 2, 1, 3)))
save_npy(out("u8_1000.npy"), values("u8", (1000,)))
with open(out("i32_2x3_v2.npy"), "wb") as f:
    np.lib.format.write_array(f, values("i32", (2, 3)), version=(2, 0))

# Files the reader must refuse.
np.save(out("bad_fortran.npy"), np.asfortranarray(values("f32", (2, 3))))
np.save(out("bad_bigendian.npy"), values("f32", (2, 3)).astype(">f4"))
np.save(out("bad_c32.npy"), np.arange(3, dtype=np.clongdouble))  # complex256 on x86-64
np.save(out("bad_bf16_mldtypes.npy"), values("bf16", (3,)))  # ml_dtypes' own form: '<V2'
np.save(out("bad_structured.npy"), np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
