package stablehlo

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// dense is a dense<...> literal: a hex blob ("0x..." of little-endian
// elements), or a nested list of element spellings whose nesting is kept to
// check it against the type. A single element is a splat.
type dense struct {
	pos    ir.Pos
	hex    []byte
	isHex  bool
	elems  []denseElem
	shape  []int64 // the nesting of the list; nil for a scalar
	nested bool
	typ    ir.Type
}

// denseElem is one element: a number, a word (true, nan, ...), or a
// complex element's two parts, (re, im).
type denseElem struct {
	pos  ir.Pos
	text string
	pair []denseElem
}

// denseBody reads the rest of dense<...> after "dense<".
func (s *scanner) denseBody() *dense {
	d := &dense{pos: s.pos()}
	switch {
	case s.accept(">"):
		d.nested, d.shape = true, []int64{0}
		return d
	case s.peek("\""):
		pos := s.pos()
		text := s.str()
		if !strings.HasPrefix(text, "0x") || len(text)%2 != 0 {
			s.failf(pos, "a dense string must be 0x followed by hex byte pairs")
		}
		d.isHex, d.hex = true, make([]byte, (len(text)-2)/2)
		for i := range d.hex {
			h, l := hexDigit(text[2+2*i]), hexDigit(text[3+2*i])
			if h < 0 || l < 0 {
				s.failf(pos, "a dense string must be 0x followed by hex byte pairs")
			}
			d.hex[i] = byte(h<<4 | l)
		}
	case s.peek("["):
		d.nested = true
		d.shape = s.denseList(d, 0)
	default:
		d.elems = append(d.elems, s.denseElem())
	}
	s.expect(">")
	return d
}

// denseList reads one bracketed level and returns the shape below it.
func (s *scanner) denseList(d *dense, level int) []int64 {
	s.enter()
	defer s.leave()
	pos := s.pos()
	s.expect("[")
	var inner []int64
	n := int64(0)
	for !s.accept("]") {
		if n > 0 {
			s.expect(",")
		}
		var sub []int64
		if s.peek("[") {
			sub = s.denseList(d, level+1)
		} else {
			d.elems = append(d.elems, s.denseElem())
			sub = []int64{}
		}
		if n > 0 && !slices.Equal(sub, inner) {
			s.failf(pos, "dense literal rows have different lengths")
		}
		inner = sub
		n++
	}
	return append([]int64{n}, inner...)
}

func (s *scanner) denseElem() denseElem {
	s.skip()
	e := denseElem{pos: s.pos()}
	if s.accept("(") {
		re := s.denseElem()
		s.expect(",")
		im := s.denseElem()
		s.expect(")")
		if re.pair != nil || im.pair != nil {
			s.failf(e.pos, "a complex element's parts must be numbers")
		}
		e.pair = []denseElem{re, im}
		return e
	}
	if e.text = s.number(); e.text == "" {
		e.text = s.word()
	}
	if e.text == "" {
		s.failf(e.pos, "expected a dense element, found %s", s.found())
	}
	return e
}

// literal checks d against its type and converts it to an ir literal.
func (d *dense) literal(s *scanner) *ir.Literal {
	t := d.typ
	n, ok := t.NumElements()
	if !ok {
		s.failf(d.pos, "constant type %s has too many elements", mlirType(t))
	}
	if d.isHex {
		return d.hexLiteral(s, n)
	}
	if d.nested && !(int64(len(d.elems)) == n && (len(d.shape) == t.Rank() && slices.Equal(d.shape, t.Dims()) || n == 0)) {
		s.failf(d.pos, "dense literal of shape %v does not match its type %s", d.shape, t)
	}
	if !d.nested && len(d.elems) != 1 {
		s.failf(d.pos, "dense literal has %d elements, its type %s needs %d", len(d.elems), t, n)
	}
	if t.DType.IsComplex() {
		cs := make([]complex128, len(d.elems))
		for i, e := range d.elems {
			cs[i] = e.complex(s, t.DType)
		}
		return &ir.Literal{Complex: cs}
	}
	for _, e := range d.elems {
		if e.pair != nil {
			s.failf(e.pos, "a complex element in a dense literal of type %s", mlirType(t))
		}
	}
	if t.DType.IsFloatValued() {
		fs := make([]float64, len(d.elems))
		for i, e := range d.elems {
			fs[i] = e.float(s, t.DType)
		}
		return &ir.Literal{Floats: fs}
	}
	is := make([]int64, len(d.elems))
	for i, e := range d.elems {
		is[i] = e.int(s, t.DType)
	}
	return &ir.Literal{Ints: is}
}

