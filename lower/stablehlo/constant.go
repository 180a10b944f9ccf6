package stablehlo

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// Constants must reach XLA bit for bit. MLIR reads a decimal float literal as a
// double and rounds that to the element type, so a literal is exact when its
// decimal parses to exactly the element's value as a double. Every f16, bf16 and
// f32 value is a double, so the shortest decimal that round-trips the double is
// exact; it is padded with zeros to at least six fraction digits, the way JAX
// prints (1.000000e+00). Infinities and NaNs have no decimal spelling and are written as
// bit patterns (0x7F800000); a NaN keeps its sign, which total-order sorts see.
// Tensors of more than 100 elements that are not splats are written as raw
// little-endian bytes (dense<"0x...">), as JAX's printer does.

// maxListed is the largest element count written as a nested list.
const maxListed = 100

// floatBits is the bit pattern of v in dtype d, after rounding v into d.
// NaNs become the canonical quiet NaN with v's sign.
func floatBits(v float64, d ir.DType) uint64 {
	if d.IsNarrowFloat() {
		return uint64(d.NarrowToBits(v))
	}
	neg := math.Signbit(v)
	sign := func(bit uint64) uint64 {
		if neg {
			return bit
		}
		return 0
	}
	if math.IsNaN(v) {
		switch d {
		case ir.F64:
			return 0x7FF8000000000000 | sign(1<<63)
		case ir.F32:
			return 0x7FC00000 | sign(1<<31)
		case ir.BF16:
			return 0x7FC0 | sign(1<<15)
		}
		return 0x7E00 | sign(1<<15) // f16
	}
	v = d.RoundFloat(v)
	switch d {
	case ir.F64:
		return math.Float64bits(v)
	case ir.F32:
		return uint64(math.Float32bits(float32(v)))
	case ir.BF16:
		return uint64(ir.Float32ToBF16(float32(v)))
	}
	return uint64(ir.Float32ToF16(float32(v)))
}

// floatText spells one float element of dtype d exactly (see the comment above).
func floatText(v float64, d ir.DType) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprintf("0x%0*X", d.Size()*2, floatBits(v, d))
	}
	v = d.RoundFloat(v)
	mant, exp, _ := strings.Cut(strconv.FormatFloat(v, 'e', -1, 64), "e")
	whole, frac, _ := strings.Cut(mant, ".")
	if len(frac) < 6 {
		frac += strings.Repeat("0", 6-len(frac))
	}
	return whole + "." + frac + "e" + exp
}

// intText spells one integer or i1 element, wrapped into d's range.
func intText(v int64, d ir.DType) string {
	v = d.WrapInt(v)
	switch d {
	case ir.I1:
		return strconv.FormatBool(v != 0)
	case ir.U64: // v is the bit pattern
		return strconv.FormatUint(uint64(v), 10)
	}
	return strconv.FormatInt(v, 10)
}

// elemText spells element i of l as dtype d; a complex element is (re, im).
func elemText(l *ir.Literal, i int, d ir.DType) string {
	if d.IsComplex() {
		c, p := l.ComplexAt(i), d.ComplexPart()
		return "(" + floatText(real(c), p) + ", " + floatText(imag(c), p) + ")"
	}
	if d.IsFloatValued() {
		return floatText(l.Float(i), d)
	}
	return intText(l.Int(i), d)
}

// sameElem reports whether elements i and j of l are the same bits in dtype d.
func sameElem(l *ir.Literal, i, j int, d ir.DType) bool {
	if d.IsComplex() {
		x, y, p := l.ComplexAt(i), l.ComplexAt(j), d.ComplexPart()
		return floatBits(real(x), p) == floatBits(real(y), p) && floatBits(imag(x), p) == floatBits(imag(y), p)
	}
	if d.IsFloatValued() {
		return floatBits(l.Float(i), d) == floatBits(l.Float(j), d)
	}
	return d.WrapInt(l.Int(i)) == d.WrapInt(l.Int(j))
}

// elemBytes appends element i of l as little-endian bytes of dtype d (one byte per i1).
func elemBytes(buf []byte, l *ir.Literal, i int, d ir.DType) []byte {
	if d.IsComplex() { // the real part's bytes, then the imaginary part's
		c, p := l.ComplexAt(i), d.ComplexPart()
		parts := &ir.Literal{Floats: []float64{real(c), imag(c)}}
		return elemBytes(elemBytes(buf, parts, 0, p), parts, 1, p)
	}
	var bits uint64
	if d.IsFloatValued() {
		bits = floatBits(l.Float(i), d)
	} else {
		bits = uint64(d.WrapInt(l.Int(i)))
	}
	if d.IsSubByte() { // a byte each, the value in its low bits
		bits &= 1<<d.Bits() - 1
	}
	var tmp [8]byte
	binary.LittleEndian.PutUint64(tmp[:], bits)
	return append(buf, tmp[:d.Size()]...)
}

// denseAttr spells the elements of a constant of type t: dense<v> for a splat,
// a nested list up to maxListed elements, raw hex beyond.
func denseAttr(l *ir.Literal, t ir.Type) string {
	n, _ := t.NumElements()
	d := t.DType
	if n == 0 || l.Len() == 0 {
		return "dense<>"
	}
	splat := true
	for i := 1; i < l.Len() && splat; i++ {
		splat = sameElem(l, i, 0, d)
	}
	if splat {
		return "dense<" + elemText(l, 0, d) + ">"
	}
	if n > maxListed {
		buf := make([]byte, 0, int(n)*d.Size())
		for i := 0; i < int(n); i++ {
			buf = elemBytes(buf, l, i, d)
		}
		return fmt.Sprintf("dense<\"0x%X\">", buf)
	}
	var b strings.Builder
	b.WriteString("dense<")
	ir.WriteNested(&b, t.Dims(), func(i int) string { return elemText(l, i, d) })
	b.WriteByte('>')
	return b.String()
}

// constant writes a constant of type t holding l.
func (e *emitter) constant(t ir.Type, l *ir.Literal) hv {
	return e.def(t, "stablehlo.constant ", denseAttr(l, t), " : ", tensorType(t))
}

// fconst writes a splat constant of type t with value v (rounded into t's dtype).
// t may have any dtype; integer dtypes take v truncated.
func (e *emitter) fconst(t ir.Type, v float64) hv {
	if t.DType.IsComplex() {
		return e.constant(t, &ir.Literal{Complex: []complex128{complex(v, 0)}})
	}
	if t.DType.IsFloatValued() {
		return e.constant(t, &ir.Literal{Floats: []float64{v}})
	}
	return e.constant(t, &ir.Literal{Ints: []int64{int64(v)}})
}

// iconst writes a splat constant of the integer (or i1) type t.
func (e *emitter) iconst(t ir.Type, v int64) hv {
	return e.constant(t, &ir.Literal{Ints: []int64{v}})
}

// lowest and highest are the identities of max and min reductions: -inf and
// +inf for floats, the dtype's range otherwise.
func (e *emitter) lowest(t ir.Type) hv {
	if t.DType.IsFloat() {
		return e.fconst(t, math.Inf(-1))
	}
	lo, _ := t.DType.IntRange()
	return e.iconst(t, lo)
}

func (e *emitter) highest(t ir.Type) hv {
	if t.DType.IsFloat() {
		return e.fconst(t, math.Inf(1))
	}
	_, hi := t.DType.IntRange()
	return e.iconst(t, hi)
}
