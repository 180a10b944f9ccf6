package tensor

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/trace"
	"github.com/tpucc/tpucc/ir"
)

// Tensor is an immutable n-dimensional array: concrete (its data is here) or
// traced (a value being recorded by a trace.Tracer). The zero Tensor is
// neither and is refused by every operation.
type Tensor struct {
	c *backend.Buffer // concrete data; nil when traced

	v  *ir.Value     // traced value; nil when concrete
	tr *trace.Tracer // the tracer owning v

	// iotaAxis is 1 + the axis of a concrete tensor made by Iota, so that a
	// trace records it as an iota op rather than as its elements; 0 otherwise.
	iotaAxis int
}

// FromBuffer wraps a buffer (elements in their own dtype, as every backend
// holds them). The buffer is not copied: the caller must not modify it
// afterwards.
func FromBuffer(c *backend.Buffer) *Tensor {
	if c == nil {
		fail("from_buffer", nil, "the buffer is nil")
	}
	t := c.Type()
	n, ok := t.NumElements()
	if !ok || !t.IsStatic() || t.DType.Size() == 0 {
		fail("from_buffer", []ir.Type{t}, "type %s is not a static tensor type", t)
	}
	// A device buffer's size is its type's; reading it here would copy it.
	if c.Device() != nil {
		return &Tensor{c: c}
	}
	if have := int64(len(c.Bytes())); have != n*int64(t.DType.Size()) {
		fail("from_buffer", []ir.Type{t}, "%s buffer holds %d bytes, want %d", t, have, n*int64(t.DType.Size()))
	}
	return &Tensor{c: c}
}

// Traced wraps a value of tracer tr; compile.Func uses it for the traced
// function's parameters.
func Traced(v *ir.Value, tr *trace.Tracer) *Tensor {
	if v == nil || tr == nil {
		fail("traced", nil, "needs a value and its tracer")
	}
	if !tr.Owns(v) {
		fail("traced", []ir.Type{v.Type}, "the %s value does not belong to the trace of @%s", v.Type, tr.Name())
	}
	return &Tensor{v: v, tr: tr}
}

// IsTraced reports whether t is being recorded rather than computed.
func (t *Tensor) IsTraced() bool {
	check("is_traced", t)
	return t.v != nil
}

// Value returns the traced value of t, or nil for a concrete tensor.
func (t *Tensor) Value() *ir.Value {
	check("value", t)
	return t.v
}

// ValueIn returns t as a value of tr, for a traced function's results: a
// traced t must be tr's own; a concrete t (a result that does not depend on
// the arguments) is recorded as a constant of tr, as operands are.
func (t *Tensor) ValueIn(tr *trace.Tracer) *ir.Value {
	check("value_in", t)
	if tr == nil {
		fail("value_in", []ir.Type{t.Type()}, "needs a tracer")
	}
	if t.v != nil {
		if t.tr != tr {
			fail("value_in", []ir.Type{t.Type()}, "the tensor belongs to the trace of @%s, not @%s", t.tr.Name(), tr.Name())
		}
		return t.v
	}
	if tr.Finished() {
		fail("value_in", []ir.Type{t.Type()}, "the trace of @%s has finished", tr.Name())
	}
	return capture("value_in", tr, trace.CallerPos(0), t)
}

// Tracer returns the tracer recording t, or nil for a concrete tensor.
func (t *Tensor) Tracer() *trace.Tracer {
	check("tracer", t)
	return t.tr
}

// Buffer returns the data of a concrete tensor, shared (not copied): the
// caller must not modify it. A traced tensor has no data and panics.
func (t *Tensor) Buffer() *backend.Buffer {
	t.concrete("buffer")
	return t.c
}

// Type is the tensor's dtype and shape.
func (t *Tensor) Type() ir.Type {
	check("type", t)
	if t.c != nil {
		return t.c.Type()
	}
	return t.v.Type
}

// Shape is the tensor's dimensions (a symbolic one, possible only while
// tracing, is -1). The slice is a copy.
func (t *Tensor) Shape() []int64 { return t.Type().Dims() }

// DType is the tensor's element type.
func (t *Tensor) DType() ir.DType { return t.Type().DType }

// Rank is the number of dimensions.
func (t *Tensor) Rank() int { return t.Type().Rank() }

// String prints a concrete tensor as its type and elements, as .tir spells a
// constant (f32[2,2] [[1.0, 2.0], [3.0, 4.5]]), and a traced one as
// "traced f32[2,2]".
func (t *Tensor) String() string {
	if t == nil || (t.c == nil && t.v == nil) {
		return "<nil tensor>"
	}
	if t.c != nil {
		return t.c.String()
	}
	return "traced " + t.v.Type.String()
}

