package stablehlo

import (
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
)

func TestFloatText(t *testing.T) {
	for _, c := range []struct {
		v    float64
		d    ir.DType
		want string
	}{
		{1, ir.F32, "1.000000e+00"},
		{-2.5, ir.F32, "-2.500000e+00"},
		{negZ, ir.F32, "-0.000000e+00"},
		{0.1, ir.F32, "1.0000000149011612e-01"}, // the f32 nearest 0.1, exactly
		{0.1, ir.F64, "1.000000e-01"},
		{0.1, ir.BF16, "1.0009765625e-01"},
		{65504, ir.F16, "6.550400e+04"},
		{1e-45, ir.F32, "1.401298464324817e-45"}, // the smallest subnormal
		{nan, ir.F32, "0x7FC00000"},
		{negNaN, ir.F32, "0xFFC00000"},
		{inf, ir.F32, "0x7F800000"},
		{-inf, ir.BF16, "0xFF80"},
		{inf, ir.F16, "0x7C00"},
		{nan, ir.F16, "0x7E00"},
		{-inf, ir.F64, "0xFFF0000000000000"},
		{nan, ir.F64, "0x7FF8000000000000"},
	} {
		if got := floatText(c.v, c.d); got != c.want {
			t.Errorf("floatText(%v, %s) = %s, want %s", c.v, c.d, got, c.want)
		}
	}
}

// MLIR reads a float literal as a double and rounds it to the element type:
// every finite value must come back bit for bit, so the decimal must be exact.
func TestFloatTextExact(t *testing.T) {
	check := func(v float64, d ir.DType) {
		s := floatText(v, d)
		if !strings.ContainsAny(s, ".") {
			t.Fatalf("floatText(%v, %s) = %s has no '.', which MLIR needs", v, d, s)
		}
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(back) != math.Float64bits(v) {
			t.Fatalf("floatText(%v, %s) = %s reads back as %v", v, d, s, back)
		}
	}
	for bits := 0; bits < 1<<16; bits++ {
		for _, d := range []ir.DType{ir.BF16, ir.F16} {
			var v float64
			if d == ir.BF16 {
				v = float64(ir.BF16ToFloat32(uint16(bits)))
			} else {
				v = float64(ir.F16ToFloat32(uint16(bits)))
			}
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				check(v, d)
			}
		}
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 200000; i++ {
		f := math.Float32frombits(r.Uint32())
		if g := float64(f); !math.IsNaN(g) && !math.IsInf(g, 0) {
			check(g, ir.F32)
		}
		g := math.Float64frombits(r.Uint64())
		if !math.IsNaN(g) && !math.IsInf(g, 0) {
			check(g, ir.F64)
		}
	}
}

func TestDenseAttr(t *testing.T) {
	f32 := func(dims ...int64) ir.Type { return ir.Tensor(ir.F32, dims...) }
	hundredOne := make([]int64, 101)
	hundredOne[1] = 1
	for _, c := range []struct {
		l    *ir.Literal
		t    ir.Type
		want string
	}{
		{&ir.Literal{Floats: []float64{2}}, f32(2, 3), "dense<2.000000e+00>"},
		{&ir.Literal{Floats: []float64{1, 1, 1}}, f32(3), "dense<1.000000e+00>"},
		{&ir.Literal{Floats: []float64{0, negZ}}, f32(2), "dense<[0.000000e+00, -0.000000e+00]>"},
		{&ir.Literal{Floats: []float64{nan, nan}}, f32(2), "dense<0x7FC00000>"},
		{&ir.Literal{Floats: []float64{1, 2, 3, 4}}, f32(2, 2), "dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]>"},
		{&ir.Literal{Ints: []int64{1, 0}}, ir.Tensor(ir.I1, 2), "dense<[true, false]>"},
		{&ir.Literal{Ints: []int64{-1}}, ir.Tensor(ir.U8, 2), "dense<255>"},
		{&ir.Literal{Floats: []float64{}}, f32(0, 3), "dense<>"},
		{&ir.Literal{Ints: hundredOne}, ir.Tensor(ir.I1, 101), `dense<"0x0001` + strings.Repeat("00", 99) + `">`},
		{&ir.Literal{Floats: []float64{1, 2}}, ir.Tensor(ir.BF16, 1, 2), "dense<[[1.000000e+00, 2.000000e+00]]>"},
	} {
		if got := denseAttr(c.l, c.t); got != c.want {
			t.Errorf("denseAttr(%v, %s) = %s, want %s", c.l, c.t, got, c.want)
		}
	}
	// Raw hex is little-endian in the element's own width.
	l := &ir.Literal{Floats: make([]float64, 101)}
	l.Floats[0] = 1
	got := denseAttr(l, ir.Tensor(ir.BF16, 101))
	if want := `dense<"0x803F` + strings.Repeat("0000", 100) + `">`; got != want {
		t.Errorf("bf16 hex: got %s, want %s", got, want)
	}
}

