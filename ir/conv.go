package ir

// ConvAttr is convolution's attribute: lax.conv_general_dilated's dimension
// numbers and window. LhsDims lists the lhs dimensions that hold the batch,
// the feature and then each spatial dimension; RhsDims the kernel's output
// feature, input feature and spatial dimensions; OutDims the result's batch,
// feature and spatial dimensions, in that order. Every per-spatial list has
// one entry per spatial dimension; Infer fills the defaults (stride and
// dilations 1, padding 0) and FeatureGroups/BatchGroups default to 1.
type ConvAttr struct {
	LhsDims, RhsDims, OutDims  []int64
	Stride, PadLow, PadHigh    []int64
	LhsDilation, RhsDilation   []int64
	FeatureGroups, BatchGroups int64
}

// Spatial is the number of spatial dimensions.
func (a *ConvAttr) Spatial() int { return max(len(a.LhsDims)-2, 0) }

func (a *ConvAttr) Fields() []AttrField {
	fs := []AttrField{intsField("lhs_dims", a.LhsDims), intsField("out_dims", a.OutDims), intsField("rhs_dims", a.RhsDims)}
	opt := func(name string, xs []int64, def int64) {
		if !allEqual(xs, def) {
			fs = append(fs, intsField(name, xs))
		}
	}
	opt("lhs_dilation", a.LhsDilation, 1)
	opt("rhs_dilation", a.RhsDilation, 1)
	opt("stride", a.Stride, 1)
	opt("pad_low", a.PadLow, 0)
	opt("pad_high", a.PadHigh, 0)
	if a.FeatureGroups != 1 {
		fs = append(fs, intField("feature_groups", a.FeatureGroups))
	}
	if a.BatchGroups != 1 {
		fs = append(fs, intField("batch_groups", a.BatchGroups))
	}
	return sortFields(fs)
}

func decodeConv(r *attrReader) Attr {
	a := &ConvAttr{LhsDims: r.ints("lhs_dims", true), RhsDims: r.ints("rhs_dims", true), OutDims: r.ints("out_dims", true),
		Stride: r.ints("stride", false), PadLow: r.ints("pad_low", false), PadHigh: r.ints("pad_high", false),
		LhsDilation: r.ints("lhs_dilation", false), RhsDilation: r.ints("rhs_dilation", false),
		FeatureGroups: r.optInt("feature_groups", 1), BatchGroups: r.optInt("batch_groups", 1)}
	return a
}

func (r *attrReader) optInt(name string, def int64) int64 {
	if _, ok := r.fields[name]; !ok {
		r.used[name] = true
		return def
	}
	return r.int(name)
}

// fill sets the defaults of the per-spatial lists for s spatial dimensions.
func (a *ConvAttr) fill(s int) {
	for _, p := range []struct {
		xs  *[]int64
		def int64
	}{{&a.Stride, 1}, {&a.PadLow, 0}, {&a.PadHigh, 0}, {&a.LhsDilation, 1}, {&a.RhsDilation, 1}} {
		if *p.xs == nil {
			*p.xs = filled(s, p.def)
		}
	}
}

