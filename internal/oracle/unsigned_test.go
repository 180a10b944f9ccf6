package oracle

import (
	"math"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/frontend/tir"
)

// unsignedPrograms are programs on unsigned and sub-byte dtypes, each with
// inputs at the edges (2^32-1 against 1, u64 values from 2^63 on, negative
// and huge floats converted to unsigned types, sub-byte wrap).
var unsignedPrograms = []struct {
	name, src string
	inputs    func(p []*backend.Buffer)
}{
	{"u32 edges", `func @f(%a: u32[4], %b: u32[4]) -> (i1[4], i1[4], u32[4], u32[4], u32[4], u32[4]) {
  %lt = compare %a, %b {dir=lt} : i1[4]
  %ge = compare %a, %b {dir=ge} : i1[4]
  %mx = max %a, %b : u32[4]
  %mn = min %a, %b : u32[4]
  %q = div %a, %b : u32[4]
  %r = rem %a, %b : u32[4]
  return %lt, %ge, %mx, %mn, %q, %r
}
`, func(p []*backend.Buffer) {
		setInts(p[0], 4294967295, 0, 1, 2147483648)
		setInts(p[1], 1, 4294967295, 3, 2147483647)
	}},
	{"u64 edges", `func @f(%a: u64[4], %b: u64[4]) -> (i1[4], u64[4], u64[4], u64[4], u64[4], u64[], u64[], i32[], i32[]) {
  %lt = compare %a, %b {dir=lt} : i1[4]
  %mx = max %a, %b : u64[4]
  %q = div %a, %b : u64[4]
  %r = rem %a, %b : u64[4]
  %s = sub %b, %a : u64[4]
  %rmin = reduce_min %a {axes=[0]} : u64[]
  %rmax = reduce_max %b {axes=[0]} : u64[]
  %amin = argmin %a {axis=0} : i32[]
  %amax = argmax %a {axis=0} : i32[]
  return %lt, %mx, %q, %r, %s, %rmin, %rmax, %amin, %amax
}
`, func(p []*backend.Buffer) {
		setInts(p[0], -1, math.MinInt64, 7, 12345678901234)
		setInts(p[1], 3, 10, -1, 1000)
	}},
	{"float to unsigned", `func @f(%x: f32[5], %u: u64[3]) -> (u8[5], u16[5], u32[5], u64[5], f32[3], f64[3]) {
  %a = convert %x : u8[5]
  %b = convert %x : u16[5]
  %c = convert %x : u32[5]
  %d = convert %x : u64[5]
  %e = convert %u : f32[3]
  %g = convert %u : f64[3]
  return %a, %b, %c, %d, %e, %g
}
`, func(p []*backend.Buffer) {
		for i, v := range []float64{-1.5, -0.0, 3.7, 200.5, 65535.9} {
			p[0].SetFloat64(i, v)
		}
		setInts(p[1], -1, math.MinInt64, 9007199254740993)
	}},
	{"u16 and sub-byte wrap", `func @f(%a: u16[3], %b: i4[4], %c: u4[4], %d: i2[4], %e: u2[4]) -> (u16[3], u16[3], i4[4], i4[4], i4[4], u4[4], u4[4], i2[4], u2[4]) {
  %p = mul %a, %a : u16[3]
  %n = neg %a : u16[3]
  %s = add %b, %b : i4[4]
  %m = mul %b, %b : i4[4]
  %q = div %b, %b : i4[4]
  %t = add %c, %c : u4[4]
  %w = sub %c, %c : u4[4]
  %x = add %d, %d : i2[4]
  %y = neg %e : u2[4]
  return %p, %n, %s, %m, %q, %t, %w, %x, %y
}
`, func(p []*backend.Buffer) {
		setInts(p[0], 65535, 300, 0)
		setInts(p[1], -8, 7, -1, 5)
		setInts(p[2], 15, 8, 1, 0)
		setInts(p[3], -2, 1, -1, 0)
		setInts(p[4], 3, 1, 2, 0)
	}},
	// Oracle seed 5254: XLA:CPU refuses a convolution on s2 ("unsupported
	// operand type S2"); the products and sums wrap as the dtype's.
	{"sub-byte convolution", `func @f(%a: i2[2,2,5], %b: i2[3,2,2], %c: i4[2,2,5], %d: i4[3,2,2], %e: u2[2,2,5], %g: u4[2,2,5]) -> (i2[2,3,4], i4[2,3,4], u2[2,3,4], u4[2,3,4]) {
  %x = convolution %a, %b {lhs_dims=[0,1,2], rhs_dims=[0,1,2], out_dims=[0,1,2]} : i2[2,3,4]
  %y = convolution %c, %d {lhs_dims=[0,1,2], rhs_dims=[0,1,2], out_dims=[0,1,2]} : i4[2,3,4]
  %bu = convert %b : u2[3,2,2]
  %z = convolution %e, %bu {lhs_dims=[0,1,2], rhs_dims=[0,1,2], out_dims=[0,1,2]} : u2[2,3,4]
  %du = convert %d : u4[3,2,2]
  %w = convolution %g, %du {lhs_dims=[0,1,2], rhs_dims=[0,1,2], out_dims=[0,1,2]} : u4[2,3,4]
  return %x, %y, %z, %w
}
`, func(p []*backend.Buffer) {
		setInts(p[0], -2, 1, -1, 0, 1, 1, -2, -2, 0, 1, -1, -1, 1, 0, -2, 1, 1, -2, -1, 0)
		setInts(p[1], 1, -2, -1, 1, -2, -2, 0, 1, 1, -1, -2, 1)
		setInts(p[2], -8, 7, -1, 5, 3, -6, 2, 7, -8, 0, 4, -3, 6, 1, -5, 7, -7, 2, 3, -4)
		setInts(p[3], 7, -8, 5, -3, 2, 6, -7, 1, 4, -5, 3, -1)
		setInts(p[4], 3, 1, 2, 0, 3, 3, 1, 2, 0, 1, 3, 2, 2, 1, 0, 3, 1, 2, 3, 3)
		setInts(p[5], 15, 8, 1, 0, 7, 9, 14, 3, 12, 5, 6, 11, 2, 13, 10, 4, 15, 15, 0, 8)
	}},
	// Oracle seed 20542: XLA:CPU's sort scrambled i2 values (1, 0, 0, -2
	// came back 1, 1, 1, -2); a comparator computing in the dtype (a + b
	// wraps in two bits) and a payload sorted with a sub-byte key.
	{"sub-byte sort", `func @f(%a: i2[2,4], %b: u4[2,4], %c: i4[8], %x: f32[8]) -> (i2[2,4], u4[2,4], i4[8], f32[8]) {
  %sa = sort %a {dimension=1, stable=true} : i2[2,4] (%p: i2[], %q: i2[]) {
      %g = compare %p, %q {dir=gt} : i1[]
      return %g
    }
  %sb = sort %b {dimension=1} : u4[2,4] (%p: u4[], %q: u4[]) {
      %l = compare %p, %q {dir=lt} : i1[]
      return %l
    }
  %sc, %sx = sort %c, %x {dimension=0, stable=true} : i4[8], f32[8] (%p: i4[], %q: i4[], %u: f32[], %v: f32[]) {
      %one = constant 1 : i4[]
      %p1 = add %p, %one : i4[]
      %q1 = add %q, %one : i4[]
      %l = compare %p1, %q1 {dir=lt} : i1[]
      return %l
    }
  return %sa, %sb, %sc, %sx
}
`, func(p []*backend.Buffer) {
		setInts(p[0], 0, 1, -2, 0, 0, -2, 1, -1)
		setInts(p[1], 15, 3, 8, 0, 7, 7, 1, 12)
		setInts(p[2], 7, -8, 3, 6, -1, 7, 0, -8)
		for i := range 8 {
			p[3].SetFloat64(i, float64(i)+0.5)
		}
	}},
	// Oracle seed 60326: XLA:CPU held popcnt's 2 over i2 unwrapped in a
	// fused reduction, so the maximum was 2 (-2 in i2) where 1 is; the
	// values that order (reduce_max, reduce_min, argmax, sort, top_k) come
	// from popcnt, clz and converts that wrap.
	{"sub-byte order of wrapped values", `func @f(%a: i8[4,5], %b: i8[6]) -> (i2[5], i2[5], i32[5], i4[6], u2[6], u2[2], i32[2]) {
  %x = convert %a : i2[4,5]
  %p = popcnt %x : i2[4,5]
  %mx = reduce_max %p {axes=[0]} : i2[5]
  %c = clz %x : i2[4,5]
  %mn = reduce_min %c {axes=[0]} : i2[5]
  %am = argmax %p {axis=0} : i32[5]
  %s = constant 9 : i8[6]
  %bs = add %b, %s : i8[6]
  %y = convert %bs : i4[6]
  %sy = sort %y {dimension=0, stable=true} : i4[6] (%u: i4[], %v: i4[]) {
      %l = compare %u, %v {dir=lt} : i1[]
      return %l
    }
  %z = convert %b : u2[6]
  %pz = popcnt %z : u2[6]
  %sz = sort %pz {dimension=0, stable=true} : u2[6] (%u: u2[], %v: u2[]) {
      %g = compare %u, %v {dir=gt} : i1[]
      return %g
    }
  %tv, %ti = top_k %pz {k=2} : u2[2], i32[2]
  return %mx, %mn, %am, %sy, %sz, %tv, %ti
}
`, func(p []*backend.Buffer) {
		setInts(p[0], -3, -5, 7, 5, -3, -2, 3, 0, 1, -3, 8, -3, -7, 8, 2, 2, 2, 6, -8, 7)
		setInts(p[1], 0, 1, 2, 3, -1, 7)
	}},
	// Oracle seeds 100154 and 100353: XLA:CPU counted the bits of a
	// negative i4's sign-extended byte in a fused reduce_sum (popcnt -2 = 7).
	{"sub-byte popcnt and clz summed", `func @f(%a: i8[2,6], %b: u8[2,6]) -> (i4[6], i4[6], i2[6], i2[6], u4[6], u4[6]) {
  %x = convert %a : i4[2,6]
  %px = popcnt %x : i4[2,6]
  %sx = reduce_sum %px {axes=[0]} : i4[6]
  %cx = clz %x : i4[2,6]
  %tx = reduce_sum %cx {axes=[0]} : i4[6]
  %y = convert %a : i2[2,6]
  %py = popcnt %y : i2[2,6]
  %sy = reduce_sum %py {axes=[0]} : i2[6]
  %cy = clz %y : i2[2,6]
  %ty = reduce_sum %cy {axes=[0]} : i2[6]
  %u = convert %b : u4[2,6]
  %pu = popcnt %u : u4[2,6]
  %su = reduce_sum %pu {axes=[0]} : u4[6]
  %cu = clz %u : u4[2,6]
  %tu = reduce_sum %cu {axes=[0]} : u4[6]
  return %sx, %tx, %sy, %ty, %su, %tu
}
`, func(p []*backend.Buffer) {
		setInts(p[0], -2, -1, -8, 7, 0, 1, -2, 3, -5, 6, -1, 2)
		setInts(p[1], 15, 0, 8, 7, 1, 3, 15, 12, 9, 2, 4, 0)
	}},
}

