package cpu

import (
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

func TestRandomInputs(t *testing.T) {
	m := ir.NewModule("")
	types := []ir.Type{f32(1000), bf16(1000), i8(1000), u32(1000), i1(1000), f64()}
	f := m.NewFunc("f", nil, types, nil, ir.Pos{})
	a, b := RandomInputs(f, 7), RandomInputs(f, 7)
	c := RandomInputs(f, 8)
	for i, x := range a {
		if !x.Type().Equal(types[i]) {
			t.Fatalf("input %d is %s, want %s", i, x.Type(), types[i])
		}
		if diff(x, b[i]) != "" {
			t.Errorf("input %d differs between two draws with seed 7", i)
		}
		if x.Len() > 1 && diff(x, c[i]) == "" {
			t.Errorf("input %d is the same for seeds 7 and 8", i)
		}
	}
	in := func(x *backend.Buffer, lo, hi float64, hiOpen bool) {
		seenLo, seenHi := false, false
		for k := 0; k < x.Len(); k++ {
			v := x.Float64At(k)
			if v < lo || v > hi || (hiOpen && v == hi) {
				t.Errorf("%s element %d = %v is outside [%v, %v]", x.Type(), k, v, lo, hi)
				return
			}
			seenLo = seenLo || v == lo
			seenHi = seenHi || v == hi
		}
		if !hiOpen && (!seenLo || !seenHi) {
			t.Errorf("%s: 1000 draws never reached %v or %v", x.Type(), lo, hi)
		}
	}
	in(a[0], -2, 2, true)
	in(a[1], -2, 2, true)
	in(a[2], -8, 8, false)
	in(a[3], 0, 16, false)
	in(a[4], 0, 1, false)
	for k := range a[1].Len() {
		if v := a[1].Float64At(k); ir.BF16.RoundFloat(v) != v {
			t.Fatalf("bf16 element %d = %v is not a bf16 value", k, v)
		}
	}
	// A parameter's values do not depend on the other parameters' types.
	g := m.NewFunc("g", nil, []ir.Type{f32(1000), i32(5)}, nil, ir.Pos{})
	if d := RandomInputs(g, 7); diff(d[0], a[0]) != "" {
		t.Error("changing parameter 1 changed parameter 0's values")
	}
	// Symbolic shapes get nil.
	h := m.NewFunc("h", nil, []ir.Type{{DType: ir.F32, Shape: []ir.Dim{{Sym: "B"}}}}, nil, ir.Pos{})
	if d := RandomInputs(h, 1); d[0] != nil {
		t.Errorf("symbolic parameter got %s", d[0].Type())
	}
}
