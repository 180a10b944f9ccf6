package stablehlo

import (
	"fmt"
	"strconv"

	"github.com/tpucc/tpucc/ir"
)

// quantType is a uniform quantized element type
// (!quant.uniform<i8:f32, 0.1:-30>, or per axis
// !quant.uniform<i8:f32:0, {0.1:-30, 0.5:-20}>): storage integers q that
// stand for expressed values (q - zero point) * scale, with one scale and
// zero point for the tensor, or one per index along dimension dim. ir has
// no quantized types: a quantized value is its storage integers, and the
// ops on it are read as what the specification defines them by,
// dequantize, the op on expressed values, quantize.
type quantType struct {
	storage, expressed ir.DType
	dim                int // -1: per tensor
	scales             []float64
	zps                []int64
}

var quantStorage = map[string]ir.DType{"i8": ir.I8, "i16": ir.I16, "i32": ir.I32, "u8": ir.U8, "u16": ir.U16}
var quantExpressed = map[string]ir.DType{"f32": ir.F32, "f16": ir.F16, "bf16": ir.BF16}

func (q *quantType) String() string {
	return fmt.Sprintf("%s:%s:%d %v:%v", q.storage, q.expressed, q.dim, q.scales, q.zps)
}

// quantType reads !quant.uniform<...> (not the tensor type's closing '>').
func (s *scanner) quantType() *quantType {
	pos := s.pos()
	s.expect("!quant.uniform<")
	q := &quantType{dim: -1}
	st, ok := quantStorage[s.word()]
	if !ok || s.peek("<") {
		s.failf(pos, "unsupported quantized storage type (i8, i16, i32, u8 or u16 with its full range)")
	}
	s.expect(":")
	ex, ok := quantExpressed[s.word()]
	if !ok {
		s.failf(pos, "unsupported quantized expressed type (f32, f16 or bf16)")
	}
	q.storage, q.expressed = st, ex
	if s.accept(":") {
		q.dim = int(s.attrValue(false).int(s, "quantized dimension"))
	}
	s.expect(",")
	one := func() {
		a := s.attrValue(false)
		v, err := strconv.ParseFloat(a.text, 64)
		if a.kind != attrNum || err != nil || !(v > 0) {
			s.failf(a.pos, "bad quantization scale %s", a.describe())
		}
		zp := int64(0)
		if s.accept(":") {
			zp = s.attrValue(false).int(s, "zero point")
		}
		q.scales, q.zps = append(q.scales, v), append(q.zps, zp)
	}
	if q.dim < 0 {
		one()
	} else {
		s.expect("{")
		for one(); s.accept(","); one() {
		}
		s.expect("}")
	}
	s.expect(">")
	return q
}

func (q *quantType) same(r *quantType) bool { return q.String() == r.String() }

// quantOp reads an op some of whose types are quantized.
func (bd *builder) quantOp(o *op) {
	args := bd.args(o)
	for i, a := range args {
		got, want := bd.quant[a], o.inQ[i]
		if (got == nil) != (want == nil) || got != nil && !got.same(want) {
			bd.s.failf(o.args[i].pos, "%s: operand %d's quantized type is not the one written", o.name, i)
		}
	}
	if len(o.outQ) != 1 {
		bd.s.failf(o.pos, "unsupported quantized %s: one result", o.name)
	}
	out := o.outQ[0]
	var r *ir.Value
	switch code, isElementwise := elementwise[o.name]; {
	case o.name == "stablehlo.uniform_quantize" && out != nil:
		x := args[0]
		if q := o.inQ[0]; q != nil {
			x = bd.dequantize(o, x, q)
		}
		r = bd.quantize(o, x, out)
	case o.name == "stablehlo.uniform_dequantize" && out == nil && o.inQ[0] != nil:
		r = bd.dequantize(o, args[0], o.inQ[0])
	case o.name == "stablehlo.bitcast_convert" && args[0].Type.Equal(o.outs[0]):
		// The storage integers as they are, under another type.
		r = bd.emit(o, ir.OpCopy, nil, []ir.Type{o.outs[0]}, args[0])
	case isElementwise:
		for i, q := range o.inQ {
			if q != nil {
				args[i] = bd.dequantize(o, args[i], q)
			}
		}
		r = bd.emit(o, code, nil, nil, args...)
		if out != nil {
			r = bd.quantize(o, r, out)
		}
	default:
		bd.s.failf(o.pos, "unsupported op %s on quantized values", o.name)
	}
	if out != nil {
		bd.quant[r] = out
	}
	bd.results(o, r)
}

