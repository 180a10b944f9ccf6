package tensor_test

import (
	"errors"
	"strconv"
	"testing"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/trace"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// Every misuse panics with a *tensor.Error naming this file and the line of
// the call, the operation and the operand types.
func TestErrorMessages(t *testing.T) {
	a := f32(sh(2, 3), 1, 2, 3, 4, 5, 6)
	b := f32(sh(4), 1, 2, 3, 4)
	n := i32(sh(2, 3), 1, 2, 3, 4, 5, 6)
	tr := trace.New("f")
	x := tensor.Traced(tr.Param("x", ir.Tensor(ir.F32, 2)), tr)
	limit := strconv.FormatInt(cpu.DefaultMemoryLimit(), 10)
	cases := []struct {
		f    func(l *int)
		want string
	}{
		{func(l *int) { at(l); a.Add(b) }, "add: shapes f32[2,3] and f32[4] do not broadcast"},
		{func(l *int) { at(l); b.Mul(a) }, "mul: shapes f32[4] and f32[2,3] do not broadcast"},
		{func(l *int) { at(l); a.Add(n) }, "add: operands have different dtypes: f32[2,3] and i32[2,3] (convert one with Convert)"},
		{func(l *int) { at(l); a.Lt(b) }, "lt: shapes f32[2,3] and f32[4] do not broadcast"},
		{func(l *int) { at(l); a.And(a) }, "and: operand of and must have i1 or an integer type, got f32[2,3]"},
		{func(l *int) { at(l); n.Exp() }, "exp: operand of exp must have a float or complex type (f32, f16, bf16, f64, c64, c128), got i32[2,3]"},
		{func(l *int) { at(l); a.MatMul(a) }, "matmul: contracting dimensions differ: f32[2,3] has 3, f32[2,3] has 2"},
		{func(l *int) { at(l); a.MatMul(n) }, "matmul: operands have different dtypes: f32[2,3] and i32[2,3] (convert one with Convert)"},
		{func(l *int) { at(l); a.Reshape(4) }, "reshape: cannot reshape f32[2,3] (6 elements) to [4]"},
		{func(l *int) { at(l); a.Reshape(-1, 4) }, "reshape: cannot reshape f32[2,3] to [-1,4]"},
		{func(l *int) { at(l); a.Sum(2) }, "sum: axis 2 is out of range for f32[2,3]"},
		{func(l *int) { at(l); a.Sum(1, -1) }, "sum: axis -1 is given twice for f32[2,3]"},
		{func(l *int) { at(l); a.Softmax(-3) }, "softmax: axis -3 is out of range for f32[2,3]"},
		{func(l *int) { at(l); a.Transpose(0) }, "transpose: perm [0] is not a permutation of the 2 dimensions of f32[2,3]"},
		{func(l *int) { at(l); b.BroadcastTo(2, 3) }, "broadcast_to: f32[4] does not broadcast to shape [2,3]"},
		{func(l *int) { at(l); a.Slice(sh(0, 0), sh(3, 3), nil) }, "slice: dimension 0: need 0 <= start (0) <= limit (3) <= size (2) and stride (1) >= 1"},
		{func(l *int) { at(l); tensor.Concat(1, a, b) }, "concat: operands of concat have different dtypes or ranks: f32[2,3] and f32[4]"},
		{func(l *int) { at(l); tensor.Where(a, a, a) }, "where: the predicate must be i1, got f32[2,3]"},
		{func(l *int) { at(l); a.Clamp(b, b) }, "clamp: bound f32[4] does not broadcast to f32[2,3]"},
		{func(l *int) { at(l); a.LayerNorm(b, b, 1e-5) }, "layer_norm: scale and bias of layer_norm must be f32[3], got f32[4]"},
		{func(l *int) { at(l); a.TopK(4) }, "top_k: k = 4 must be between 0 and the last dimension 3"},
		{func(l *int) { at(l); a.Take(a, 0) }, "take: indices of take must have an integer type, got f32[2,3]"},
		{func(l *int) { at(l); a.Add(nil) }, "add: operand 1 is nil"},
		{func(l *int) { at(l); (&tensor.Tensor{}).Exp() }, "exp: the tensor is the zero Tensor"},
		{func(l *int) { at(l); tensor.FromSlice([]float32{1}, 2, 2) }, "from_slice: 1 values for shape [2,2], which holds 4"},
		{func(l *int) { at(l); tensor.Zeros(ir.F32, 2, -1) }, "full: shape [2,-1] has a negative dimension"},
		{func(l *int) { at(l); a.Int64s() }, "int64s: the tensor is f32[2,3], not an integer type: convert it first"},
		{func(l *int) { at(l); n.Bools() }, "bools: the tensor is i32[2,3], not i1: compare it to get i1"},
		{func(l *int) { at(l); x.Float32s() }, "float32s: the tensor is traced (f32[2] in @f): its value is known only when the compiled function runs"},
		{func(l *int) { at(l); x.Add(b) }, "add: shapes f32[2] and f32[4] do not broadcast"},
		{func(l *int) { at(l); tensor.Zeros(ir.F32, 1<<20, 1).MatMul(tensor.Zeros(ir.F32, 1, 1<<20)) },
			"matmul: the result f32[1048576,1048576] is too large for the cpu executor (limit " + limit + " bytes)"},
	}
	for _, c := range cases {
		wantErr(t, "error_test.go", c.f, c.want)
	}
}

// helperOp is user code a level below the test: the error names its line,
// the first frame outside the library.
func helperOp(a, b *tensor.Tensor, l *int) *tensor.Tensor {
	at(l)
	*l += 2 // the line of the Add
	return a.Add(b)
}

func TestErrorNamesUserHelper(t *testing.T) {
	a, b := f32(sh(2), 1, 2), f32(sh(3), 1, 2, 3)
	wantErr(t, "error_test.go", func(l *int) { helperOp(a, b, l) }, "add: shapes f32[2] and f32[3] do not broadcast")
}

func TestErrorFields(t *testing.T) {
	a, b := f32(sh(2, 3), 1, 2, 3, 4, 5, 6), f32(sh(4), 1, 2, 3, 4)
	e := catch(t, func() { a.Sub(b) })
	if e == nil || e.Op != "sub" || len(e.Types) != 2 || e.Types[0].String() != "f32[2,3]" || e.Types[1].String() != "f32[4]" ||
		e.Pos.File != "error_test.go" || e.Pos.Col != 0 {
		t.Errorf("fields %+v", e)
	}
}

func TestRecover(t *testing.T) {
	run := func(f func()) (err error) {
		defer tensor.Recover(&err)
		f()
		return nil
	}
	err := run(func() { f32(sh(2), 1, 2).Add(f32(sh(3), 1, 2, 3)) })
	var te *tensor.Error
	if !errors.As(err, &te) || te.Op != "add" {
		t.Errorf("Recover gave %v", err)
	}
	if err := run(func() {}); err != nil {
		t.Errorf("Recover without a panic gave %v", err)
	}
	defer func() {
		if r := recover(); r != "other" {
			t.Errorf("a panic that is not a *tensor.Error was %v, want it passed on", r)
		}
	}()
	_ = run(func() { panic("other") })
}

// Traced tensors of two traces do not mix, and a tensor that outlives its
// trace is refused: both are errors at the user's line, not wrong programs.
func TestTraceMisuse(t *testing.T) {
	t1, t2 := trace.New("f"), trace.New("g")
	x := tensor.Traced(t1.Param("x", ir.Tensor(ir.F32, 2)), t1)
	y := tensor.Traced(t2.Param("y", ir.Tensor(ir.F32, 2)), t2)
	wantErr(t, "error_test.go", func(l *int) { at(l); x.Add(y) }, "add: operands come from two different traces (@f and @g)")
	if _, err := t1.Finish(x.Value()); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "error_test.go", func(l *int) { at(l); x.Exp() },
		"exp: the trace of @f has finished: a traced tensor escaped the traced function")
	wantErr(t, "error_test.go", func(l *int) { at(l); x.Add(scalar(1)) },
		"add: the trace of @f has finished: a traced tensor escaped the traced function")
	wantErr(t, "error_test.go", func(l *int) { at(l); tensor.Traced(y.Value(), t1) },
		"traced: the f32[2] value does not belong to the trace of @f")
}
