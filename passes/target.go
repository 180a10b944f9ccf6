package passes

import "github.com/tpucc/tpucc/ir"

// Target is what a pass may know about the machine it compiles for: the facts
// layout assignment, fusion profitability and the cost report need, and
// nothing else. Each backend's description implements it (target's
// generations and its description of the host CPU); cmd/tpucc and runtime pick
// one by its --target name and hand it in. The methods take and return ir
// types and plain numbers only, so a description never imports passes and
// passes never import a backend.
//
// Every size is in bytes and every time in seconds. A method that cannot
// answer (a symbolic shape, a count that overflows int64) returns -1, never
// panics: passes must treat -1 as "unknown" and leave the program as it is.
type Target interface {
	// Name is the --target spelling: "tpu-v5e", "cpu".
	Name() string

	// Tiles is the tiling the target stores a value of type t in, for the
	// row-major physical order (dimension 0 major), outermost tile first, as
	// ir.Layout.Tiles holds it: [[8,128],[2,1]] for bf16[64,512] on a TPU,
	// [[1024]] for f32[1000], [[128]] for the scalar f32[]. nil means untiled
	// (every value on the CPU). For another minor-to-major order, ask with the
	// dimensions permuted into that order (major to minor): the tiling depends
	// only on the physical shape and the dtype. The layout pass writes the
	// answer into ir.Layout; Bytes then honours it.
	Tiles(t ir.Type) [][]int64

	// Bytes is the size of a value of type t in device memory: in t.Layout
	// when it has one, else row-major with Tiles(t), padding to whole tiles
	// included, each element at its device size. -1 if t is not static.
	Bytes(t ir.Type) int64

	// MatmulAlign is the multiple to which dot_general's contracting and
	// output-feature dimensions should be padded to use the matrix unit fully:
	// the MXU width (128 on v4, v5e and v5p; 256 on v6e and v7x). 1 where no
	// padding pays (the CPU's kernels handle remainders).
	MatmulAlign() int64

	// GroupBytes is the memory traffic of running group, instructions of f,
	// as one kernel: every value defined outside the group read once, at the
	// largest OperandBytes any member reads it at, and every result of a
	// member other than a constant that is used outside the group (or
	// returned) written once, at Bytes. A single instruction is a group of
	// one; a fusion instruction (one with a region) is a group whose body is
	// inside it. Fusion profitability is
	// GroupBytes(a)+GroupBytes(b)-GroupBytes(a∪b): the traffic fusing saves.
	// fuse keeps these terms as running sums per group (OperandBytes and
	// Bytes) rather than calling GroupBytes on every candidate, which would
	// walk each group again at every merge.
	GroupBytes(f *ir.Func, group []*ir.Instr) int64

	// OperandBytes is what instruction in reads of its operand i when that
	// operand is defined outside in's kernel: Bytes of its type, except that
	// a splat constant is an immediate (0) and a window (slice,
	// dynamic_slice, take) reads only what it returns. -1 if unknown.
	OperandBytes(in *ir.Instr, i int) int64

	// GroupSeconds is the roofline time of the same kernel:
	// max(compute time at the target's peak rates, GroupBytes / bandwidth).
	GroupSeconds(f *ir.Func, group []*ir.Instr) float64
}