// complex reads (re, im) for the complex type dt, each part as a float of
// its part type.
func (e denseElem) complex(s *scanner, dt ir.DType) complex128 {
	if e.pair == nil {
		s.failf(e.pos, "a %s element must be written (re, im), found %s", mlirElemType(dt), e.text)
	}
	p := dt.ComplexPart()
	return complex(e.pair[0].float(s, p), e.pair[1].float(s, p))
}

func (e denseElem) float(s *scanner, dt ir.DType) float64 {
	if strings.HasPrefix(e.text, "0x") {
		bits, err := strconv.ParseUint(e.text[2:], 16, 64)
		if err != nil || len(e.text)-2 > 2*dt.Size() {
			s.failf(e.pos, "bad %s bit pattern %s", dt, e.text)
		}
		return floatFromBits(dt, bits)
	}
	v, err := strconv.ParseFloat(e.text, 64)
	if err != nil && !isRangeErr(err) {
		s.failf(e.pos, "bad %s element %s", dt, e.text)
	}
	return dt.RoundFloat(v)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func (e denseElem) int(s *scanner, dt ir.DType) int64 {
	if dt == ir.I1 {
		switch e.text {
		case "true", "1":
			return 1
		case "false", "0":
			return 0
		}
		s.failf(e.pos, "bad i1 element %s", e.text)
	}
	if dt == ir.U64 { // held as its bit pattern: 2^64-1 is -1
		v, err := strconv.ParseUint(e.text, 0, 64)
		if err != nil {
			s.failf(e.pos, "%s is not a %s", e.text, dt)
		}
		return int64(v)
	}
	lo, hi := dt.IntRange()
	v, err := strconv.ParseInt(e.text, 0, 64)
	if err != nil || v < lo || v > hi {
		s.failf(e.pos, "%s is not a %s", e.text, dt)
	}
	return v
}

func floatFromBits(dt ir.DType, bits uint64) float64 {
	switch dt {
	case ir.F64:
		return math.Float64frombits(bits)
	case ir.F16:
		return float64(ir.F16ToFloat32(uint16(bits)))
	case ir.BF16:
		return float64(ir.BF16ToFloat32(uint16(bits)))
	}
	if dt.IsNarrowFloat() {
		return dt.NarrowFromBits(uint8(bits))
	}
	return float64(math.Float32frombits(uint32(bits)))
}

// hexLiteral decodes a blob of n little-endian elements, or one (a splat).
// i1 elements take a byte each.
func (d *dense) hexLiteral(s *scanner, n int64) *ir.Literal {
	dt := d.typ.DType
	size := int64(dt.Size())
	if dt == ir.I1 {
		size = 1
	}
	count := int64(len(d.hex)) / size
	if int64(len(d.hex))%size != 0 || count != 1 && count != n {
		s.failf(d.pos, "dense blob of %d bytes does not fit %s", len(d.hex), d.typ)
	}
	l := &ir.Literal{}
	switch {
	case dt.IsComplex():
		l.Complex = make([]complex128, count)
	case dt.IsFloatValued():
		l.Floats = make([]float64, count)
	default:
		l.Ints = make([]int64, count)
	}
	for i := int64(0); i < count; i++ {
		if dt.IsComplex() {
			l.Complex[i] = complexFromBytes(dt, d.hex[i*size:(i+1)*size])
			continue
		}
		var buf [8]byte
		copy(buf[:], d.hex[i*size:(i+1)*size])
		bits := binary.LittleEndian.Uint64(buf[:])
		if dt.IsFloatValued() {
			l.Floats[i] = floatFromBits(dt, bits)
			continue
		}
		l.Ints[i] = signExtend(dt, bits, size)
	}
	return l
}

// complexFromBytes reads a little-endian complex element: the real part's
// bytes, then the imaginary part's.
func complexFromBytes(dt ir.DType, b []byte) complex128 {
	p := dt.ComplexPart()
	half := len(b) / 2
	if p == ir.F64 {
		return complex(math.Float64frombits(binary.LittleEndian.Uint64(b)), math.Float64frombits(binary.LittleEndian.Uint64(b[half:])))
	}
	return complex(floatFromBits(p, uint64(binary.LittleEndian.Uint32(b))), floatFromBits(p, uint64(binary.LittleEndian.Uint32(b[half:]))))
}

func signExtend(dt ir.DType, bits uint64, size int64) int64 {
	if dt == ir.I1 {
		return int64(bits & 1)
	}
	if dt.IsSubByte() { // a byte each, of which the low bits count
		return dt.WrapInt(int64(bits))
	}
	if dt.IsUnsigned() || size == 8 {
		return int64(bits)
	}
	shift := 64 - 8*size
	return int64(bits<<shift) >> shift
}
