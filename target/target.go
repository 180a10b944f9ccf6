package target

import "github.com/tpucc/tpucc/ir"

// Kind says which family a target belongs to: it decides how values are
// stored (TPU tiles or plain row-major) and which unit runs a matmul.
type Kind uint8

const (
	KindTPU Kind = iota
	KindCPU
)

// Target describes one --target value. Rates are per chip (all TensorCores
// together; for the CPU, all cores together); sizes are bytes. The values are
// package-level data (generations.go), or, for the CPU, measured by
// backend/cpu (host.go says why); treat them as read-only.
type Target struct {
	name string // as --target spells it, "tpu-v5e"; the Name method returns it
	Chip string // as its maker calls it: "TPU v5e"
	Kind Kind

	Cores   int   // TensorCores per chip; CPU cores
	MXUs    int   // matrix units per TensorCore; 0 on the CPU
	MXUSize int64 // systolic array width (128 or 256); 0 on the CPU

	MemoryName string  // "HBM", or "RAM" for the CPU
	Memory     int64   // device memory per chip
	Bandwidth  float64 // device memory bandwidth, bytes/s

	// LocalBytes is the on-chip memory one kernel works in: VMEM per
	// TensorCore, or L2 per core on the CPU.
	LocalBytes int64
	// Caches lists the CPU's data caches, innermost first; empty for a TPU.
	Caches []Cache
	// SIMDBits is the CPU's vector register width; 0 for a TPU, whose vector
	// registers are always 8 sublanes by 128 lanes of 32 bits.
	SIMDBits int

	// MatmulBF16, MatmulInt8 and MatmulF32 are the matrix unit's peak rates,
	// FLOP/s (OP/s for int8), for dot_general on bf16 (and f16), on i8 and u8,
	// and on f32 operands. On a TPU, MatmulF32 is MatmulBF16 / F32Passes.
	MatmulBF16, MatmulInt8, MatmulF32 float64
	// F32Passes is the number of bf16 MXU passes an f32 dot_general takes at
	// the precision lower/stablehlo writes (DEFAULT: one pass, bf16 products
	// with f32 accumulation, as XLA:TPU and jax do by default); HIGHEST takes
	// 6 (bf16_6x), HIGH 3 (WithPrecision). 0 on the CPU, which multiplies f32
	// natively.
	F32Passes int
	// Vector is the vector unit's rate for elementwise and reduction work,
	// ops/s; also what a dot_general on a dtype the matrix unit lacks
	// (f64, 16- to 64-bit integers) runs at.
	Vector float64
	// TranscendentalOps is how many vector ops one transcendental (exp, log,
	// tanh, erf, ...) is charged.
	TranscendentalOps float64
}

// Cache is one level of a CPU's data cache.
type Cache struct {
	Name   string // "L1d", "L2", "L3"
	Bytes  int64  // per instance
	Shared bool   // one instance for all cores (else one per core)
}

// targets is every TPU generation, in the order Names lists them.
var targets = []*Target{V4, V5e, V5p, V6e, V7x}

// Lookup returns the TPU generation that --target spells name. The "cpu"
// target is the host backend/cpu measures (target.Host);
// engine.LookupTarget finds either.
func Lookup(name string) (*Target, bool) {
	for _, t := range targets {
		if t.name == name {
			return t, true
		}
	}
	return nil, false
}

// Targets lists the TPU generations, oldest first.
func Targets() []*Target { return append([]*Target(nil), targets...) }

// Names lists the TPU generations' --target spellings, in Targets order.
func Names() []string {
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = t.name
	}
	return names
}

// MatmulPeak is the rate a dot_general on operands of dtype dt runs at, and
// whether it runs on the matrix unit (where its dimensions are padded to the
// MXU's tiles). On a TPU, f16 is taken at the bf16 rate: the MXU multiplies
// 16-bit floats; dtypes the MXU has no mode for run on the vector unit.
func (t *Target) MatmulPeak(dt ir.DType) (rate float64, mxu bool) {
	switch dt {
	case ir.BF16, ir.F16:
		return t.MatmulBF16, t.Kind == KindTPU
	case ir.I8, ir.U8:
		return t.MatmulInt8, t.Kind == KindTPU
	case ir.F32:
		return t.MatmulF32, t.Kind == KindTPU
	}
	return t.Vector, false
}

// WithPrecision is t with its f32 matmul rate at a product precision
// (stablehlo.Options.Precision): on a TPU "high" takes 3 bf16 passes
// (bf16_3x) and "highest" 6 (bf16_6x), as XLA:TPU runs them; "" and
// "default" take one. A CPU multiplies f32 natively at any precision and is
// returned as it is.
func (t *Target) WithPrecision(p string) *Target {
	passes := map[string]int{"high": 3, "highest": 6}[p]
	if t.Kind != KindTPU || passes == 0 {
		return t
	}
	c := *t
	c.F32Passes = passes
	c.MatmulF32 = t.MatmulBF16 / float64(passes)
	return &c
}

// Ridge is the arithmetic intensity (bf16 FLOPs per byte of memory traffic)
// above which a matmul is compute-bound.
func (t *Target) Ridge() float64 { return t.MatmulBF16 / t.Bandwidth }

// The methods below, with Tiles, Bytes (tiling.go), GroupBytes and
// GroupSeconds (cost.go), make *Target a passes.Target.

// Name is the --target spelling: "tpu-v5e", "cpu".
func (t *Target) Name() string { return t.name }

// MatmulAlign is the MXU width; 1 on the CPU, whose kernels handle remainders.
func (t *Target) MatmulAlign() int64 {
	if t.Kind == KindTPU {
		return t.MXUSize
	}
	return 1
}
