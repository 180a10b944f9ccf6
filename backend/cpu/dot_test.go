package cpu

import (
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

func dims(b, c []int64, rb, rc []int64) *ir.DotAttr {
	return &ir.DotAttr{LhsBatch: b, LhsContract: c, RhsBatch: rb, RhsContract: rc}
}

func TestDotGeneral(t *testing.T) {
	a23 := F(f32(2, 3), 1, 2, 3, 4, 5, 6)
	b32 := F(f32(3, 2), 7, 8, 9, 10, 11, 12)
	runCases(t, []opCase{
		{name: "matmul", op: ir.OpDotGeneral, attr: dims(nil, []int64{1}, nil, []int64{0}),
			args: ts(a23, b32), want: ts(F(f32(2, 2), 58, 64, 139, 154))},
		{name: "matmul rhs transposed", op: ir.OpDotGeneral, attr: dims(nil, []int64{1}, nil, []int64{1}),
			args: ts(a23, F(f32(2, 3), 7, 9, 11, 8, 10, 12)), want: ts(F(f32(2, 2), 58, 64, 139, 154))},
		{name: "lhs contracted on dim 0", op: ir.OpDotGeneral, attr: dims(nil, []int64{0}, nil, []int64{0}),
			args: ts(F(f32(3, 2), 1, 4, 2, 5, 3, 6), b32), want: ts(F(f32(2, 2), 58, 64, 139, 154))},
		{name: "vector dot", op: ir.OpDotGeneral, attr: dims(nil, []int64{0}, nil, []int64{0}),
			args: ts(F(f32(3), 1, 2, 3), F(f32(3), 4, 5, 6)), want: ts(F(f32(), 32))},
		{name: "outer product", op: ir.OpDotGeneral, attr: dims(nil, nil, nil, nil),
			args: ts(I(i32(2), 1, 2), I(i32(3), 3, 4, 5)), want: ts(I(i32(2, 3), 3, 4, 5, 6, 8, 10))},
		// Batch dimension in the middle of lhs and last in rhs: result [batch, lhs free, rhs free].
		{name: "batch not leading", op: ir.OpDotGeneral, attr: dims([]int64{1}, []int64{2}, []int64{2}, []int64{0}),
			// lhs [m=1, b=2, k=2], rhs [k=2, n=1, b=2]
			args: ts(F(f32(1, 2, 2), 1, 2, 3, 4), F(f32(2, 1, 2), 1, 10, 100, 1000)),
			want: ts(F(f32(2, 1, 1), 201, 4030))},
		{name: "two contracting dims", op: ir.OpDotGeneral, attr: dims(nil, []int64{0, 1}, nil, []int64{1, 0}),
			// Σ_ij a[i,j]*b[j,i] = trace(a·b) for 2x2: a=[[1,2],[3,4]], b=[[5,6],[7,8]] -> 19+50=69
			args: ts(F(f32(2, 2), 1, 2, 3, 4), F(f32(2, 2), 5, 6, 7, 8)), want: ts(F(f32(), 69))},
		{name: "empty contraction", op: ir.OpDotGeneral, attr: dims(nil, []int64{1}, nil, []int64{0}),
			args: ts(F(f32(2, 0)), F(f32(0, 3))), want: ts(F(f32(2, 3), 0))},
		{name: "empty free dim", op: ir.OpDotGeneral, attr: dims(nil, []int64{1}, nil, []int64{0}),
			args: ts(F(f32(0, 2)), F(f32(2, 3), 1, 2, 3, 4, 5, 6)), want: ts(F(f32(0, 3)))},
		// Integers wrap into the result dtype: 100*2 + 100*2 = 400 -> i8 -112, i32 400.
		{name: "i8 wraps", op: ir.OpDotGeneral, attr: dims(nil, []int64{0}, nil, []int64{0}),
			args: ts(I(i8(2), 100, 100), I(i8(2), 2, 2)), want: ts(I(i8(), -112))},
		{name: "i8 to i32", op: ir.OpDotGeneral, attr: dims(nil, []int64{0}, nil, []int64{0}), hint: tys(i32()),
			args: ts(I(i8(2), 100, 100), I(i8(2), 2, 2)), want: ts(I(i32(), 400))},
		{name: "u32 wraps", op: ir.OpDotGeneral, attr: dims(nil, []int64{0}, nil, []int64{0}),
			args: ts(I(u32(2), 1<<31, 3), I(u32(2), 2, 5)), want: ts(I(u32(), 15))},
		// bf16: products and sum in f32, rounded once: 1 + 2^-8 + 2^-8 = 1+2^-7,
		// where rounding after each add would give 1.
		{name: "bf16 rounds once", op: ir.OpDotGeneral, attr: dims(nil, []int64{0}, nil, []int64{0}),
			args: ts(F(bf16(3), 1, 1.0/256, 1.0/256), F(bf16(3), 1, 1, 1)), want: ts(F(bf16(), 1+1.0/128))},
		{name: "bf16 to f32", op: ir.OpDotGeneral, attr: dims(nil, []int64{0}, nil, []int64{0}), hint: tys(f32()),
			args: ts(F(bf16(2), 1, 1.0/512), F(bf16(2), 1, 1)), want: ts(F(f32(), 1+1.0/512))},
		{name: "f16", op: ir.OpDotGeneral, attr: dims(nil, []int64{0}, nil, []int64{0}),
			args: ts(F(f16(2), 60000, 60000), F(f16(2), 1, 1)), want: ts(F(f16(), inf))},
		{name: "f64", op: ir.OpDotGeneral, attr: dims(nil, []int64{0}, nil, []int64{0}),
			args: ts(F(f64(2), 0.1, 0.2), F(f64(2), 1, 1)), want: ts(F(f64(), 0.30000000000000004))},
	})
}

// TestDotLarge checks a transformer-sized matmul against a naive loop nest,
// exactly: both sum integers, so the order of additions cannot matter.
func TestDotLarge(t *testing.T) {
	const m, k, n = 64, 256, 1024
	a := backend.New(f32(m, k))
	b := backend.New(f32(k, n))
	for i := range a.Len() {
		a.SetFloat64(i, float64(i%7-3))
	}
	for i := range b.Len() {
		b.SetFloat64(i, float64(i%5-2))
	}
	got, err := runOp(ir.OpDotGeneral, dims(nil, []int64{1}, nil, []int64{0}), nil, a, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, ij := range [][2]int{{0, 0}, {1, 2}, {63, 1023}, {17, 512}, {40, 999}} {
		i, j := ij[0], ij[1]
		want := 0.0
		for p := 0; p < k; p++ {
			want += a.Float64At(i*k+p) * b.Float64At(p*n+j)
		}
		if g := got[0].Float64At(i*n + j); g != want {
			t.Errorf("[%d,%d] = %v, want %v", i, j, g, want)
		}
	}
}
