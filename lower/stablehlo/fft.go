package stablehlo

import (
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// fft writes stablehlo.fft as JAX prints it.
func (e *emitter) fft(in *ir.Instr, x hv) hv {
	at := in.Attr.(*ir.FFTAttr)
	t := in.Results[0].Type
	n := make([]string, len(at.Length))
	for i, l := range at.Length {
		n[i] = strconv.FormatInt(l, 10)
	}
	return e.def(t, "stablehlo.fft ", x.ref, ", type = ", strings.ToUpper(at.Type.String()), ", length = [", strings.Join(n, ", "),
		"] : ", funcType([]hv{x}, []ir.Type{t}))
}

// rngBitGenerator writes stablehlo.rng_bit_generator as JAX prints it.
// Bits of a type other than an unsigned integer are made as the unsigned
// integer of their width and bitcast: XLA:CPU hands back a signed or float
// result of the op itself labelled with the unsigned type.
func (e *emitter) rngBitGenerator(in *ir.Instr, s hv) []hv {
	alg := strings.ToUpper(in.Attr.(*ir.RngAttr).Algorithm.String())
	st, bits := in.Results[0].Type, in.Results[1].Type
	made := bits
	if !bits.DType.IsUnsigned() {
		made.DType = map[int]ir.DType{8: ir.U8, 16: ir.U16, 32: ir.U32, 64: ir.U64}[bits.DType.Bits()]
	}
	ts := []ir.Type{st, made}
	res := e.defN(ts, "stablehlo.rng_bit_generator ", s.ref, ", algorithm = ", alg, " : ", funcType([]hv{s}, ts))
	if made.DType != bits.DType {
		res[1] = e.def(bits, "stablehlo.bitcast_convert ", res[1].ref, " : ", funcType(res[1:], []ir.Type{bits}))
	}
	return res
}
