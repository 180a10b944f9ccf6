package trace_test

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/frontend/trace"
	"github.com/tpucc/tpucc/ir"
)

// A while whose do region holds a case indexed by %k whose branches use %w,
// parameters of the function: both are carried into the while in the order
// first used (the do returns them unchanged, the cond takes them unused),
// and %w is passed to the case as an operand after those given.
func TestWhileControlCapturesThroughRegions(t *testing.T) {
	tr := trace.New("f")
	x := tr.Param("x", f32(2))
	w := tr.Param("w", f32(2))
	k := tr.Param("k", ir.Scalar(ir.I32))
	pos := ir.Pos{File: "user.go", Line: 3}
	emit := func(op ir.Op, args ...*ir.Value) *ir.Value {
		v, err := tr.Emit(pos, op, nil, nil, args...)
		if err != nil {
			t.Fatal(err)
		}
		return v[0]
	}
	res, err := tr.Control(pos, ir.OpWhile, []*ir.Value{x},
		func(ps []*ir.Value) ([]*ir.Value, error) {
			lim := tr.Const(pos, ir.Scalar(ir.F32), &ir.Literal{Floats: []float64{100}})
			s, err := tr.Emit(pos, ir.OpReduceSum, &ir.AxesAttr{Axes: []int64{0}}, nil, ps[0])
			if err != nil {
				return nil, err
			}
			v, err := tr.Emit(pos, ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpLT}, nil, s[0], lim)
			return v, err
		},
		func(ps []*ir.Value) ([]*ir.Value, error) {
			return tr.Control(pos, ir.OpCase, []*ir.Value{k, ps[0]},
				func(qs []*ir.Value) ([]*ir.Value, error) { return []*ir.Value{emit(ir.OpAdd, qs[0], w)}, nil },
				func(qs []*ir.Value) ([]*ir.Value, error) { return []*ir.Value{emit(ir.OpMul, qs[0], w)}, nil })
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("%d results, want the 1 carried value given", len(res))
	}
	m, err := tr.Finish(res[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `func @f(%x: f32[2], %w: f32[2], %k: i32[]) -> f32[2] {
  %0, %1, %2 = while %x, %k, %w : f32[2], i32[], f32[2] cond (%3: f32[2], %4: i32[], %5: f32[2]) {
      %6 = constant 100.0 : f32[]
      %7 = reduce_sum %3 {axes=[0]} : f32[]
      %8 = compare %7, %6 {dir=lt} : i1[]
      return %8
    } do (%9: f32[2], %10: i32[], %11: f32[2]) {
      %12 = case %10, %9, %11 : f32[2] (%13: f32[2], %14: f32[2]) {
          %15 = add %13, %14 : f32[2]
          return %15
        } (%16: f32[2], %17: f32[2]) {
          %18 = mul %16, %17 : f32[2]
          return %18
        }
      return %12, %10, %11
    }
  return %0
}
`
	if got := ir.Print(m); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A value of a region that has ended is refused where it is used again.
func TestWhileControlRegionValueEscapes(t *testing.T) {
	tr := trace.New("f")
	x := tr.Param("x", f32(2))
	pos := ir.Pos{File: "user.go", Line: 9}
	var inner *ir.Value
	_, err := tr.Control(pos, ir.OpCase, []*ir.Value{tr.Const(pos, ir.Scalar(ir.I32), &ir.Literal{Ints: []int64{0}}), x},
		func(ps []*ir.Value) ([]*ir.Value, error) {
			v, err := tr.Emit(pos, ir.OpNeg, nil, nil, ps[0])
			inner = v[0]
			return v, err
		})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.Emit(ir.Pos{File: "user.go", Line: 10}, ir.OpAdd, nil, nil, x, inner)
	want := "user.go:10: error: operand 1 of add (f32[2]) was defined inside a while or case region that has ended: a region's values leave it only as its results"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if _, err := tr.Control(pos, ir.OpWhile, []*ir.Value{x}); err == nil || !strings.HasSuffix(err.Error(), "while needs a cond and a do body, got 0 bodies") {
		t.Errorf("while without bodies: %v", err)
	}
}
