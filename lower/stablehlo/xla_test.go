package stablehlo

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

// The XLA acceptance tests: every op's lowering, built with ir.Builder, goes
// through XLA's parser, verifier and compiler and runs on XLA:CPU with
// hand-chosen inputs, edge cases included; the outputs must be the values the
// op's contract gives. The harness must exist: a missing one fails the test.

// xc is one acceptance case: a function of the inputs (its parameters take the
// inputs' types), or a whole module, and the outputs it must give.
type xc struct {
	name    string
	in      []*npy.Array
	f       func(b *ir.Builder, p []*ir.Value) []*ir.Value
	mod     func() *ir.Module // instead of f: a whole module
	entry   string            // Options.Entry for Lower
	modName string            // Options.ModuleName for Lower
	donate  []int             // Options.Donate for Lower
	want    []*npy.Array
	tol     float64 // 0: bit exact (zero signs and NaNs included); else |got-want| <= tol*(1+|want|)
}

var (
	nan    = math.NaN()
	negNaN = math.Copysign(math.NaN(), -1)
	inf    = math.Inf(1)
	negZ   = math.Copysign(0, -1)
)

// arr builds an array of dtype dt and shape from float values (integers wrap, i1 is != 0).
func arr(dt ir.DType, shape []int64, vals ...float64) *npy.Array {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	if int64(len(vals)) != n {
		panic(fmt.Sprintf("arr: %d values for shape %v", len(vals), shape))
	}
	conv := func(f func(float64) uint16) []uint16 {
		out := make([]uint16, len(vals))
		for i, v := range vals {
			out[i] = f(v)
		}
		return out
	}
	switch dt {
	case ir.F32:
		return npy.Of(shape, mapVals(vals, func(v float64) float32 { return float32(v) }))
	case ir.F64:
		return npy.Of(shape, vals)
	case ir.BF16:
		return npy.OfBits("bf16", shape, conv(func(v float64) uint16 { return ir.Float32ToBF16(float32(v)) }))
	case ir.F16:
		return npy.OfBits("f16", shape, conv(func(v float64) uint16 { return ir.Float32ToF16(float32(v)) }))
	case ir.I1:
		return npy.Of(shape, mapVals(vals, func(v float64) bool { return v != 0 }))
	case ir.I8:
		return npy.Of(shape, mapVals(vals, func(v float64) int8 { return int8(int64(v)) }))
	case ir.I16:
		return npy.Of(shape, mapVals(vals, func(v float64) int16 { return int16(int64(v)) }))
	case ir.I32:
		return npy.Of(shape, mapVals(vals, func(v float64) int32 { return int32(int64(v)) }))
	case ir.I64:
		return npy.Of(shape, mapVals(vals, func(v float64) int64 { return int64(v) }))
	case ir.U8:
		return npy.Of(shape, mapVals(vals, func(v float64) uint8 { return uint8(int64(v)) }))
	case ir.U32:
		return npy.Of(shape, mapVals(vals, func(v float64) uint32 { return uint32(int64(v)) }))
	case ir.C64: // imaginary parts 0.5-v/4, so that they differ from the real ones
		return npy.Of(shape, mapVals(vals, func(v float64) complex64 { return complex(float32(v), float32(0.5-v/4)) }))
	case ir.C128:
		return npy.Of(shape, mapVals(vals, func(v float64) complex128 { return complex(v, 0.5-v/4) }))
	case ir.U16:
		return npy.Of(shape, mapVals(vals, func(v float64) uint16 { return uint16(int64(v)) }))
	case ir.U64:
		return npy.Of(shape, mapVals(vals, func(v float64) uint64 { return uint64(int64(v)) }))
	case ir.I2, ir.I4, ir.U2, ir.U4: // a byte each, the low bits (ml_dtypes' form)
		return &npy.Array{DType: dt.String(), Shape: shape, Data: mapVals(vals, func(v float64) byte {
			return byte(int64(v)) & byte(1<<dt.Bits()-1)
		})}
	}
	panic("arr: dtype " + dt.String())
}

func mapVals[T any](vals []float64, f func(float64) T) []T {
	out := make([]T, len(vals))
	for i, v := range vals {
		out[i] = f(v)
	}
	return out
}

func sh(dims ...int64) []int64 { return dims }

// apply maps f over vals, rounding each result into dt as the executor does.
func apply(dt ir.DType, vals []float64, f func(float64) float64) []float64 {
	out := make([]float64, len(vals))
	for i, v := range vals {
		r := f(v)
		if dt != ir.F64 {
			r = dt.RoundFloat(float64(float32(r)))
		}
		out[i] = r
	}
	return out
}

func typeOf(a *npy.Array) ir.Type {
	d, ok := ir.ParseDType(a.DType)
	if !ok {
		panic("typeOf: " + a.DType)
	}
	return ir.Tensor(d, a.Shape...)
}

// --- Builder shorthands for the cases. ---

func op(b *ir.Builder, o ir.Op, attr ir.Attr, args ...*ir.Value) *ir.Value {
	return b.Op1(o, attr, args...)
}

func typed(b *ir.Builder, o ir.Op, attr ir.Attr, t ir.Type, args ...*ir.Value) *ir.Value {
	return b.Typed(o, attr, &t, args...)
}

