package ir

// Window is the window of reduce_window and select_and_scatter, one entry
// per operand dimension: its Size, the Stride between windows, the
// operand's BaseDilation (d-1 holes between elements) and the window's
// WindowDilation, and the padding at each end (may be negative). Infer
// fills the defaults: strides and dilations 1, padding 0.
type Window struct {
	Size, Stride, BaseDilation, WindowDilation, PadLow, PadHigh []int64
}

func (w *Window) fields(dilations bool) []AttrField {
	fs := []AttrField{intsField("window", w.Size)}
	opt := func(name string, xs []int64, def int64) {
		if !allEqual(xs, def) {
			fs = append(fs, intsField(name, xs))
		}
	}
	opt("stride", w.Stride, 1)
	if dilations {
		opt("base_dilation", w.BaseDilation, 1)
		opt("window_dilation", w.WindowDilation, 1)
	}
	opt("pad_low", w.PadLow, 0)
	opt("pad_high", w.PadHigh, 0)
	return fs
}

func (r *attrReader) window(dilations bool) Window {
	w := Window{Size: r.ints("window", true), Stride: r.ints("stride", false),
		PadLow: r.ints("pad_low", false), PadHigh: r.ints("pad_high", false)}
	if dilations {
		w.BaseDilation, w.WindowDilation = r.ints("base_dilation", false), r.ints("window_dilation", false)
	}
	return w
}

// ReduceWindowAttr: reduce_window {kind=sum|max|min|prod, window=[...], ...}.
type ReduceWindowAttr struct {
	Kind ReduceKind
	Window
}

var reduceKindNames = map[ReduceKind]string{ReduceSum: "sum", ReduceMax: "max", ReduceMin: "min", ReduceProd: "prod"}

func (a *ReduceWindowAttr) Fields() []AttrField {
	fs := append(a.fields(true), AttrField{Name: "kind", Value: AttrValue{Kind: AttrIdent, Str: reduceKindNames[a.Kind]}})
	return sortFields(fs)
}

// SelectScatterAttr: select_and_scatter {select=ge|gt|le|lt, window=[...], ...}.
type SelectScatterAttr struct {
	Select CmpDir
	Window
}

func (a *SelectScatterAttr) Fields() []AttrField {
	fs := append(a.fields(false), AttrField{Name: "select", Value: AttrValue{Kind: AttrIdent, Str: a.Select.String()}})
	return sortFields(fs)
}

func decodeReduceWindow(r *attrReader) Attr {
	a := &ReduceWindowAttr{Window: r.window(true)}
	f, ok := r.get("kind", true)
	if !ok {
		return a
	}
	for k, n := range reduceKindNames {
		if f.Value.Kind == AttrIdent && f.Value.Str == n {
			a.Kind = k
			return a
		}
	}
	r.errorf(f.Pos, "attribute 'kind' of %s must be one of sum, max, min, prod, got %s", r.op, f.Value)
	return a
}

func decodeSelectScatter(r *attrReader) Attr {
	a := &SelectScatterAttr{Window: r.window(false)}
	f, ok := r.get("select", true)
	if !ok {
		return a
	}
	for _, d := range []CmpDir{CmpGE, CmpGT, CmpLE, CmpLT} {
		if f.Value.Kind == AttrIdent && f.Value.Str == d.String() {
			a.Select = d
			return a
		}
	}
	r.errorf(f.Pos, "attribute 'select' of %s must be one of ge, gt, le, lt, got %s", r.op, f.Value)
	return a
}

