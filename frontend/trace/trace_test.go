package trace_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/tpucc/tpucc/frontend/trace"
	"github.com/tpucc/tpucc/ir"
)

func f32(d ...int64) ir.Type { return ir.Tensor(ir.F32, d...) }

// here is the position of its caller's line, as CallerPos reports it.
func here() ir.Pos {
	_, _, line, _ := runtime.Caller(1)
	return ir.Pos{File: "trace_test.go", Line: line}
}

func TestBuildAndFinish(t *testing.T) {
	tr := trace.New("f")
	x := tr.Param("x", f32(2, 3))
	w := tr.Param("w", f32(3))
	pos := ir.Pos{File: "user.go", Line: 7}
	b, err := tr.Emit(pos, ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{1}}, []ir.Type{f32(2, 3)}, w)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tr.Emit(pos, ir.OpAdd, nil, nil, x, b[0])
	if err != nil {
		t.Fatal(err)
	}
	c := tr.Const(pos, ir.Scalar(ir.F32), &ir.Literal{Floats: []float64{0.5}})
	top, err := tr.Emit(pos, ir.OpTopK, &ir.TopKAttr{K: 1}, nil, s[0])
	if err != nil {
		t.Fatal(err)
	}
	m, err := tr.Finish(top[0], top[1], c)
	if err != nil {
		t.Fatal(err)
	}
	want := `func @f(%x: f32[2,3], %w: f32[3]) -> (f32[2,1], i32[2,1], f32[]) {
  %0 = broadcast %w {dims=[1]} : f32[2,3]
  %1 = add %x, %0 : f32[2,3]
  %2 = constant 0.5 : f32[]
  %3, %4 = top_k %1 {k=1} : f32[2,1], i32[2,1]
  return %3, %4, %2
}
`
	if got := ir.Print(m); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	f := m.Funcs[0]
	if f.Body.Instrs[1].Pos != pos || x.Index != 0 || w.Index != 1 || !tr.Finished() || tr.Name() != "f" {
		t.Errorf("positions or parameters wrong: %s, %d, %d", f.Body.Instrs[1].Pos, x.Index, w.Index)
	}
}

// New and Finish take the position of their caller outside the library: here,
// this test file (the module file too).
func TestFunctionAndReturnPositions(t *testing.T) {
	newPos := here()
	tr := trace.New("f")
	x := tr.Param("x", f32(2))
	retPos := here()
	m, err := tr.Finish(x)
	if err != nil {
		t.Fatal(err)
	}
	f := m.Funcs[0]
	retPos.Line++
	newPos.Line++
	if f.Pos != newPos || m.File != "trace_test.go" || f.Body.Instrs[0].Pos != retPos || x.Pos != newPos {
		t.Errorf("func at %s (file %q), return at %s, param at %s; want %s and %s", f.Pos, m.File, f.Body.Instrs[0].Pos, x.Pos, newPos, retPos)
	}
}

func TestEmitErrors(t *testing.T) {
	t1, t2 := trace.New("f"), trace.New("g")
	x := t1.Param("x", f32(2))
	y := t2.Param("y", f32(3))
	pos := ir.Pos{File: "user.go", Line: 3}
	cases := []struct {
		args []*ir.Value
		op   ir.Op
		want string
	}{
		{[]*ir.Value{x, y}, ir.OpAdd, "user.go:3: error: operand 1 of add (f32[3]) belongs to another trace than @f"},
		{[]*ir.Value{x, nil}, ir.OpAdd, "user.go:3: error: operand 1 of add is missing"},
		{[]*ir.Value{x, x, x}, ir.OpAdd, "user.go:3: error: add takes 2 operands, got 3"},
		{[]*ir.Value{x}, ir.OpLog, ""},
		{[]*ir.Value{x}, ir.OpReturn, "user.go:3: error: return cannot be traced as an operation"},
	}
	for _, c := range cases {
		_, err := t1.Emit(pos, c.op, nil, nil, c.args...)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.op, got, c.want)
		}
	}
	// A value of the same ID in another tracer is still foreign.
	if t1.Owns(y) || !t1.Owns(x) || t2.Owns(x) {
		t.Error("Owns confuses the tracers' values")
	}
	finishPos := here()
	_, err := t1.Finish(y) // the line after here()
	finishPos.Line++
	if want := finishPos.String() + ": error: operand 0 of return (f32[3]) belongs to another trace than @f"; err == nil || err.Error() != want {
		t.Errorf("Finish with a foreign value: %v, want %s", err, want)
	}
	if _, err := t1.Finish(x); err != nil {
		t.Fatal(err)
	}
	if _, err := t1.Emit(pos, ir.OpExp, nil, nil, x); err == nil ||
		err.Error() != "user.go:3: error: exp after the trace of @f finished: a traced tensor escaped the traced function" {
		t.Errorf("Emit after Finish: %v", err)
	}
	if _, err := t1.Finish(x); err == nil {
		t.Error("a second Finish succeeded")
	}
}

// A constant whose literal does not fit its type is the caller's broken
// invariant: Const panics.
func TestConstPanicsOnBadLiteral(t *testing.T) {
	tr := trace.New("f")
	defer func() {
		if r := recover(); r == nil {
			t.Error("Const with 3 elements for f32[2] did not panic")
		}
	}()
	tr.Const(ir.Pos{}, f32(2), &ir.Literal{Floats: []float64{1, 2, 3}})
}

func TestConcurrentEmit(t *testing.T) {
	tr := trace.New("f")
	x := tr.Param("x", f32(4))
	var wg sync.WaitGroup
	results := make([]*ir.Value, 32)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := tr.Emit(ir.Pos{}, ir.OpExp, nil, nil, x)
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = r[0]
		}()
	}
	wg.Wait()
	m, err := tr.Finish(results...)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Funcs[0].Body.Instrs); n != 33 {
		t.Errorf("%d instructions, want 33", n)
	}
}

func TestIdentifier(t *testing.T) {
	for in, want := range map[string]string{
		"mlp":                      "mlp",
		"github.com/x/y.(*T).f-fm": "github.com_x_y.__T_.f_fm",
		"main.mlp.func1":           "main.mlp.func1",
		"0arg":                     "_0arg",
		".x":                       "_.x",
		"":                         "",
		"naïve":                    "na__ve",
	} {
		if got := trace.Identifier(in); got != want {
			t.Errorf("Identifier(%q) = %q, want %q", in, got, want)
		}
	}
	tr := trace.New("a/b c")
	x := tr.Param("my arg", f32(1))
	m, err := tr.Finish(x)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ir.Print(m), "func @a_b_c(%my_arg: f32[1]) -> f32[1] {\n  return %my_arg\n}\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
