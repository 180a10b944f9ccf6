// Package cpu is tpucc's reference executor: every core op of package ir in
// pure Go, the numbers that XLA's results must match. It runs whole functions
// (Run, with call), single instructions (Eval, for eager mode; Folder, for the
// fold-constants pass), draws deterministic inputs (RandomInputs), and
// refuses programs too large to hold (CheckMemory) before allocating
// anything.
//
// # Representation
//
// Tensors are *backend.Buffer, holding elements in their own dtype (f32 in 4
// bytes, bf16 and f16 as 2-byte bit patterns, i1 in one byte). A kernel reads
// elements as float64 (floats, exactly) or int64 (integers and i1), a chunk
// at a time, computes, and stores into the result's dtype, which rounds
// (ir.DType.RoundFloat, which for f16 and bf16 rounds through f32 as XLA
// does) or wraps (ir.DType.WrapInt). Computing in float64 and rounding equals
// computing in f32 and rounding for the arithmetic ops and is within an ulp
// for the transcendental ones. Composite ops (gelu, silu, softmax,
// log_softmax, layer_norm, rms_norm), dot_general, reduce_sum and cumsum
// accumulate in float64 and round once into the dtype. Integer ops compute
// in int64 and wrap. No tensor is held whole in float64 between ops.
//
// # Semantics decisions
//
// Where ir/op.go's Doc lines leave an edge open, the executor does what
// XLA:CPU does, checked with jax 0.10.2 by running StableHLO directly:
//
//   - Integer div: x/0 = -1 (all ones for unsigned: u8 5/0 = 255); INT_MIN/-1 =
//     INT_MIN. XLA: i8 [7,-7,7,-7,5,-5,-128,-128,-128] / [2,2,-2,-2,0,0,-1,0,1] =
//     [3,-3,-3,3,-1,-1,-128,-1,-128].
//   - Integer rem: the sign of the dividend; x%0 = x; INT_MIN % -1 = 0. XLA:
//     the same operands give [1,-1,1,-1,5,-5,0,-128,0]; u8 [7,5,0,255] %
//     [2,0,0,3] = [1,5,0,0].
//   - Float rem is C fmod: rem(5.5, -2) = 1.5, rem(-5.5, 2) = -1.5, rem(1, 0) =
//     NaN, rem(inf, 2) = NaN, rem(3, inf) = 3, rem(-0, 1) = -0 (all as XLA).
//   - Integer pow: for a non-negative exponent the exact power wrapped to the
//     dtype (i32 3^64 = 2038349057, u8 3^200 = 161, 0^0 = 1); a negative
//     exponent (signed types) gives 1 for base 1, ±1 for base -1 by the
//     exponent's parity, and 0 for every other base, 0 included (2^-1 = 0,
//     0^-1 = 0). XLA's stablehlo.power is not self-consistent here (its CPU
//     runtime keeps only the low 6 exponent bits and reads unsigned operands
//     as signed, its constant folder computes the full power), so the lowering
//     spells out square-and-multiply instead of using it.
//   - Float pow follows C pow: pow(-0, -1) = -inf, pow(0, -1) = inf, pow(NaN, 0)
//     = 1, pow(1, NaN) = 1, pow(-2, 0.5) = NaN (as XLA).
//   - convert float -> integer: NaN -> 0, truncation toward zero, saturation at
//     the integer's range: f32 -> i8 of [3e10, -3e10, NaN, inf, -inf, 2.9,
//     -2.9, 127.5, 128, -129] = [127, -128, 0, 127, -128, 2, -2, 127, 127,
//     -128]; to u8, -2.9 and -1 give 0; to i64, 9.3e18 gives 2^63-1; to u32,
//     4294967296 gives 4294967295. The same for f64, f16 and bf16 sources.
//   - convert to i1 is != 0, so NaN and -0.5 are true and -0 is false (XLA
//     f32 -> i1 of [0, -0, 0.5, -0.5, NaN, inf] = [F, F, T, T, T, T]); integer
//     to i1 likewise; i1 to a number is 0 or 1; integer to integer wraps (i64
//     300 -> i8 44, -1 -> u8 255, u8 200 -> i8 -56).
//   - convert integer -> f32, f16, bf16 rounds to f32 first and then to the
//     narrower type: XLA gives i32 16842753 -> bf16 16777216 (a single
//     rounding would give 16908288). f64 -> f16 and f64 -> bf16 also round
//     through f32: f64 1+2^-8+2^-30 -> bf16 1.0 in XLA.
//   - max and min propagate NaN and order -0 below +0: XLA gives max(-0, +0) =
//     max(+0, -0) = +0 and min(-0, +0) = min(+0, -0) = -0. relu is max(x, 0),
//     so relu(-0) = +0 and relu(NaN) = NaN.
//   - clamp is min(max(x, lo), hi): NaN in any operand gives NaN; lo > hi
//     gives hi (XLA i32 clamp(5, 1, 0) = 0).
//   - sign(-0) = -0, sign(NaN) = NaN; for integers -1, 0, 1 (unsigned 0, 1).
//     abs(INT_MIN) = INT_MIN and neg wraps (XLA: abs(i8 -128) = -128, neg(u8 1)
//     = 255). round is half to even (round(-0.5) = -0, round(2.5) = 2);
//     floor(-0.5) = -1, ceil(-0.5) = -0.
//   - atan2(x, y) = atan(x/y) in the right quadrant: the first operand is the
//     numerator (XLA atan2(1, 0) = pi/2, atan2(0, -1) = pi, atan2(-0, -1) = -pi).
//   - compare: NaN is unordered, so only ne is true; -0 equals +0.
//   - Sorting (argsort, top_k) uses IEEE totalOrder: -NaN < -inf < ... < -0 <
//     +0 < ... < inf < NaN; both sorts are stable, top_k descending with ties
//     in ascending index order.
//   - argmax and argmin give the first index of the extreme value; a NaN is
//     both the largest and the smallest value, so the first NaN wins; -0 and +0
//     tie. An empty axis gives index 0.
//   - reduce_prod on f32, f16 and bf16 rounds into f32 after every product, so
//     it overflows to inf where XLA's f32 product does; reduce_sum accumulates
//     in float64 (the contract allows it). Empty extents give 0, 1, -inf (or
//     the integer minimum) and +inf (or the integer maximum).
//   - scatter_add adds updates in row-major order of the updates, rounding
//     into the dtype after each addition (a sequential scatter); updates whose
//     index is outside [0, n) are dropped, negative ones included.
//   - take clamps indices into [0, n-1]; a take that needs elements from an
//     empty axis is an error (StableHLO's gather cannot express it either).
//   - dynamic_slice and dynamic_update_slice clamp each start into [0, dim -
//     size], whatever the start's integer dtype.
//   - one_hot writes 1 (1.0, true) where the index equals the position; an
//     index outside [0, depth) gives a row of zeros.
//   - softmax and log_softmax follow the formula exactly: a line that is all
//     -inf, or holds +inf, gives NaN, as the decomposed form does in XLA.
//
// # Limits
//
// Run refuses symbolic shapes, calls CheckMemory with DefaultMemoryLimit (16
// GiB, or a quarter of physical memory if less), whose count of a value's
// bytes is exactly what the executor holds for it and which adds the most
// scratch one kernel holds (by the op table's scratch class: a reduction's
// float64 sums, a line's copies, a sort's keys, a dot's reordered operands
// and blocks), and turns an internal panic into an error instead of
// crashing.
// Instructions with nested regions are refused.
package cpu
