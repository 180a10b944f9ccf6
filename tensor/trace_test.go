package tensor_test

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/frontend/trace"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// lines collects the source lines of marked operations.
var lines []int

// mark records the line it is called from (the line of the operation whose
// result it passes through) and returns t.
func mark(t *tensor.Tensor) *tensor.Tensor {
	_, _, l, _ := runtime.Caller(1)
	lines = append(lines, l)
	return t
}

// mark2 is mark for an operation with two results.
func mark2(a, b *tensor.Tensor) (*tensor.Tensor, *tensor.Tensor) {
	_, _, l, _ := runtime.Caller(1)
	lines = append(lines, l)
	return a, b
}

// model is a small function exercising broadcasting, a closed-over scalar,
// an iota, a mask computed eagerly from concrete tensors (it becomes one
// constant), select, a composite op, a two-result op and a reduction.
func model(x, w, b *tensor.Tensor) (*tensor.Tensor, *tensor.Tensor) {
	h := mark(x.MatMul(w).Add(b))                      // dot_general, broadcast, add
	h = mark(h.Relu().Mul(tensor.Scalar(0.5, ir.F32))) // relu, constant, broadcast, mul
	h = mark(h.Add(tensor.Iota(ir.F32, 1, 2, 4)))      // iota, add
	keep := tensor.Iota(ir.I32, 1, 2, 4).Lt(tensor.FromSlice([]int32{3, 1, 4, 1}, 4))
	h = mark(tensor.Where(keep, h, tensor.Scalar(-1, ir.F32))) // constant, constant, broadcast, select
	top, idx := mark2(h.Softmax(-1).TopK(2))                   // softmax, top_k
	return mark(top.Sum(0)), idx                               // reduce_sum
}

const modelTIR = `func @model(%x: f32[2,3], %w: f32[3,4], %b: f32[4]) -> (f32[2], i32[2,2]) {
  %0 = dot_general %x, %w {lhs_batch=[], lhs_contract=[1], rhs_batch=[], rhs_contract=[0]} : f32[2,4]
  %1 = broadcast %b {dims=[1]} : f32[2,4]
  %2 = add %0, %1 : f32[2,4]
  %3 = relu %2 : f32[2,4]
  %4 = constant 0.5 : f32[]
  %5 = broadcast %4 {dims=[]} : f32[2,4]
  %6 = mul %3, %5 : f32[2,4]
  %7 = iota {axis=1} : f32[2,4]
  %8 = add %6, %7 : f32[2,4]
  %9 = constant [[true, false, true, false], [true, false, true, false]] : i1[2,4]
  %10 = constant -1.0 : f32[]
  %11 = broadcast %10 {dims=[]} : f32[2,4]
  %12 = select %9, %8, %11 : f32[2,4]
  %13 = softmax %12 {axis=1} : f32[2,4]
  %14, %15 = top_k %13 {k=2} : f32[2,2], i32[2,2]
  %16 = reduce_sum %14 {axes=[0]} : f32[2]
  return %16, %15
}
`

