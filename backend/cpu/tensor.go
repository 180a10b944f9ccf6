package cpu

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// Tensor is a dense, row-major tensor value. Float dtypes keep their elements in
// F, already rounded to the dtype (an f16 element is an f16 value held in a
// float64); integer dtypes and i1 keep theirs in I, wrapped into the dtype's
// range (i1 as 0 or 1, unsigned types as non-negative numbers). Exactly one of F
// and I is used, chosen by Type.DType.IsFloat(), and its length is the type's
// element count. Kernels never modify their operands.
type Tensor struct {
	Type ir.Type
	F    []float64
	I    []int64
}

// NewTensor returns a zero-filled tensor of the static type t. A symbolic type
// is a programming error and panics.
func NewTensor(t ir.Type) *Tensor {
	n, ok := t.NumElements()
	if !ok || !t.IsStatic() {
		panic(fmt.Sprintf("cpu.NewTensor: %s is not a static type of reasonable size", t))
	}
	out := &Tensor{Type: t}
	if t.DType.IsFloat() {
		out.F = make([]float64, n)
	} else {
		out.I = make([]int64, n)
	}
	return out
}

// FromFloats returns a tensor of type t holding vals in row-major order; one
// value is a splat over the whole type. Values are brought into the dtype as
// the convert op would: rounded for floats, truncated and saturated for
// integers, != 0 for i1. A count that fits neither way panics.
func FromFloats(t ir.Type, vals ...float64) *Tensor {
	out := NewTensor(t)
	n := out.Len()
	if len(vals) != n && len(vals) != 1 {
		panic(fmt.Sprintf("cpu.FromFloats: %d values for %s", len(vals), t))
	}
	at := func(i int) float64 {
		if len(vals) == 1 {
			return vals[0]
		}
		return vals[i]
	}
	dt := t.DType
	for i := 0; i < n; i++ {
		if dt.IsFloat() {
			out.F[i] = dt.RoundFloat(at(i))
		} else {
			out.I[i] = floatToInt(at(i), dt)
		}
	}
	return out
}

// FromInts is FromFloats for integer values: wrapped into integer dtypes, != 0
// for i1, and converted (as the convert op does) for float dtypes.
func FromInts(t ir.Type, vals ...int64) *Tensor {
	out := NewTensor(t)
	n := out.Len()
	if len(vals) != n && len(vals) != 1 {
		panic(fmt.Sprintf("cpu.FromInts: %d values for %s", len(vals), t))
	}
	at := func(i int) int64 {
		if len(vals) == 1 {
			return vals[0]
		}
		return vals[i]
	}
	dt := t.DType
	for i := 0; i < n; i++ {
		if dt.IsFloat() {
			out.F[i] = intToFloat(at(i), dt)
		} else {
			out.I[i] = dt.WrapInt(at(i))
		}
	}
	return out
}

// Len is the number of elements.
func (t *Tensor) Len() int {
	if t.Type.DType.IsFloat() {
		return len(t.F)
	}
	return len(t.I)
}

// Float returns element i as a float64 whatever the dtype.
func (t *Tensor) Float(i int) float64 {
	if t.Type.DType.IsFloat() {
		return t.F[i]
	}
	return float64(t.I[i])
}

// clone returns a copy that shares no storage with t.
func (t *Tensor) clone() *Tensor {
	return &Tensor{Type: t.Type, F: append([]float64(nil), t.F...), I: append([]int64(nil), t.I...)}
}

// check reports whether t's storage agrees with its type.
func (t *Tensor) check() error {
	if !t.Type.IsStatic() {
		return fmt.Errorf("type %s is not static", t.Type)
	}
	n, ok := t.Type.NumElements()
	if !ok {
		return fmt.Errorf("type %s is too large", t.Type)
	}
	have, other := len(t.I), len(t.F)
	if t.Type.DType.IsFloat() {
		have, other = other, have
	}
	if int64(have) != n || other != 0 {
		return fmt.Errorf("%s tensor holds %d values, want %d", t.Type, have+other, n)
	}
	return nil
}

// String writes the type and the elements as a nested list, as .tir spells a
// constant: f32[2,2] [[1.0, 2.0], [3.0, 4.5]].
func (t *Tensor) String() string {
	var b strings.Builder
	b.WriteString(t.Type.String())
	b.WriteByte(' ')
	if t.check() != nil {
		b.WriteString("<malformed>")
		return b.String()
	}
	elem := func(i int) string {
		switch dt := t.Type.DType; {
		case dt.IsFloat():
			return ir.FormatFloat(t.F[i], dt)
		case dt.IsBool():
			return strconv.FormatBool(t.I[i] != 0)
		}
		return strconv.FormatInt(t.I[i], 10)
	}
	dims := t.Type.Dims()
	var rec func(d int, off int)
	rec = func(d int, off int) {
		if d == len(dims) {
			b.WriteString(elem(off))
			return
		}
		stride := 1
		for _, n := range dims[d+1:] {
			stride *= int(n)
		}
		b.WriteByte('[')
		for i := 0; i < int(dims[d]); i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			rec(d+1, off+i*stride)
		}
		b.WriteByte(']')
	}
	rec(0, 0)
	return b.String()
}

// tensorFromLiteral expands a constant's literal (possibly a splat) over t.
func tensorFromLiteral(t ir.Type, l *ir.Literal) (*Tensor, error) {
	if l == nil {
		return nil, fmt.Errorf("constant has no value")
	}
	out := NewTensor(t)
	n := out.Len()
	if l.Len() != 1 && l.Len() != n {
		return nil, fmt.Errorf("literal has %d elements, %s needs %d", l.Len(), t, n)
	}
	if n > 0 && l.Len() == 0 {
		return nil, fmt.Errorf("literal is empty, %s needs %d elements", t, n)
	}
	dt := t.DType
	for i := 0; i < n; i++ {
		if dt.IsFloat() {
			out.F[i] = dt.RoundFloat(l.Float(i))
		} else {
			out.I[i] = dt.WrapInt(l.Int(i))
		}
	}
	return out, nil
}

// literal returns t's elements as an ir.Literal (never a splat).
func (t *Tensor) literal() *ir.Literal {
	if t.Type.DType.IsFloat() {
		return &ir.Literal{Floats: append([]float64{}, t.F...)}
	}
	return &ir.Literal{Ints: append([]int64{}, t.I...)}
}

// floatToInt converts as XLA:CPU does (checked against jax 0.10.2): NaN is 0,
// other values truncate toward zero and saturate at the dtype's range; to i1
// means != 0 (so NaN is true).
func floatToInt(v float64, dt ir.DType) int64 {
	if dt.IsBool() {
		if v != 0 {
			return 1
		}
		return 0
	}
	if math.IsNaN(v) {
		return 0
	}
	lo, hi := dt.IntRange()
	v = math.Trunc(v)
	switch {
	case v <= float64(lo):
		return lo
	case v >= float64(hi): // for i64, float64(hi) is 2^63, itself out of range
		return hi
	}
	return int64(v)
}

// intToFloat converts an integer element to a float dtype. For f32, f16 and
// bf16 the value goes through f32 first (one correct rounding to f32, then to
// the narrower type), which is what XLA:CPU does: i32 16842753 becomes bf16
// 16777216, not 16908288.
func intToFloat(v int64, dt ir.DType) float64 {
	if dt == ir.F64 {
		return float64(v)
	}
	return dt.RoundFloat(float64(float32(v)))
}
