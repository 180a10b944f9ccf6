package cpu

import (
	"fmt"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Tensors are *backend.Buffer: elements in their own dtype. Kernels read them
// as float64 (floats, exactly) or int64 (integers and i1), compute, and store
// the result into the dtype (backend.Buffer.SetFloat64 rounds as
// ir.DType.RoundFloat does; SetInt64 wraps as ir.DType.WrapInt does).

// checkBuffer reports whether b's storage agrees with its type.
func checkBuffer(b *backend.Buffer) error {
	t := b.Type()
	if !t.IsStatic() {
		return fmt.Errorf("type %s is not static", t)
	}
	n, ok := t.NumElements()
	if !ok || t.DType.Size() == 0 {
		return fmt.Errorf("type %s is not a tensor type of reasonable size", t)
	}
	if have := int64(len(b.Bytes())); have != n*int64(t.DType.Size()) {
		return fmt.Errorf("%s buffer holds %d bytes, want %d", t, have, n*int64(t.DType.Size()))
	}
	return nil
}

// retype returns a copy of x with type t (same dtype and element count).
func retype(x *backend.Buffer, t ir.Type) *backend.Buffer { return x.Clone().WithType(t) }

// tensorFromLiteral expands a constant's literal (possibly a splat) over t.
func tensorFromLiteral(t ir.Type, l *ir.Literal) (*backend.Buffer, error) {
	if l == nil {
		return nil, fmt.Errorf("constant has no value")
	}
	out := backend.New(t)
	n := out.Len()
	if l.Len() != 1 && l.Len() != n {
		return nil, fmt.Errorf("literal has %d elements, %s needs %d", l.Len(), t, n)
	}
	if n > 0 && l.Len() == 0 {
		return nil, fmt.Errorf("literal is empty, %s needs %d elements", t, n)
	}
	dt := t.DType
	for i := 0; i < n; i++ {
		if dt.IsComplex() {
			out.SetComplex128(i, l.ComplexAt(i))
		} else if dt.IsFloatValued() {
			out.SetFloat64(i, l.Float(i))
		} else {
			out.SetInt64(i, l.Int(i))
		}
	}
	return out, nil
}

// literal returns t's elements as an ir.Literal (never a splat).
func literal(t *backend.Buffer) *ir.Literal {
	n := t.Len()
	if t.Type().DType.IsComplex() {
		l := &ir.Literal{Complex: make([]complex128, n)}
		t.ReadComplex128s(0, l.Complex)
		return l
	}
	if t.Type().DType.IsFloatValued() {
		l := &ir.Literal{Floats: make([]float64, n)}
		t.ReadFloat64s(0, l.Floats)
		return l
	}
	l := &ir.Literal{Ints: make([]int64, n)}
	t.ReadInt64s(0, l.Ints)
	return l
}