func inferConv(c *inferCtx) []Type {
	l, r := c.args[0], c.args[1]
	a := c.attr.(*ConvAttr)
	if !c.checkClass(l, numericT, "lhs") {
		return nil
	}
	if l.DType != r.DType {
		return c.fail("operands of convolution have different dtypes: %s and %s", l, r)
	}
	if l.Rank() < 2 || r.Rank() != l.Rank() {
		return c.fail("convolution needs lhs and rhs of one rank of at least 2, got %s and %s", l, r)
	}
	s := l.Rank() - 2
	a.fill(s)
	if !c.convDims(a, l.Rank()) {
		return nil
	}
	ld, ok1 := c.convStatic(l)
	rd, ok2 := c.convStatic(r)
	if !ok1 || !ok2 {
		return nil
	}
	b, f := ld[a.LhsDims[0]], ld[a.LhsDims[1]]
	o, i := rd[a.RhsDims[0]], rd[a.RhsDims[1]]
	fg, bg := a.FeatureGroups, a.BatchGroups
	switch {
	case fg < 1 || bg < 1:
		return c.fail("convolution feature_groups %d and batch_groups %d must be at least 1", fg, bg)
	case fg > 1 && bg > 1:
		return c.fail("convolution cannot have both feature_groups %d and batch_groups %d above 1", fg, bg)
	case f%fg != 0 || f/fg != i:
		return c.fail("convolution lhs features %d must be rhs input features %d times feature_groups %d", f, i, fg)
	case b%bg != 0:
		return c.fail("convolution lhs batch %d is not a multiple of batch_groups %d", b, bg)
	case o%fg != 0 || o%bg != 0:
		return c.fail("convolution rhs output features %d must be a multiple of feature_groups %d and batch_groups %d", o, fg, bg)
	}
	shape := make([]Dim, l.Rank())
	shape[a.OutDims[0]], shape[a.OutDims[1]] = D(b/bg), D(o)
	for k := 0; k < s; k++ {
		n, ok := c.convWindow(a, k, ld[a.LhsDims[k+2]], rd[a.RhsDims[k+2]])
		if !ok {
			return nil
		}
		shape[a.OutDims[k+2]] = D(n)
	}
	return []Type{c.accumulate(Type{DType: l.DType, Shape: shape})}
}

func (c *inferCtx) convStatic(t Type) ([]int64, bool) {
	for i := range t.Shape {
		if _, ok := c.staticDim(t, i); !ok {
			return nil, false
		}
	}
	return t.Dims(), true
}

// convDims checks that each dimension list is a permutation of the rank's
// dimensions and each window list has one entry per spatial dimension.
func (c *inferCtx) convDims(a *ConvAttr, rank int) bool {
	for _, p := range []struct {
		name string
		xs   []int64
	}{{"lhs_dims", a.LhsDims}, {"rhs_dims", a.RhsDims}, {"out_dims", a.OutDims}} {
		seen := make([]bool, rank)
		if len(p.xs) != rank {
			c.fail("convolution %s needs %d entries for rank %d, got %d", p.name, rank, rank, len(p.xs))
			return false
		}
		for _, d := range p.xs {
			if d < 0 || d >= int64(rank) || seen[d] {
				c.fail("convolution %s %v is not a permutation of the %d dimensions", p.name, p.xs, rank)
				return false
			}
			seen[d] = true
		}
	}
	s := rank - 2
	for _, p := range []struct {
		name string
		xs   []int64
		min  int64
	}{{"stride", a.Stride, 1}, {"pad_low", a.PadLow, -maxDim / 4}, {"pad_high", a.PadHigh, -maxDim / 4},
		{"lhs_dilation", a.LhsDilation, 1}, {"rhs_dilation", a.RhsDilation, 1}} {
		if len(p.xs) != s {
			c.fail("convolution %s needs %d entries, one per spatial dimension, got %d", p.name, s, len(p.xs))
			return false
		}
		for _, x := range p.xs {
			if x < p.min || x > maxDim/4 {
				c.fail("convolution %s %v is out of range", p.name, p.xs)
				return false
			}
		}
	}
	return true
}

// convWindow is the result size of spatial dimension k: the lhs of size n
// dilated and padded, the window of size w dilated, stepped by the stride.
func (c *inferCtx) convWindow(a *ConvAttr, k int, n, w int64) (int64, bool) {
	if n > 0 && a.LhsDilation[k] > maxDim/4/n || a.RhsDilation[k] > maxDim/4/max(w, 1) {
		c.fail("convolution spatial dimension %d overflows int64", k)
		return 0, false
	}
	in := a.PadLow[k] + a.PadHigh[k]
	if n > 0 {
		in += (n-1)*a.LhsDilation[k] + 1
	}
	if w == 0 {
		c.fail("convolution window (rhs spatial dimension %d) is empty", k)
		return 0, false
	}
	win := (w-1)*a.RhsDilation[k] + 1
	if in < 0 {
		c.fail("convolution spatial dimension %d has negative padded size %d", k, in)
		return 0, false
	}
	if in < win {
		return 0, true
	}
	return (in-win)/a.Stride[k] + 1, true
}
