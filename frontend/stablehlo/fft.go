package stablehlo

import "github.com/tpucc/tpucc/ir"

var fftTypes = map[string]ir.FFTType{"FFT": ir.FFTForward, "IFFT": ir.FFTInverse, "RFFT": ir.FFTReal, "IRFFT": ir.FFTRealInverse}

// fft reads stablehlo.fft: `type = FFT, length = [n]` in the pretty form,
// fft_type and fft_length in the generic one.
func (bd *builder) fft(o *op, args []*ir.Value) *ir.Value {
	t := bd.attr(o, "type", "fft_type")
	kind, ok := fftTypes[t.text]
	if t.kind != attrWord || !ok {
		bd.s.failf(t.pos, "%s: unsupported fft_type %s", o.name, t.describe())
	}
	at := &ir.FFTAttr{Type: kind, Length: bd.ints(o, "length", "fft_length")}
	return bd.emit(o, ir.OpFFT, at, []ir.Type{bd.result(o)}, args...)
}

var rngAlgorithms = map[string]ir.RngAlgorithm{"DEFAULT": ir.RngDefault, "THREE_FRY": ir.RngThreeFry, "PHILOX": ir.RngPhilox}

// rngBitGenerator reads stablehlo.rng_bit_generator: `algorithm = PHILOX`
// in the pretty form, rng_algorithm in the generic one.
func (bd *builder) rngBitGenerator(o *op, args []*ir.Value) []*ir.Value {
	t := bd.attr(o, "algorithm", "rng_algorithm")
	alg, ok := rngAlgorithms[t.text]
	if t.kind != attrWord || !ok {
		bd.s.failf(t.pos, "%s: unsupported rng_algorithm %s", o.name, t.describe())
	}
	in, err := bd.b.Emit(ir.OpRngBitGenerator, &ir.RngAttr{Algorithm: alg}, append([]ir.Type{}, o.outs...), args...)
	if err != nil {
		bd.s.failf(o.pos, "%s: %v", o.name, err)
	}
	return in.Results
}
