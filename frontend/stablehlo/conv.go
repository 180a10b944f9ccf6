package stablehlo

import (
	"strconv"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// prettyConv reads the rest of
// stablehlo.convolution(%l, %r) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
// window = {stride = [..], pad = [[lo, hi], ..], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]}
// {batch_group_count = .., feature_group_count = .., ...} : (T, T) -> R.
// The dimension numbers are kept as written, as the generic form's
// #stablehlo.conv<...> is, and the window's fields become the generic
// form's attributes.
func (s *scanner) prettyConv(o *op) {
	s.expect("(")
	o.args = append(o.args, s.use())
	s.expect(",")
	o.args = append(o.args, s.use())
	s.expect(")")
	s.expect("dim_numbers")
	s.expect("=")
	s.skip()
	pos, start := s.pos(), s.off
	s.attrValue(false)
	s.expect("x")
	s.attrValue(false)
	s.expect("->")
	s.attrValue(false)
	o.attrs["dimension_numbers"] = &attr{pos: pos, kind: attrOther, text: s.src[start:s.off]}
	if s.accept(",") {
		s.expect("window")
		s.expect("=")
		names := map[string]string{"stride": "window_strides", "pad": "padding", "lhs_dilate": "lhs_dilation",
			"rhs_dilate": "rhs_dilation", "reverse": "window_reversal"}
		for k, v := range s.attrDict() {
			if n, ok := names[k]; ok {
				k = n
			}
			o.attrs[k] = v
		}
	}
	if s.peek("{") {
		for k, v := range s.attrDict() {
			o.attrs[k] = v
		}
	}
	s.expect(":")
	o.ins, o.outs = s.opType()
}

// conv maps stablehlo.convolution, and dynamic_conv whose padding operand
// is a constant. A result dtype wider than the operands' (i8 x i8 -> i32,
// bf16 x bf16 -> f32) converts the operands first, as dot does; a reversed
// window is refused.
func (bd *builder) conv(o *op, args []*ir.Value) *ir.Value {
	n := 2
	if o.name == "stablehlo.dynamic_conv" {
		n = 3
	}
	if len(args) != n {
		bd.s.failf(o.pos, "%s needs %d operands", o.name, n)
	}
	d := bd.attr(o, "dimension_numbers")
	a := &ir.ConvAttr{FeatureGroups: 1, BatchGroups: 1}
	if !convDimNumbers(d.text, a) {
		bd.s.failf(d.pos, "%s: unsupported dimension numbers %s", o.name, d.text)
	}
	a.Stride = bd.optInts(o, "window_strides")
	a.LhsDilation = bd.optInts(o, "lhs_dilation")
	a.RhsDilation = bd.optInts(o, "rhs_dilation")
	a.PadLow, a.PadHigh = bd.convPadding(o, a.Spatial())
	if n == 3 {
		a.PadLow, a.PadHigh = bd.constPadding(o, args[2], a.Spatial())
		args = args[:2]
	}
	if r := bd.optAttr(o, "window_reversal"); r != nil {
		for _, e := range r.list {
			if e.text != "false" {
				bd.s.failf(r.pos, "%s: unsupported window reversal", o.name)
			}
		}
	}
	if g := bd.optAttr(o, "feature_group_count"); g != nil {
		a.FeatureGroups = g.int(bd.s, "feature_group_count")
	}
	if g := bd.optAttr(o, "batch_group_count"); g != nil {
		a.BatchGroups = g.int(bd.s, "batch_group_count")
	}
	want := bd.result(o).DType
	for i, x := range args {
		dt := x.Type.DType
		if dt == want {
			continue
		}
		if dt.IsFloat() != want.IsFloat() || dt.Bits() >= want.Bits() {
			bd.s.failf(o.pos, "unsupported %s from %s operands to a %s result", o.name, dt, want)
		}
		args[i] = bd.emit(o, ir.OpConvert, nil, []ir.Type{x.Type.WithDType(want)}, x)
	}
	return bd.emit(o, ir.OpConvolution, a, nil, args...)
}

func (bd *builder) optInts(o *op, name string) []int64 {
	if a := bd.optAttr(o, name); a != nil {
		return a.ints(bd.s, name)
	}
	return nil
}

// convPadding reads padding as the pretty form's [[lo, hi], ...] or the
// generic form's dense<...> : tensor<Sx2xi64>.
func (bd *builder) convPadding(o *op, spatial int) (lo, hi []int64) {
	p := bd.optAttr(o, "padding")
	if p == nil {
		return nil, nil
	}
	var flat []int64
	switch p.kind {
	case attrList:
		for _, e := range p.list {
			pair := e.ints(bd.s, "padding")
			if len(pair) != 2 {
				bd.s.failf(e.pos, "%s: padding needs [low, high] pairs", o.name)
			}
			flat = append(flat, pair...)
		}
	case attrDense:
		l := p.dense.literal(bd.s)
		if l.Len() == 1 {
			for range 2 * spatial {
				flat = append(flat, l.Int(0))
			}
		} else {
			flat = append(flat, l.Ints...)
		}
	default:
		bd.s.failf(p.pos, "%s: unsupported padding %s", o.name, p.describe())
	}
	if len(flat) != 2*spatial {
		bd.s.failf(p.pos, "%s: padding needs %d [low, high] pairs", o.name, spatial)
	}
	for i := 0; i < len(flat); i += 2 {
		lo, hi = append(lo, flat[i]), append(hi, flat[i+1])
	}
	return lo, hi
}

// convDimNumbers reads [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f] (bare, or
// inside #stablehlo.conv<...>) into a's three dimension lists.
func convDimNumbers(text string, a *ir.ConvAttr) bool {
	text = strings.TrimSuffix(strings.TrimPrefix(text, "#stablehlo.conv<"), ">")
	lhs, rest, ok1 := strings.Cut(text, "x")
	rhs, out, ok2 := strings.Cut(rest, "->")
	if !ok1 || !ok2 {
		return false
	}
	var ok bool
	if a.LhsDims, ok = convRoles(lhs, "b", "f"); !ok {
		return false
	}
	if a.RhsDims, ok = convRoles(rhs, "o", "i"); !ok {
		return false
	}
	a.OutDims, ok = convRoles(out, "b", "f")
	return ok
}

// convRoles turns one operand's labels into the dimensions holding first,
// second and then spatial dimension 0, 1, ...
func convRoles(text, first, second string) ([]int64, bool) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "[") || !strings.HasSuffix(text, "]") {
		return nil, false
	}
	labels := strings.Split(text[1:len(text)-1], ",")
	roles := make([]int64, len(labels))
	seen := make([]bool, len(labels))
	for d, l := range labels {
		role := 0
		switch l = strings.TrimSpace(l); l {
		case first:
		case second:
			role = 1
		default:
			k, err := strconv.Atoi(l)
			if err != nil || k < 0 || k+2 >= len(labels) {
				return nil, false
			}
			role = k + 2
		}
		if role >= len(labels) || seen[role] {
			return nil, false // "[f]": a batch or feature role beyond the labels written
		}
		seen[role], roles[role] = true, int64(d)
	}
	return roles, true
}

// constPadding reads dynamic_conv's padding operand, a constant [S, 2].
func (bd *builder) constPadding(o *op, v *ir.Value, spatial int) (lo, hi []int64) {
	if v.Def == nil || v.Def.Op != ir.OpConstant || v.Type.DType.IsFloat() || !v.Type.Equal(ir.Tensor(v.Type.DType, int64(spatial), 2)) {
		bd.s.failf(o.pos, "unsupported form of %s: padding must be a constant integer tensor<%dx2>", o.name, spatial)
	}
	l := v.Def.Attr.(*ir.ConstAttr).Value
	for i := 0; i < spatial; i++ {
		lo, hi = append(lo, l.Int(2*i)), append(hi, l.Int(2*i+1))
	}
	return lo, hi
}
