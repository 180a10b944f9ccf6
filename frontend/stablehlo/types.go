package stablehlo

import (
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// dtypes maps MLIR element types to ir's; any other element type is refused by name.
var dtypes = map[string]ir.DType{
	"f32": ir.F32, "f16": ir.F16, "bf16": ir.BF16, "f64": ir.F64, "i1": ir.I1,
	"i8": ir.I8, "i16": ir.I16, "i32": ir.I32, "i64": ir.I64, "ui8": ir.U8, "ui32": ir.U32,
	"complex<f32>": ir.C64, "complex<f64>": ir.C128,
	"ui16": ir.U16, "ui64": ir.U64, "i2": ir.I2, "i4": ir.I4, "ui2": ir.U2, "ui4": ir.U4,
	"f8E4M3FN": ir.F8E4M3FN, "f8E5M2": ir.F8E5M2, "f8E4M3FNUZ": ir.F8E4M3FNUZ, "f8E5M2FNUZ": ir.F8E5M2FNUZ,
	"f8E4M3B11FNUZ": ir.F8E4M3B11FNUZ, "f8E4M3": ir.F8E4M3, "f8E3M4": ir.F8E3M4, "f8E8M0FNU": ir.F8E8M0FNU,
	"f6E2M3FN": ir.F6E2M3FN, "f6E3M2FN": ir.F6E3M2FN, "f4E2M1FN": ir.F4E2M1FN,
}

// tensorType reads tensor<2x3xf32> (tensor<f32> for a scalar).
func (s *scanner) tensorType() ir.Type {
	s.skip()
	pos := s.pos()
	if !s.accept("tensor<") {
		if s.peek("!") {
			s.advance(1)
			s.failf(pos, "unsupported type !%s", s.typeName())
		}
		if w := s.peekWord(); w != "" {
			s.failf(pos, "unsupported type %s: only ranked tensors are supported", w)
		}
		s.failf(pos, "expected a tensor type, found %s", s.found())
	}
	var dims []int64
	for {
		s.skip()
		if s.eof() {
			s.failf(pos, "unterminated tensor type")
		}
		c := s.src[s.off]
		if c == '?' {
			s.failf(s.pos(), "unsupported dynamic dimension '?' in a tensor type")
		}
		if c < '0' || c > '9' {
			break
		}
		start := s.off
		for s.off < len(s.src) && '0' <= s.src[s.off] && s.src[s.off] <= '9' {
			s.advance(1)
		}
		n, err := strconv.ParseInt(s.src[start:s.off], 10, 64)
		if err != nil || n > 1<<40 {
			s.failf(pos, "dimension %s is too large", s.src[start:s.off])
		}
		dims = append(dims, n)
		if s.eof() || s.src[s.off] != 'x' {
			s.failf(s.pos(), "expected 'x' after a dimension, found %s", s.found())
		}
		s.advance(1)
	}
	return ir.Tensor(s.elemType(), dims...)
}

// elemType reads the element type and the closing '>' of a tensor type.
func (s *scanner) elemType() ir.DType {
	pos := s.pos()
	if s.peek("!quant.uniform<") {
		q := s.quantType()
		if s.quants == nil {
			s.failf(pos, "unsupported quantized type here: only the operands and results of an op in the generic form may be quantized")
		}
		*s.quants = append(*s.quants, q)
		s.expect(">")
		return q.storage
	}
	if s.quants != nil {
		*s.quants = append(*s.quants, nil)
	}
	name := s.typeName()
	dt, ok := dtypes[name]
	if name == "index" && s.index {
		dt, ok = ir.I64, true
	}
	if !ok {
		s.failf(pos, "unsupported element type %s", name)
	}
	if s.peek(",") {
		s.failf(s.pos(), "unsupported tensor encoding %s", strings.TrimSpace(s.restOfType()))
	}
	s.expect(">")
	return dt
}

// typeName reads an element type such as f32, ui8 or complex<f32>.
func (s *scanner) typeName() string {
	start := s.off
	w := s.word()
	if w == "" {
		s.failf(s.pos(), "expected an element type, found %s", s.found())
	}
	if s.peek("<") {
		s.balanced()
	}
	return s.src[start:s.off]
}

func (s *scanner) restOfType() string {
	start := s.off
	s.expect(",")
	for !s.eof() && s.src[s.off] != '>' {
		if c := s.src[s.off]; c == '<' || c == '{' || c == '[' || c == '(' {
			s.balanced()
			continue
		}
		s.advance(1)
	}
	return s.src[start+1 : s.off]
}

func (s *scanner) peekWord() string {
	s.skip()
	end := s.off
	for end < len(s.src) && isIdent(s.src[end]) {
		end++
	}
	return s.src[s.off:end]
}

// typeList reads T or (T, T, ...).
func (s *scanner) typeList() []ir.Type {
	if !s.accept("(") {
		return []ir.Type{s.tensorType()}
	}
	ts := []ir.Type{} // () is an empty list, not a missing one
	if s.accept(")") {
		return ts
	}
	for {
		ts = append(ts, s.tensorType())
		if s.accept(")") {
			return ts
		}
		s.expect(",")
	}
}

// opType reads an op's trailing type: T, or T, T (select), or (T, ...) -> R.
// ins is nil when only result types were written.
func (s *scanner) opType() (ins, outs []ir.Type) {
	ts := s.typeList()
	for s.accept(",") {
		ts = append(ts, s.tensorType())
	}
	if !s.accept("->") {
		return nil, ts
	}
	return ts, s.typeList()
}