func TestSymbol(t *testing.T) {
	for in, want := range map[string]string{
		"jit_f":        "jit_f",
		"my.model-2":   "my.model-2",
		"a$b":          "a$b",
		"2fast":        `"2fast"`,
		"has space":    `"has space"`,
		`say "hi"`:     `"say \22hi\22"`,
		"":             `""`,
		"back\\slash":  `"back\5Cslash"`,
		"tab\there":    `"tab\09here"`,
		"unicode·name": `"unicode\C2\B7name"`,
	} {
		if got := symbol(in); got != want {
			t.Errorf("symbol(%q) = %s, want %s", in, got, want)
		}
	}
	if got := sanitize("a b/c.d-e"); got != "a_b_c.d-e" {
		t.Errorf("sanitize: got %s", got)
	}
}

func TestLowerErrors(t *testing.T) {
	if _, err := Lower(ir.NewModule("empty.tir"), Options{}); err == nil || err.Error() != "empty.tir: error: nothing to lower: the module has no functions" {
		t.Errorf("empty module: got %v", err)
	}

	// An instruction with a region (a fusion) cannot be lowered; the error is at it.
	m := ir.NewModule("fused.tir")
	x := ir.Tensor(ir.F32, 2)
	f := m.NewFunc("f", []string{"x"}, []ir.Type{x}, []ir.Type{x}, ir.Pos{File: "fused.tir", Line: 1, Col: 1})
	in := f.NewInstr(ir.OpNeg, nil, f.Params, []ir.Type{x}, ir.Pos{File: "fused.tir", Line: 2, Col: 3})
	in.Regions = []*ir.Block{{}}
	f.Body.Append(in)
	f.Body.Append(f.NewInstr(ir.OpReturn, nil, in.Results, nil, ir.Pos{File: "fused.tir", Line: 3, Col: 3}))
	_, err := Lower(m, Options{})
	if want := "fused.tir:2:3: error: cannot lower neg with a region: lower before fusing"; err == nil || err.Error() != want {
		t.Errorf("region: got %v, want %s", err, want)
	}

	// Symbols are reported at the value's definition, naming it as ir.Print does.
	m = ir.NewModule("sym.tir")
	b3 := ir.Type{DType: ir.F32, Shape: []ir.Dim{{Sym: "B"}, {Sym: "S"}, {Sym: "T"}}}
	f = m.NewFunc("f", nil, []ir.Type{b3}, []ir.Type{b3}, ir.Pos{File: "sym.tir", Line: 4, Col: 2})
	ir.NewBuilder(f).Return(f.Params[0])
	_, err = Lower(m, Options{})
	if want := "sym.tir:4:2: error: lowering needs static shapes: %0 has f32[B,S,T]; give B, S and T sizes"; err == nil || err.Error() != want {
		t.Errorf("symbolic: got %v, want %s", err, want)
	}
}

// TestModuleNameDefault: "jit_" + the entry's name, sanitized; ModuleName is used as given.
func TestModuleName(t *testing.T) {
	m := ir.NewModule("n.tir")
	x := ir.Tensor(ir.F32, 2)
	f := m.NewFunc("step.v2", []string{"x"}, []ir.Type{x}, []ir.Type{x}, ir.Pos{})
	ir.NewBuilder(f).Return(f.Params[0])
	for _, c := range []struct{ name, want string }{
		{"", "module @jit_step.v2 attributes"},
		{"my model", `module @"my model" attributes`},
	} {
		got, err := Lower(m, Options{ModuleName: c.name})
		if err != nil || !strings.HasPrefix(got, c.want) {
			t.Errorf("ModuleName %q: got %q, %v; want prefix %q", c.name, got, err, c.want)
		}
	}
}

// Every op of ir's table has a lowering.
func TestEveryOpLowered(t *testing.T) {
	for _, op := range ir.Ops() {
		if !lowered(op) {
			t.Errorf("%s has no lowering: a unary or binary op needs its StableHLO name in ir's op table (OpInfo.StableHLO), any other op a case in lower/stablehlo (lowered, lower.go)", op)
		}
	}
}
