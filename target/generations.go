package target

// The TPU generations, one struct each. Every number names its source:
//
//   - "Cloud": the generation's page of the Cloud TPU documentation
//     (cloud.google.com/tpu/docs/v4, v5e, v5p, v6e, tpu7x), as
//     ../shared/reference/tpu.md records them. The tpu7x page's comparison
//     table gives HBM in GiB for v5p, v6e and TPU7x; the v4, v5e and v6e
//     pages write "GB" for the same chips, and jax's tpu_info agrees with the
//     GiB reading (17.2e9 bytes for v5e's "16 GB"), so HBM is GiB throughout.
//   - "tpu_info": jax/_src/pallas/mosaic/tpu_info.py in jax 0.10.2 (per
//     TensorCore there; multiplied by the TensorCores here): MXU count and
//     width, VMEM per core.
//   - "derived": computed from the figures above, the formula given.
//
// Tiling is the same on every generation (tiling.go): XLA:TPU 0.0.42.1 gave
// every parameter shape we tried the same layout on v4, v5e, v6e and TPU7x.
//
// Two rates are ours, not published, and stated as assumptions:
//
//   - Vector: the vector unit has 8 sublanes x 128 lanes x 2 ALUs = 2048
//     32-bit ops per cycle per TensorCore (the scaling book, "How to Think
//     About TPUs", appendix C, for v4; assumed for every generation), at the
//     clock the MXU figures imply: bf16 peak / (TensorCores x MXUs x width^2
//     x 2 FLOPs). That gives 1.05 GHz for v4 and 1.5 GHz for v5e, as
//     published; for v6e and v7x, whose MXU counts (2 per core, from
//     tpu_info and Cloud) imply 3.5 and 4.4 GHz, the vector rate is likely
//     twice too high. It matters little: elementwise work is memory-bound on
//     every TPU by two orders of magnitude.
//   - TranscendentalOps = 1: exp, log, tanh and the like go to the EUP
//     (extended unary pipeline), whose rate is not published; each is
//     charged one vector op.
//
// f32 matmuls: lower/stablehlo writes precision = [DEFAULT, DEFAULT], which
// XLA:TPU runs as one bf16 pass with f32 accumulation (jax's "Matmul
// precision" page: float32 dots use bfloat16 internally on TPU by default),
// so MatmulF32 = MatmulBF16 (F32Passes = 1). HIGHEST takes 6 passes and HIGH
// 3 (Target.WithPrecision, which tpucc build --report --precision uses).

const (
	KiB = int64(1) << 10
	MiB = int64(1) << 20
	GiB = int64(1) << 30
)

// vectorRate is the derived vector-unit rate of a chip (see above).
func vectorRate(bf16 float64, mxus int, width int64) float64 {
	return bf16 * 2048 / (float64(mxus) * float64(width*width) * 2)
}

// V4 is TPU v4.
var V4 = &Target{
	name:              "tpu-v4",
	Chip:              "TPU v4",
	Kind:              KindTPU,
	Cores:             2,   // Cloud: two TensorCores per chip; tpu_info
	MXUs:              4,   // per TensorCore; Cloud, tpu_info
	MXUSize:           128, // tpu_info: mxu_column_size 128 before v6
	MemoryName:        "HBM",
	Memory:            32 * GiB, // Cloud: 32 GiB HBM2; tpu_info 34.4e9 bytes
	Bandwidth:         1200e9,   // Cloud: 1200 GB/s (tpu_info 1.23e12)
	LocalBytes:        16 * MiB, // tpu_info: 16 MiB VMEM per core
	MatmulBF16:        275e12,   // Cloud: 275 TFLOP/s bf16
	MatmulInt8:        275e12,   // Cloud: 275 TOP/s int8, the bf16 rate (scaling book: 2.75e14)
	MatmulF32:         275e12,   // one bf16 pass (see above)
	F32Passes:         1,
	Vector:            vectorRate(275e12, 4, 128), // derived: 4.30e12 (1.05 GHz)
	TranscendentalOps: 1,                          // assumed (see above)
}