// concrete panics unless t holds data.
func (t *Tensor) concrete(op string) {
	check(op, t)
	if t.c == nil {
		fail(op, []ir.Type{t.v.Type}, "the tensor is traced (%s in @%s): its value is known only when the compiled function runs",
			t.v.Type, t.tr.Name())
	}
}

// Float32s returns the elements in row-major order, converted to float32
// (integers and i1 too).
func (t *Tensor) Float32s() []float32 {
	t.concrete("float32s")
	out := make([]float32, t.c.Len())
	for i := range out {
		out[i] = float32(t.c.Float64At(i))
	}
	return out
}

// Float64s returns the elements in row-major order as float64 (integers and
// i1 too; float elements exactly).
func (t *Tensor) Float64s() []float64 {
	t.concrete("float64s")
	out := make([]float64, t.c.Len())
	t.c.ReadFloat64s(0, out)
	return out
}

// Int64s returns the elements of an integer or i1 tensor in row-major order.
// A float tensor panics: convert it first, choosing how to round.
func (t *Tensor) Int64s() []int64 {
	t.concrete("int64s")
	if t.c.Type().DType.IsFloat() {
		fail("int64s", []ir.Type{t.c.Type()}, "the tensor is %s, not an integer type: convert it first", t.c.Type())
	}
	out := make([]int64, t.c.Len())
	t.c.ReadInt64s(0, out)
	return out
}

// Bools returns the elements of an i1 tensor in row-major order.
func (t *Tensor) Bools() []bool {
	t.concrete("bools")
	if t.c.Type().DType != ir.I1 {
		fail("bools", []ir.Type{t.c.Type()}, "the tensor is %s, not i1: compare it to get i1", t.c.Type())
	}
	return append([]bool{}, backend.Elems[bool](t.c)...)
}

// Item returns the single element of a tensor with one element as a float64.
func (t *Tensor) Item() float64 {
	t.concrete("item")
	if t.c.Len() != 1 {
		fail("item", []ir.Type{t.c.Type()}, "the tensor %s has %d elements, not 1", t.c.Type(), t.c.Len())
	}
	return t.c.Float64At(0)
}

// shapeType checks a shape given by the user and returns dt[shape].
func shapeType(op string, dt ir.DType, shape []int64) ir.Type {
	if dt == ir.Invalid || dt.String() == "invalid" {
		fail(op, nil, "invalid dtype")
	}
	for _, d := range shape {
		if d < 0 {
			fail(op, nil, "shape %s has a negative dimension", shapeString(shape))
		}
	}
	t := ir.Tensor(dt, shape...)
	if n, ok := t.NumElements(); !ok || n > cpu.DefaultMemoryLimit()/int64(dt.Size()) {
		fail(op, nil, "shape %s is too large for the cpu executor's memory limit", shapeString(shape))
	}
	return t
}

// Full makes a tensor of dtype dt and the given shape with every element v,
// brought into dt as Convert would (rounded for floats; truncated and
// saturated for integers; v != 0 for i1).
func Full(v float64, dt ir.DType, shape ...int64) *Tensor {
	return &Tensor{c: backend.FromFloats(shapeType("full", dt, shape), v)}
}

// Zeros makes a tensor of zeros (false for i1).
func Zeros(dt ir.DType, shape ...int64) *Tensor { return Full(0, dt, shape...) }

// Ones makes a tensor of ones (true for i1).
func Ones(dt ir.DType, shape ...int64) *Tensor { return Full(1, dt, shape...) }

// Scalar makes a rank-0 tensor dt[] holding v, brought into dt as Full does.
// It is how a number enters an operation: x.Mul(tensor.Scalar(0.5, x.DType())).
func Scalar(v float64, dt ir.DType) *Tensor { return Full(v, dt) }

// Iota makes a tensor of dtype dt and the given shape whose elements are
// their index along axis. While tracing it is recorded as an iota op.
func Iota(dt ir.DType, axis int, shape ...int64) *Tensor {
	t := shapeType("iota", dt, shape)
	a := normAxis("iota", t, axis)
	res := apply("iota", ir.OpIota, &ir.AxisAttr{Axis: a}, []ir.Type{t})
	res[0].iotaAxis = int(a) + 1
	return res[0]
}

// Arange makes the 1-D tensor [0, 1, ..., n-1] of dtype dt.
func Arange(dt ir.DType, n int64) *Tensor { return Iota(dt, 0, n) }
