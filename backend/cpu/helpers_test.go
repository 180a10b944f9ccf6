package cpu

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Shorthands for types in tests.
func f32(d ...int64) ir.Type  { return ir.Tensor(ir.F32, d...) }
func f64(d ...int64) ir.Type  { return ir.Tensor(ir.F64, d...) }
func f16(d ...int64) ir.Type  { return ir.Tensor(ir.F16, d...) }
func bf16(d ...int64) ir.Type { return ir.Tensor(ir.BF16, d...) }
func i1(d ...int64) ir.Type   { return ir.Tensor(ir.I1, d...) }
func i8(d ...int64) ir.Type   { return ir.Tensor(ir.I8, d...) }
func i16(d ...int64) ir.Type  { return ir.Tensor(ir.I16, d...) }
func i32(d ...int64) ir.Type  { return ir.Tensor(ir.I32, d...) }
func i64(d ...int64) ir.Type  { return ir.Tensor(ir.I64, d...) }
func u8(d ...int64) ir.Type   { return ir.Tensor(ir.U8, d...) }
func u32(d ...int64) ir.Type  { return ir.Tensor(ir.U32, d...) }

var (
	inf = math.Inf(1)
	nan = math.NaN()
)

// negZero is -0.0 (a constant expression cannot spell it).
var negZero = math.Copysign(0, -1)

// opCase is one instruction applied to operands, with the expected results.
type opCase struct {
	name string
	op   ir.Op
	attr ir.Attr
	hint []ir.Type // result types, for ops that need them
	args []*backend.Buffer
	want []*backend.Buffer
}

// runOp builds @f(params...) { results = op params; return results } with
// ir.Builder and runs it with Run.
func runOp(op ir.Op, attr ir.Attr, hint []ir.Type, args ...*backend.Buffer) ([]*backend.Buffer, error) {
	m := ir.NewModule("t.tir")
	names := make([]string, len(args))
	types := make([]ir.Type, len(args))
	for i, a := range args {
		names[i] = string(rune('a' + i))
		types[i] = a.Type()
	}
	f := m.NewFunc("f", names, types, nil, ir.Pos{File: "t.tir", Line: 1, Col: 1})
	b := ir.NewBuilder(f)
	b.Pos = ir.Pos{File: "t.tir", Line: 2, Col: 3}
	in, err := b.Emit(op, attr, hint, f.Params...)
	if err != nil {
		return nil, fmt.Errorf("building: %v", err)
	}
	for _, r := range in.Results {
		f.Results = append(f.Results, r.Type)
	}
	b.Return(in.Results...)
	return Run(m, f, args)
}

func runCases(t *testing.T, cases []opCase) {
	t.Helper()
	for _, c := range cases {
		name := c.name
		if name == "" {
			name = c.op.String()
		}
		got, err := runOp(c.op, c.attr, c.hint, c.args...)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %d results, want %d", name, len(got), len(c.want))
			continue
		}
		for i := range got {
			if msg := diff(got[i], c.want[i]); msg != "" {
				t.Errorf("%s: result %d: %s", name, i, msg)
			}
		}
	}
}

// diff compares exactly: types, then elements bit for bit (any NaN equals any
// NaN, but -0 and +0 differ).
func diff(got, want *backend.Buffer) string {
	if !got.Type().Equal(want.Type()) {
		return fmt.Sprintf("type %s, want %s", got.Type(), want.Type())
	}
	if err := checkBuffer(got); err != nil {
		return err.Error()
	}
	same := got.Len() == want.Len()
	for i := 0; same && i < got.Len(); i++ {
		if got.Type().DType.IsFloat() {
			a, b := got.Float64At(i), want.Float64At(i)
			same = (math.IsNaN(a) && math.IsNaN(b)) || math.Float64bits(a) == math.Float64bits(b)
		} else {
			same = got.Int64At(i) == want.Int64At(i)
		}
	}
	if same {
		return ""
	}
	return fmt.Sprintf("got %s\n\twant %s", show(got), show(want))
}

// show prints elements with full precision and the sign of zeros.
func show(t *backend.Buffer) string {
	parts := make([]string, t.Len())
	for i := range parts {
		if t.Type().DType.IsFloat() {
			v := t.Float64At(i)
			parts[i] = fmt.Sprint(v)
			if v == 0 && math.Signbit(v) {
				parts[i] = "-0"
			}
		} else {
			parts[i] = fmt.Sprint(t.Int64At(i))
		}
	}
	return t.Type().String() + " [" + strings.Join(parts, " ") + "]"
}

// F and I build tensors without any rounding surprises in expectations.
func F(t ir.Type, v ...float64) *backend.Buffer { return backend.FromFloats(t, v...) }
func I(t ir.Type, v ...int64) *backend.Buffer   { return backend.FromInts(t, v...) }

// r32 rounds to f32: the expected value of an f32 op computed exactly.
func r32(v float64) float64 { return float64(float32(v)) }

func ts(x ...*backend.Buffer) []*backend.Buffer { return x }
func tys(x ...ir.Type) []ir.Type                { return x }