func multi(b *ir.Builder, o ir.Op, attr ir.Attr, args ...*ir.Value) []*ir.Value {
	in, err := b.Emit(o, attr, nil, args...)
	if err != nil {
		panic(err)
	}
	return in.Results
}

func vals(vs ...*ir.Value) []*ir.Value { return vs }

// module builds the case's module: @main over the inputs' types.
func (c *xc) module() *ir.Module {
	if c.mod != nil {
		return c.mod()
	}
	m := ir.NewModule(c.name + ".tir")
	params := make([]ir.Type, len(c.in))
	for i, a := range c.in {
		params[i] = typeOf(a)
	}
	f := m.NewFunc("main", nil, params, nil, ir.Pos{})
	b := ir.NewBuilder(f)
	outs := c.f(b, f.Params)
	for _, o := range outs {
		f.Results = append(f.Results, o.Type)
	}
	b.Return(outs...)
	return m
}

func TestXLA(t *testing.T) {
	h, err := xlacheck.Find()
	if err != nil {
		t.Fatal(err)
	}
	var all []xc
	for _, group := range [][]xc{elementwiseCases(), shapeCases(), reduceCases(), indexCases(), compositeCases(), moduleCases(), edgeCases(), donateCases()} {
		all = append(all, group...)
	}
	var cases []xlacheck.Case
	for i := range all {
		c := &all[i]
		m := c.module()
		if err := ir.Verify(m); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, ir.Print(m))
		}
		text, err := Lower(m, Options{Entry: c.entry, ModuleName: c.modName, Donate: c.donate})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(c.donate) > 0 && !strings.Contains(text, "tf.aliasing_output") && !strings.Contains(text, "jax.buffer_donor") {
			t.Fatalf("%s: donated parameters are not marked:\n%s", c.name, text)
		}
		cases = append(cases, xlacheck.Case{ID: c.name, Module: text, Inputs: c.in})
	}
	results, err := h.Run(cases)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		c := &all[i]
		if !r.OK {
			t.Errorf("%s: XLA %s failed: %s\n%s\nrepro: %s", c.name, r.Stage, r.Error, cases[i].Module, r.Repro)
			continue
		}
		if len(r.Outputs) != len(c.want) {
			t.Errorf("%s: %d outputs, want %d", c.name, len(r.Outputs), len(c.want))
			continue
		}
		for k, got := range r.Outputs {
			if msg := compareArrays(got, c.want[k], c.tol); msg != "" {
				t.Errorf("%s: output %d: %s\n%s", c.name, k, msg, cases[i].Module)
			}
		}
	}
}

// donateCases are programs whose parameters are donated (aliased to a
// result, or buffer donors): XLA must accept the marks and give the same
// numbers as without them.
func donateCases() []xc {
	x := arr(ir.F32, sh(3), 1, 2, 3)
	y := arr(ir.F32, sh(3), 10, 20, 30)
	return []xc{
		{name: "donate_aliased", in: ins(x), donate: []int{0}, want: []*npy.Array{arr(ir.F32, sh(3), 2, 4, 6)},
			f: func(b *ir.Builder, p []*ir.Value) []*ir.Value { return vals(op(b, ir.OpAdd, nil, p[0], p[0])) }},
		{name: "donate_two_swapped", in: ins(x, y), donate: []int{1, 0},
			want: []*npy.Array{arr(ir.F32, sh(3), 20, 40, 60), arr(ir.F32, sh(3), 11, 22, 33)},
			f: func(b *ir.Builder, p []*ir.Value) []*ir.Value {
				return vals(op(b, ir.OpAdd, nil, p[1], p[1]), op(b, ir.OpAdd, nil, p[0], p[1]))
			}},
		{name: "donate_buffer_donor", in: ins(x), donate: []int{0}, want: []*npy.Array{arr(ir.F32, nil, 6)},
			f: func(b *ir.Builder, p []*ir.Value) []*ir.Value {
				return vals(op(b, ir.OpReduceSum, &ir.AxesAttr{Axes: []int64{0}}, p[0]))
			}},
	}
}

// compareArrays says how got differs from want, or "" when it does not.
func compareArrays(got, want *npy.Array, tol float64) string {
	if got.DType != want.DType || fmt.Sprint(got.Shape) != fmt.Sprint(want.Shape) {
		return fmt.Sprintf("got %s%v, want %s%v", got.DType, got.Shape, want.DType, want.Shape)
	}
	g, err1 := npy.Float64s(got)
	w, err2 := npy.Float64s(want)
	if err1 != nil || err2 != nil {
		return fmt.Sprint(err1, err2)
	}
	var bad []string
	for i := range w {
		ok := false
		switch {
		case math.IsNaN(w[i]):
			ok = math.IsNaN(g[i])
		case tol == 0:
			ok = g[i] == w[i] && math.Signbit(g[i]) == math.Signbit(w[i])
		default:
			ok = math.Abs(g[i]-w[i]) <= tol*(1+math.Abs(w[i]))
		}
		if !ok {
			bad = append(bad, fmt.Sprintf("[%d] got %v want %v", i, g[i], w[i]))
		}
	}
	if len(bad) > 0 {
		return fmt.Sprintf("got %v\nwant %v\n%s", g, w, strings.Join(bad, "\n"))
	}
	return ""
}