// quantConsts are the scales and the zero points of q as constants of
// q's expressed type and shape t's dimensions: one value, or the value of
// each element's index along q's dimension.
func (bd *builder) quantConsts(o *op, q *quantType, t ir.Type) (scale, zp *ir.Value) {
	et := ir.Type{DType: q.expressed, Shape: t.Shape}
	dims := t.Dims()
	if q.dim >= len(dims) || q.dim >= 0 && dims[q.dim] != int64(len(q.scales)) {
		bd.s.failf(o.pos, "%s: a quantized dimension %d of %d scales does not fit %s", o.name, q.dim, len(q.scales), mlirType(t))
	}
	n, _ := t.NumElements()
	sv, zv := []float64{q.scales[0]}, []float64{float64(q.zps[0])}
	if q.dim >= 0 {
		sv, zv = make([]float64, n), make([]float64, n)
		inner := int64(1)
		for _, d := range dims[q.dim+1:] {
			inner *= d
		}
		for i := range sv {
			k := int64(i) / inner % dims[q.dim]
			sv[i], zv[i] = q.scales[k], float64(q.zps[k])
		}
	}
	c := func(v []float64) *ir.Value {
		return bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: ir.NewLiteral(et, v)}, []ir.Type{et})
	}
	return c(sv), c(zv)
}

// quantize is the specification's: round_nearest_even(x / scale) plus the
// zero point, clamped to the storage type's range and converted to it.
func (bd *builder) quantize(o *op, x *ir.Value, q *quantType) *ir.Value {
	if x.Type.DType != q.expressed {
		bd.s.failf(o.pos, "%s: quantizing %s, whose expressed type is %s", o.name, mlirType(x.Type), q.expressed)
	}
	scale, zp := bd.quantConsts(o, q, x.Type)
	r := bd.emit(o, ir.OpAdd, nil, nil, bd.emit(o, ir.OpRound, nil, nil, bd.emit(o, ir.OpDiv, nil, nil, x, scale)), zp)
	lo, hi := storageRange(q.storage)
	st := ir.Type{DType: q.expressed}
	clo := bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: ir.NewLiteral(st, []float64{lo})}, []ir.Type{st})
	chi := bd.emit(o, ir.OpConstant, &ir.ConstAttr{Value: ir.NewLiteral(st, []float64{hi})}, []ir.Type{st})
	r = bd.emit(o, ir.OpClamp, nil, nil, clo, r, chi)
	return bd.emit(o, ir.OpConvert, nil, []ir.Type{{DType: q.storage, Shape: x.Type.Shape}}, r)
}

// dequantize is (q - zero point) * scale in the expressed type.
func (bd *builder) dequantize(o *op, v *ir.Value, q *quantType) *ir.Value {
	scale, zp := bd.quantConsts(o, q, v.Type)
	x := bd.emit(o, ir.OpConvert, nil, []ir.Type{{DType: q.expressed, Shape: v.Type.Shape}}, v)
	return bd.emit(o, ir.OpMul, nil, nil, bd.emit(o, ir.OpSub, nil, nil, x, zp), scale)
}

func storageRange(d ir.DType) (lo, hi float64) {
	bits := d.Bits()
	if d.IsUnsigned() {
		return 0, float64(uint64(1)<<bits - 1)
	}
	return -float64(int64(1) << (bits - 1)), float64(int64(1)<<(bits-1) - 1)
}
