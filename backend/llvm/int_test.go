package llvm

import (
	"fmt"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// intDTypes are the integer dtypes the kernels hold in their own width.
var intDTypes = []string{"i8", "u8", "i16", "i32", "u32", "i64", "u16", "u64"}

// extremes are integer operands that catch a wrong division or wrap: the
// dtype's least and greatest values, 0, ±1 and a few others (written into
// the dtype, so -1 is all ones in an unsigned one).
func extremes(dt ir.DType) []int64 {
	lo, hi := dt.IntRange()
	return []int64{lo, lo + 1, -7, -2, -1, 0, 1, 2, 3, 7, 100, hi - 1, hi}
}

// TestIntegerDivide: integer div and rem are generated (no reference
// fallback) and agree exactly with the reference executor on every pair
// of extremes: a / 0 = -1, a % 0 = a, MIN / -1 = MIN, MIN % -1 = 0, and
// truncation toward zero.
func TestIntegerDivide(t *testing.T) {
	b := testBackend(t)
	for _, d := range intDTypes {
		t.Run(d, func(t *testing.T) {
			dt, _ := ir.ParseDType(d)
			xs := extremes(dt)
			n := len(xs) * len(xs)
			src := fmt.Sprintf("func @f(%%a: %[1]s[%[2]d], %%b: %[1]s[%[2]d]) -> (%[1]s[%[2]d], %[1]s[%[2]d]) {\n"+
				"  %%q = div %%a, %%b : %[1]s[%[2]d]\n  %%r = rem %%a, %%b : %[1]s[%[2]d]\n  return %%q, %%r\n}\n", d, n)
			m, f, x := compileSrc(t, b, src)
			if len(x.plan.fallback) != 0 || x.plan.generated[ir.OpDiv] != 1 || x.plan.generated[ir.OpRem] != 1 {
				t.Fatalf("generated %v, fallback %v", x.plan.generated, x.plan.fallback)
			}
			var as, bs []int64
			for _, a := range xs {
				for _, v := range xs {
					as, bs = append(as, a), append(bs, v)
				}
			}
			agree(t, x, m, f, []*backend.Buffer{backend.FromInts(f.Params[0].Type, as...), backend.FromInts(f.Params[1].Type, bs...)})
		})
	}
}

// TestIntegerReduce: reduce_sum, _prod, _max and _min of integers are
// generated and agree exactly with the reference executor, which reduces
// in int64 and wraps when it stores: over rows and over columns of
// extremes, where sums and products overflow every dtype.
func TestIntegerReduce(t *testing.T) {
	b := testBackend(t)
	for _, d := range intDTypes {
		for _, op := range []string{"reduce_sum", "reduce_prod", "reduce_max", "reduce_min"} {
			t.Run(d+"/"+op, func(t *testing.T) {
				dt, _ := ir.ParseDType(d)
				xs := extremes(dt)
				src := fmt.Sprintf("func @f(%%x: %[1]s[5,%[2]d]) -> (%[1]s[5], %[1]s[%[2]d]) {\n"+
					"  %%r = %[3]s %%x {axes=[1]} : %[1]s[5]\n  %%c = %[3]s %%x {axes=[0]} : %[1]s[%[2]d]\n  return %%r, %%c\n}\n", d, len(xs), op)
				m, f, x := compileSrc(t, b, src)
				if len(x.plan.fallback) != 0 {
					t.Fatalf("fallback %v", x.plan.fallback)
				}
				var vals []int64
				for r := range 5 {
					for i := range xs {
						vals = append(vals, xs[(i+3*r)%len(xs)]) // each row and column mixes them
					}
				}
				agree(t, x, m, f, []*backend.Buffer{backend.FromInts(f.Params[0].Type, vals...)})
			})
		}
	}
}

// TestUnsignedElementwise: u16 and u64 compares, max, min, abs, sign,
// conversions, iota and a dynamic_slice start are generated and agree
// exactly with the reference executor, u64 above 2^63 included (an
// unsigned order, and a start past every dimension clamps to the end).
func TestUnsignedElementwise(t *testing.T) {
	b := testBackend(t)
	for _, d := range []string{"u16", "u64"} {
		t.Run(d, func(t *testing.T) {
			dt, _ := ir.ParseDType(d)
			xs := extremes(dt)
			n := len(xs)
			src := fmt.Sprintf("func @f(%%a: %[1]s[%[2]d], %%b: %[1]s[%[2]d], %%s: %[1]s[]) -> (i1[%[2]d], %[1]s[%[2]d], %[1]s[%[2]d], %[1]s[%[2]d], %[1]s[%[2]d], i32[%[2]d], i64[%[2]d], %[1]s[%[2]d], %[1]s[3]) {\n"+
				"  %%lt = compare %%a, %%b {dir=lt} : i1[%[2]d]\n"+
				"  %%mx = max %%a, %%b : %[1]s[%[2]d]\n"+
				"  %%mn = min %%a, %%b : %[1]s[%[2]d]\n"+
				"  %%ab = abs %%a : %[1]s[%[2]d]\n"+
				"  %%sg = sign %%a : %[1]s[%[2]d]\n"+
				"  %%c32 = convert %%a : i32[%[2]d]\n"+
				"  %%c64 = convert %%a : i64[%[2]d]\n"+
				"  %%io = iota {axis=0} : %[1]s[%[2]d]\n"+
				"  %%ds = dynamic_slice %%a, %%s {sizes=[3]} : %[1]s[3]\n"+
				"  return %%lt, %%mx, %%mn, %%ab, %%sg, %%c32, %%c64, %%io, %%ds\n}\n", d, n)
			m, f, x := compileSrc(t, b, src)
			if len(x.plan.fallback) != 0 {
				t.Fatalf("fallback %v", x.plan.fallback)
			}
			var as, bs []int64
			for i := range xs {
				as, bs = append(as, xs[i]), append(bs, xs[(i+5)%n])
			}
			for _, s := range []int64{-1, 4, -2} { // -1 is the dtype's greatest value
				agree(t, x, m, f, []*backend.Buffer{backend.FromInts(f.Params[0].Type, as...),
					backend.FromInts(f.Params[1].Type, bs...), backend.FromInts(f.Params[2].Type, s)})
			}
		})
	}
}

// TestU16IndicesAndKeys: u16 take indices (65535 clamps to the end) and
// argsort keys (ordered unsigned) are generated and agree with the reference.
func TestU16IndicesAndKeys(t *testing.T) {
	b := testBackend(t)
	src := "func @f(%x: f32[5], %i: u16[4], %k: u16[6]) -> (f32[4], i32[6]) {\n" +
		"  %t = take %x, %i {axis=0} : f32[4]\n  %s = argsort %k {axis=0} : i32[6]\n  return %t, %s\n}\n"
	m, f, x := compileSrc(t, b, src)
	if len(x.plan.fallback) != 0 {
		t.Fatalf("fallback %v", x.plan.fallback)
	}
	agree(t, x, m, f, []*backend.Buffer{backend.FromFloats(f.Params[0].Type, 1, 2, 3, 4, 5),
		backend.FromInts(f.Params[1].Type, 65535, 0, 3, 32768), backend.FromInts(f.Params[2].Type, 65535, 7, 32768, 0, 7, 1)})
}
