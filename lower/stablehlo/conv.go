package stablehlo

import (
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// conv lowers convolution as JAX prints lax.conv_general_dilated. Half
// precision operands accumulate in f32 and one convert rounds, and a wider
// result converts the operands first, as dot does. Sub-byte operands run in
// eight bits, as dot's do: XLA:CPU refuses an s2 convolution, and the sums
// of products wrap modulo 2^8 there, whose low bits the convert back keeps.
func (e *emitter) conv(a *ir.ConvAttr, l, r hv, t ir.Type) hv {
	acc := t.DType
	switch {
	case isHalf(l.t.DType) && (isHalf(acc) || acc == ir.F32):
		acc = ir.F32
	case acc.IsSubByte():
		acc = byteWide(acc)
		l, r = e.convert(l, acc), e.convert(r, acc)
	case acc != l.t.DType:
		l, r = e.convert(l, acc), e.convert(r, acc)
	}
	s := a.Spatial()
	pads := make([]string, s)
	for i := range pads {
		pads[i] = "[" + strconv.FormatInt(a.PadLow[i], 10) + ", " + strconv.FormatInt(a.PadHigh[i], 10) + "]"
	}
	reverse := strings.TrimSuffix(strings.Repeat("false, ", s), ", ")
	var b strings.Builder
	b.WriteString("stablehlo.convolution(" + l.ref + ", " + r.ref + ") dim_numbers = ")
	b.WriteString(convLabels(a.LhsDims, "b", "f") + "x" + convLabels(a.RhsDims, "o", "i") + "->" + convLabels(a.OutDims, "b", "f"))
	b.WriteString(", window = {stride = " + ints(a.Stride) + ", pad = [" + strings.Join(pads, ", ") + "], lhs_dilate = " + ints(a.LhsDilation))
	b.WriteString(", rhs_dilate = " + ints(a.RhsDilation) + ", reverse = [" + reverse + "]} {batch_group_count = ")
	b.WriteString(strconv.FormatInt(a.BatchGroups, 10) + " : i64, feature_group_count = " + strconv.FormatInt(a.FeatureGroups, 10))
	p := "#stablehlo<precision " + e.precision + ">"
	b.WriteString(" : i64, precision_config = [" + p + ", " + p + "]} : ")
	res := e.def(t.WithDType(acc), b.String(), funcType([]hv{l, r}, []ir.Type{t.WithDType(acc)}))
	return e.convert(res, t.DType)
}

// convLabels spells one operand's dimension numbers, [b, 0, 1, f]: dims
// lists the dimensions holding the two named roles, then the spatial ones.
func convLabels(dims []int64, first, second string) string {
	labels := make([]string, len(dims))
	for role, d := range dims {
		switch role {
		case 0:
			labels[d] = first
		case 1:
			labels[d] = second
		default:
			labels[d] = strconv.Itoa(role - 2)
		}
	}
	return "[" + strings.Join(labels, ", ") + "]"
}