func traceModel(t *testing.T) *ir.Module {
	t.Helper()
	tr := trace.New("model")
	xv := tr.Param("x", ir.Tensor(ir.F32, 2, 3))
	x := tensor.Traced(xv, tr)
	w := tensor.Traced(tr.Param("w", ir.Tensor(ir.F32, 3, 4)), tr)
	b := tensor.Traced(tr.Param("b", ir.Tensor(ir.F32, 4)), tr)
	lines = nil
	y, idx := model(x, w, b)
	if !y.IsTraced() || y.String() != "traced f32[2]" || y.Tracer() != tr || x.Value() != xv {
		t.Fatalf("result %s is not traced", y)
	}
	m, err := tr.Finish(y.Value(), idx.Value())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestTraceText(t *testing.T) {
	m := traceModel(t)
	if got := ir.Print(m); got != modelTIR {
		t.Errorf("traced\n%s\nwant\n%s", got, modelTIR)
	}
	// The text is .tir: it parses back to the same program.
	back, err := tir.Parse("model.tir", []byte(modelTIR))
	if err != nil {
		t.Fatal(err)
	}
	if got := ir.Print(back); got != modelTIR {
		t.Errorf("printed after parsing:\n%s", got)
	}
}

// Every traced instruction carries the line of model that caused it.
func TestTracePositions(t *testing.T) {
	m := traceModel(t)
	// Instructions per marked line, in order (see the comments in model).
	perLine := []int{3, 4, 2, 4, 2, 1}
	var want []int
	for i, n := range perLine {
		for range n {
			want = append(want, lines[i])
		}
	}
	f := m.Funcs[0]
	body := f.Body.Instrs[:len(f.Body.Instrs)-1]
	if len(body) != len(want) {
		t.Fatalf("%d instructions, want %d", len(body), len(want))
	}
	for i, in := range body {
		if in.Pos.File != "trace_test.go" || in.Pos.Line != want[i] {
			t.Errorf("instruction %d (%s) at %s, want trace_test.go:%d", i, in.Op, in.Pos, want[i])
		}
	}
	if f.Pos.File != "trace_test.go" || f.Params[0].Pos != f.Pos {
		t.Errorf("function at %s, parameter at %s", f.Pos, f.Params[0].Pos)
	}
}

// The traced module, run by the reference executor, gives exactly the
// numbers of the same function run eagerly.
func TestTraceMatchesEager(t *testing.T) {
	m := traceModel(t)
	x := tensor.Random(1, ir.F32, 2, 3)
	w := tensor.Random(2, ir.F32, 3, 4)
	b := tensor.Random(3, ir.F32, 4)
	y, idx := model(x, w, b)
	res, err := cpu.Run(m, m.Funcs[0], []*backend.Buffer{x.Buffer(), w.Buffer(), b.Buffer()})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []*tensor.Tensor{y, idx} {
		got := tensor.FromBuffer(res[k])
		if got.Type().String() != want.Type().String() {
			t.Fatalf("result %d: %s, eager %s", k, got.Type(), want.Type())
		}
		g, e := got.Float64s(), want.Float64s()
		for i := range g {
			if math.Float64bits(g[i]) != math.Float64bits(e[i]) {
				t.Errorf("result %d element %d: traced %v, eager %v", k, i, g[i], e[i])
			}
		}
	}
}

// A failure while running the traced program names the line of the Go code
// that recorded the failing instruction.
func TestTracedRuntimeErrorNamesLine(t *testing.T) {
	tr := trace.New("empty")
	x := tensor.Traced(tr.Param("x", ir.Tensor(ir.F32, 0, 2)), tr)
	_, _, line, _ := runtime.Caller(0)
	y := x.Take(tensor.FromSlice([]int32{0}, 1), 0) // the line after the Caller above
	m, err := tr.Finish(y.Value())
	if err != nil {
		t.Fatal(err)
	}
	_, err = cpu.Run(m, m.Funcs[0], []*backend.Buffer{backend.New(ir.Tensor(ir.F32, 0, 2))})
	pos := ir.Pos{File: "trace_test.go", Line: line + 1}
	if err == nil || !strings.HasPrefix(err.Error(), pos.String()+": error: ") {
		t.Errorf("got %v, want an error at %s", err, pos)
	}
}

// Eager operations on shared tensors and traces in several goroutines at once.
func TestConcurrentUse(t *testing.T) {
	x := tensor.Random(5, ir.F32, 8, 8)
	want := x.MatMul(x).Softmax(-1).Sum().Item()
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := x.MatMul(x).Softmax(-1).Sum().Item(); got != want {
				errs <- "eager result differs"
			}
			tr := trace.New("g")
			p := tensor.Traced(tr.Param("p", ir.Tensor(ir.F32, 8, 8)), tr)
			y := p.MatMul(x).Add(tensor.Scalar(float64(g), ir.F32))
			if _, err := tr.Finish(y.Value()); err != nil {
				errs <- err.Error()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// A result that does not depend on the arguments is recorded as a constant
// by ValueIn; a traced result is returned as it is.
func TestValueIn(t *testing.T) {
	tr := trace.New("k")
	x := tensor.Traced(tr.Param("x", ir.Tensor(ir.F32, 2)), tr)
	c := f32(sh(2), 1, 2).Mul(scalar(3))
	m, err := tr.Finish(x.ValueIn(tr), c.ValueIn(tr), tensor.Iota(ir.I32, 0, 3).ValueIn(tr))
	if err != nil {
		t.Fatal(err)
	}
	want := `func @k(%x: f32[2]) -> (f32[2], f32[2], i32[3]) {
  %0 = constant [3.0, 6.0] : f32[2]
  %1 = iota {axis=0} : i32[3]
  return %x, %0, %1
}
`
	if got := ir.Print(m); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	other := trace.New("other")
	wantErr(t, "trace_test.go", func(l *int) { at(l); x.ValueIn(other) }, "value_in: the tensor belongs to the trace of @k, not @other")
}

// Trace records a function of tensors as traceModel does by hand, and Eval
// runs the same function on buffers with the eager op's numbers.
func TestTraceAndEval(t *testing.T) {
	f := func(ts []*tensor.Tensor) ([]*tensor.Tensor, error) {
		y, idx := model(ts[0], ts[1], ts[2])
		return []*tensor.Tensor{y, idx}, nil
	}
	lines = nil
	m, err := tensor.Trace("model", []string{"x", "w", "b"}, []ir.Type{ir.Tensor(ir.F32, 2, 3), ir.Tensor(ir.F32, 3, 4), ir.Tensor(ir.F32, 4)}, f)
	if err != nil {
		t.Fatal(err)
	}
	if got := ir.Print(m); got != modelTIR {
		t.Errorf("traced\n%s\nwant\n%s", got, modelTIR)
	}
	x, w, b := tensor.Random(1, ir.F32, 2, 3), tensor.Random(2, ir.F32, 3, 4), tensor.Random(3, ir.F32, 4)
	got, err := tensor.Eval("model", []*backend.Buffer{x.Buffer(), w.Buffer(), b.Buffer()}, f)
	if err != nil {
		t.Fatal(err)
	}
	y, idx := model(x, w, b)
	if len(got) != 2 || !got[0].Equal(y.Buffer()) || !got[1].Equal(idx.Buffer()) {
		t.Errorf("Eval gave %v, want %s and %s", got, y, idx)
	}

	// f's error is returned; a result of another trace is an error of Trace,
	// a traced result an error of Eval; names must match types.
	boom := errors.New("boom")
	if _, err := tensor.Trace("f", nil, nil, func([]*tensor.Tensor) ([]*tensor.Tensor, error) { return nil, boom }); err != boom {
		t.Errorf("Trace returned %v, want f's error", err)
	}
	other := trace.New("other")
	leaked := tensor.Traced(other.Param("p", ir.Tensor(ir.F32, 2)), other)
	leak := func([]*tensor.Tensor) ([]*tensor.Tensor, error) { return []*tensor.Tensor{leaked}, nil }
	_, err = tensor.Trace("f", nil, nil, leak)
	if err == nil || !strings.HasSuffix(err.Error(), "value_in: the tensor belongs to the trace of @other, not @f") {
		t.Errorf("Trace of a leaked tensor: %v", err)
	}
	if _, err := tensor.Eval("f", nil, leak); err == nil || err.Error() != "f: result 0 is a traced tensor of another trace" {
		t.Errorf("Eval of a traced result: %v", err)
	}
	if _, err := tensor.Trace("f", []string{"x"}, nil, leak); err == nil || err.Error() != "tensor.Trace: 1 names for 0 types" {
		t.Errorf("Trace with a name too many: %v", err)
	}
}