func setInts(b *backend.Buffer, vals ...int64) {
	for i, v := range vals {
		b.SetInt64(i, v)
	}
}

// unsignedChecks are the checks of unsignedPrograms, all or (wide) only
// those without sub-byte dtypes among their parameters and results.
func unsignedChecks(t *testing.T, wide bool) []*check {
	var checks []*check
	for _, p := range unsignedPrograms {
		m, err := tir.Parse(p.name+".tir", []byte(p.src))
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		f := m.Entry()
		inputs := make([]*backend.Buffer, len(f.Params))
		sub := false
		for i, v := range f.Params {
			inputs[i] = backend.New(v.Type)
			sub = sub || v.Type.DType.IsSubByte()
		}
		for _, r := range f.Results { // a sub-byte result is a sub-byte buffer too
			sub = sub || r.DType.IsSubByte()
		}
		if wide && sub {
			continue
		}
		p.inputs(inputs)
		exact := make([]bool, len(f.Results))
		for i := range exact {
			exact[i] = true
		}
		checks = append(checks, &check{name: p.name, key: unsafeName.ReplaceAllString(p.name, "_"), m: m, inputs: inputs,
			exact: exact, about: "edge inputs", repro: "go test ./internal/oracle -run TestUnsignedPrograms"})
	}
	return checks
}

// TestUnsignedPrograms: the reference executor and XLA:CPU agree exactly on
// unsigned and sub-byte programs at their edges, through the default passes
// and the lowering.
func TestUnsignedPrograms(t *testing.T) {
	checks := unsignedChecks(t, false)
	if failed := runAll(t, harness(t), checks); failed != 0 {
		t.Logf("%d of %d programs disagree", failed, len(checks))
	}
}

// TestUnsignedProgramsThroughPJRT runs the u16, u32 and u64 programs through
// tpucc's PJRT client (whose buffers carry u16 and u64 as PJRT's U16 and
// U64); sub-byte buffers are not carried by it.
func TestUnsignedProgramsThroughPJRT(t *testing.T) {
	checks := unsignedChecks(t, true)
	if len(checks) != 3 {
		t.Fatalf("%d wide programs, want 3", len(checks))
	}
	runThroughPJRT(t, pjrtBackend(t), checks)
}