// check fills the defaults and checks the lists against a rank-n operand.
func (c *inferCtx) window(w *Window, n int) bool {
	for _, p := range []struct {
		xs  *[]int64
		def int64
	}{{&w.Stride, 1}, {&w.BaseDilation, 1}, {&w.WindowDilation, 1}, {&w.PadLow, 0}, {&w.PadHigh, 0}} {
		if *p.xs == nil {
			*p.xs = filled(n, p.def)
		}
	}
	for _, p := range []struct {
		name string
		xs   []int64
		min  int64
	}{{"window", w.Size, 1}, {"stride", w.Stride, 1}, {"base_dilation", w.BaseDilation, 1},
		{"window_dilation", w.WindowDilation, 1}, {"pad_low", w.PadLow, -maxDim / 4}, {"pad_high", w.PadHigh, -maxDim / 4}} {
		if len(p.xs) != n {
			c.fail("%s %s needs %d entries, one per dimension, got %d", c.op, p.name, n, len(p.xs))
			return false
		}
		for _, x := range p.xs {
			if x < p.min || x > maxDim/4 {
				c.fail("%s %s %v is out of range", c.op, p.name, p.xs)
				return false
			}
		}
	}
	return true
}

// InferWindow is w with its unset lists at their defaults (strides and
// dilations 1, padding 0; w itself is not changed) and the shape of the
// windows' results over an operand of type x, with the checks op's type
// inference makes (an entry a dimension, values in range, no overflow, a
// static operand): for a frontend that lowers a windowed op into others
// (the StableHLO importer's reduce_window with a body of its own).
func InferWindow(op Op, w Window, x Type) (Window, []int64, error) {
	c := &inferCtx{op: op}
	if !c.window(&w, x.Rank()) {
		return w, nil, c.err
	}
	s, ok := c.windowShape(&w, x)
	if !ok {
		return w, nil, c.err
	}
	out := make([]int64, len(s))
	for i, d := range s {
		out[i] = d.Size
	}
	return w, out, nil
}

// windowShape is the shape of the windows' results over x.
func (c *inferCtx) windowShape(w *Window, x Type) ([]Dim, bool) {
	s := make([]Dim, x.Rank())
	for i := range s {
		n, ok := c.staticDim(x, i)
		if !ok {
			return nil, false
		}
		if n > 0 && w.BaseDilation[i] > maxDim/4/n || w.WindowDilation[i] > maxDim/4/w.Size[i] {
			c.fail("%s dimension %d overflows int64", c.op, i)
			return nil, false
		}
		in := dilated(n, w.BaseDilation[i]) + w.PadLow[i] + w.PadHigh[i]
		win := dilated(w.Size[i], w.WindowDilation[i])
		if in < 0 {
			c.fail("%s dimension %d has negative padded size %d", c.op, i, in)
			return nil, false
		}
		s[i] = D(0)
		if in >= win {
			s[i] = D((in-win)/w.Stride[i] + 1)
		}
	}
	return s, true
}

func dilated(n, d int64) int64 {
	if n == 0 {
		return 0
	}
	return (n-1)*d + 1
}

func inferReduceWindow(c *inferCtx) []Type {
	x, init := c.args[0], c.args[1]
	a := c.attr.(*ReduceWindowAttr)
	if !c.checkClass(x, numericT, "operand") {
		return nil
	}
	if init.Rank() != 0 || init.DType != x.DType {
		return c.fail("init value of reduce_window must be %s[], got %s", x.DType, init)
	}
	if !c.window(&a.Window, x.Rank()) {
		return nil
	}
	s, ok := c.windowShape(&a.Window, x)
	if !ok {
		return nil
	}
	return []Type{x.WithShape(s)}
}

func inferSelectScatter(c *inferCtx) []Type {
	x, src, init := c.args[0], c.args[1], c.args[2]
	a := c.attr.(*SelectScatterAttr)
	if !c.checkClass(x, numericT, "operand") {
		return nil
	}
	if init.Rank() != 0 || init.DType != x.DType {
		return c.fail("init value of select_and_scatter must be %s[], got %s", x.DType, init)
	}
	if !c.window(&a.Window, x.Rank()) {
		return nil
	}
	s, ok := c.windowShape(&a.Window, x)
	if !ok {
		return nil
	}
	if want := x.WithShape(s); src.DType != x.DType || !src.SameShape(want) {
		return c.fail("source of select_and_scatter must be %s, the windows' shape, got %s", want, src)
	}
	return []Type{x.WithShape(x.Shape)}
}
