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