// V5e is TPU v5e (v5 lite).
var V5e = &Target{
	name:              "tpu-v5e",
	Chip:              "TPU v5e",
	Kind:              KindTPU,
	Cores:             1,   // Cloud: one TensorCore per chip
	MXUs:              4,   // Cloud: four MXUs per TensorCore; tpu_info
	MXUSize:           128, // tpu_info
	MemoryName:        "HBM",
	Memory:            16 * GiB,  // Cloud: "16 GB" HBM2; tpu_info 17.2e9 bytes = 16 GiB
	Bandwidth:         819e9,     // Cloud: 819 GB/s
	LocalBytes:        128 * MiB, // tpu_info: 128 MiB VMEM per core
	MatmulBF16:        197e12,    // Cloud: 197 TFLOP/s bf16
	MatmulInt8:        393e12,    // Cloud: 393 TOP/s int8 (tpu_info 3.94e14)
	MatmulF32:         197e12,    // one bf16 pass
	F32Passes:         1,
	Vector:            vectorRate(197e12, 4, 128), // derived: 3.08e12 (1.5 GHz)
	TranscendentalOps: 1,                          // assumed
}

// V5p is TPU v5p.
var V5p = &Target{
	name:              "tpu-v5p",
	Chip:              "TPU v5p",
	Kind:              KindTPU,
	Cores:             2,   // Cloud (tpu7x page): 2 TensorCores per chip
	MXUs:              4,   // per TensorCore; tpu_info
	MXUSize:           128, // tpu_info
	MemoryName:        "HBM",
	Memory:            95 * GiB, // Cloud (tpu7x page): 95 GiB; tpu_info 103e9 bytes
	Bandwidth:         2765e9,   // Cloud: 2765 GB/s (tpu_info 2.46e12)
	LocalBytes:        64 * MiB, // tpu_info: 64 MiB VMEM per core
	MatmulBF16:        459e12,   // Cloud: 459 TFLOP/s bf16
	MatmulInt8:        918e12,   // Cloud v5p page: 918 TOP/s int8; tpu_info 9.18e14
	MatmulF32:         459e12,   // one bf16 pass
	F32Passes:         1,
	Vector:            vectorRate(459e12, 4, 128), // derived: 7.17e12 (1.75 GHz)
	TranscendentalOps: 1,                          // assumed
}

// V6e is TPU v6e (Trillium).
var V6e = &Target{
	name:              "tpu-v6e",
	Chip:              "TPU v6e (Trillium)",
	Kind:              KindTPU,
	Cores:             1,   // Cloud: one TensorCore per chip
	MXUs:              2,   // Cloud: 2 MXUs per TensorCore; tpu_info
	MXUSize:           256, // tpu_info: mxu_column_size 256 from v6
	MemoryName:        "HBM",
	Memory:            32 * GiB,  // Cloud (tpu7x page): 32 GiB; tpu_info 34.4e9 bytes
	Bandwidth:         1638e9,    // Cloud (tpu7x page): 1638 GB/s (v6e page: 1640)
	LocalBytes:        128 * MiB, // tpu_info: 128 MiB VMEM per core
	MatmulBF16:        918e12,    // Cloud: 918 TFLOP/s bf16
	MatmulInt8:        1836e12,   // Cloud: 1836 TOP/s int8
	MatmulF32:         918e12,    // one bf16 pass
	F32Passes:         1,
	Vector:            vectorRate(918e12, 2, 256), // derived: 7.17e12 (see above: likely 2x high)
	TranscendentalOps: 1,                          // assumed
}

// V7x is TPU7x (Ironwood).
var V7x = &Target{
	name:              "tpu-v7x",
	Chip:              "TPU7x (Ironwood)",
	Kind:              KindTPU,
	Cores:             2,   // Cloud: two TensorCores per chip
	MXUs:              2,   // per TensorCore; tpu_info
	MXUSize:           256, // tpu_info
	MemoryName:        "HBM",
	Memory:            192 * GiB, // Cloud: 192 GiB; tpu_info 206e9 bytes
	Bandwidth:         7380e9,    // Cloud: 7380 GB/s (tpu_info 7.40e12)
	LocalBytes:        64 * MiB,  // tpu_info: 64 MiB VMEM per core
	MatmulBF16:        2307e12,   // Cloud: 2307 TFLOP/s bf16 (4614 fp8; tpucc has no fp8 dtype)
	MatmulInt8:        2307e12,   // no int8 rate published (tpu_info: none); assumed the bf16 rate
	MatmulF32:         2307e12,   // one bf16 pass
	F32Passes:         1,
	Vector:            vectorRate(2307e12, 2, 256), // derived: 18.0e12 (see above: likely 2x high)
	TranscendentalOps: 1,                           // assumed
}
