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
