package stablehlo

import (
	"fmt"

	"github.com/tpucc/tpucc/ir"
)

// reducePrecision reads stablehlo.reduce_precision: pretty `format = e5m10`
// or generic exponent_bits and mantissa_bits.
func (bd *builder) reducePrecision(o *op, args []*ir.Value) *ir.Value {
	at := &ir.ReducePrecisionAttr{}
	if f := bd.optAttr(o, "format"); f != nil {
		if _, err := fmt.Sscanf(f.text, "e%dm%d", &at.ExponentBits, &at.MantissaBits); err != nil || f.text != fmt.Sprintf("e%dm%d", at.ExponentBits, at.MantissaBits) {
			bd.s.failf(f.pos, "%s: unsupported format %s", o.name, f.describe())
		}
	} else {
		at.ExponentBits = bd.attr(o, "exponent_bits").int(bd.s, "exponent_bits")
		at.MantissaBits = bd.attr(o, "mantissa_bits").int(bd.s, "mantissa_bits")
	}
	return bd.emit(o, ir.OpReducePrecision, at, nil, args...)
}
