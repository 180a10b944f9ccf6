package ir

import (
	"fmt"
	"sort"
)

// dtypeClass is the set of element types an op accepts.
type dtypeClass uint8

const (
	anyT       dtypeClass = iota
	floatT                // f32 f16 bf16 f64
	numericT              // floats and integers, not i1
	bitsT                 // i1 and integers
	intT                  // integers, not i1
	complexT              // c64 c128
	numCplxT              // floats, integers (not i1) and complex types
	floatCplxT            // floats and complex types
)

func (k dtypeClass) has(d DType) bool {
	switch k {
	case floatT:
		return d.IsFloat()
	case numericT:
		return d.IsNumeric()
	case bitsT:
		return d.IsInt() || d.IsBool()
	case intT:
		return d.IsInt()
	case complexT:
		return d.IsComplex()
	case numCplxT:
		return d.IsNumeric() || d.IsComplex()
	case floatCplxT:
		return d.IsFloat() || d.IsComplex()
	}
	return d != Invalid
}

func (k dtypeClass) String() string {
	switch k {
	case floatT:
		return "a float type (f32, f16, bf16, f64)"
	case numericT:
		return "a numeric type (a float or an integer, not i1)"
	case bitsT:
		return "i1 or an integer type"
	case intT:
		return "an integer type"
	case complexT:
		return "a complex type (c64, c128)"
	case numCplxT:
		return "a numeric type (a float, an integer or a complex type, not i1)"
	case floatCplxT:
		return "a float or complex type (f32, f16, bf16, f64, c64, c128)"
	}
	return "any type"
}

type inferCtx struct {
	op   Op
	args []Type
	attr Attr
	hint []Type
	err  error
}

func (c *inferCtx) fail(format string, args ...any) []Type {
	if c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
	return nil
}

// Infer checks op's operands and attribute and returns its result types.
// hint holds the result types written in the program (nil if none); ops that
// NeedsType take theirs from it, and for the others it must agree with what is
// inferred. Errors carry no position: the caller adds its own.
//
// Infer also fills rank-dependent attribute defaults (slice strides, pad interior).
func Infer(op Op, args []Type, attr Attr, hint []Type) ([]Type, error) {
	info := op.Info()
	if op == OpInvalid || op >= numOps {
		return nil, fmt.Errorf("unknown op")
	}
	switch {
	case info.Args >= 0 && len(args) != info.Args:
		return nil, fmt.Errorf("%s takes %s, got %d", op, plural(info.Args, "operand"), len(args))
	case info.Args < 0 && len(args) < info.MinArgs:
		return nil, fmt.Errorf("%s takes at least %s, got %d", op, plural(info.MinArgs, "operand"), len(args))
	}
	if info.decode != nil && attr == nil {
		return nil, fmt.Errorf("%s is missing its attributes", op)
	}
	if info.NeedsType && len(hint) == 0 {
		return nil, fmt.Errorf("%s needs its result type written after ':'", op)
	}
	for _, a := range args {
		if a.DType == Invalid {
			return nil, fmt.Errorf("%s has an operand of invalid type", op)
		}
	}
	c := &inferCtx{op: op, args: args, attr: attr, hint: hint}
	res := info.infer(c)
	if c.err != nil {
		return nil, c.err
	}
	if hint == nil || info.NeedsType {
		return res, nil
	}
	if len(hint) != len(res) {
		return nil, fmt.Errorf("%s has %s, but %d types are written", op, plural(len(res), "result"), len(hint))
	}
	for i := range res {
		if !hint[i].SameShape(res[i]) || hint[i].DType != res[i].DType {
			return nil, fmt.Errorf("result type %s of %s does not match the inferred %s", hint[i], op, res[i])
		}
	}
	return hint, nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func (c *inferCtx) checkClass(t Type, k dtypeClass, what string) bool {
	if !k.has(t.DType) && t.DType.IsNarrowFloat() && k != anyT {
		c.fail("%s of %s is %s: the f8, f6 and f4 types have no arithmetic (convert to f32 first)", what, c.op, t)
		return false
	}
	if !k.has(t.DType) {
		c.fail("%s of %s must have %s, got %s", what, c.op, k, t)
		return false
	}
	return true
}

// same: every operand has one type of class k, and so does the result.
func (c *inferCtx) same(k dtypeClass) []Type {
	t := c.args[0]
	if !c.checkClass(t, k, "operand") {
		return nil
	}
	for _, u := range c.args[1:] {
		if !u.SameShape(t) || u.DType != t.DType {
			return c.fail("operands of %s have different types: %s and %s", c.op, t, u)
		}
	}
	return []Type{t.WithShape(t.Shape)}
}

func (c *inferCtx) axis(axis int64, rank int, what string) bool {
	if axis < 0 || axis >= int64(rank) {
		c.fail("%s %d of %s is out of range for rank %d", what, axis, c.op, rank)
		return false
	}
	return true
}

func (c *inferCtx) staticDim(t Type, i int) (int64, bool) {
	if t.Shape[i].Symbolic() {
		c.fail("%s needs a static size for dimension %d of %s", c.op, i, t)
		return 0, false
	}
	return t.Shape[i].Size, true
}

func inferCompare(c *inferCtx) []Type {
	a, b := c.args[0], c.args[1]
	if !a.SameShape(b) || a.DType != b.DType {
		return c.fail("operands of compare have different types: %s and %s", a, b)
	}
	if d, ok := c.attr.(*CompareAttr); ok && a.DType.IsComplex() && d.Dir != CmpEQ && d.Dir != CmpNE {
		return c.fail("compare of %s values is eq or ne only: complex numbers are not ordered", a.DType)
	}
	return []Type{a.WithDType(I1)}
}

func inferSelect(c *inferCtx) []Type {
	p, a, b := c.args[0], c.args[1], c.args[2]
	if p.DType != I1 {
		return c.fail("predicate of select must be i1, got %s", p)
	}
	if !a.SameShape(b) || a.DType != b.DType {
		return c.fail("select branches have different types: %s and %s", a, b)
	}
	if p.Rank() != 0 && !p.SameShape(a) {
		return c.fail("predicate %s of select must be i1[] or have the branches' shape %s", p, a)
	}
	return []Type{a.WithShape(a.Shape)}
}

func inferClamp(c *inferCtx) []Type {
	lo, x, hi := c.args[0], c.args[1], c.args[2]
	if !c.checkClass(x, numericT, "operand") {
		return nil
	}
	for _, b := range []Type{lo, hi} {
		if b.DType != x.DType || (b.Rank() != 0 && !b.SameShape(x)) {
			return c.fail("bounds of clamp must be %s[] or %s, got %s", x.DType, x, b)
		}
	}
	return []Type{x.WithShape(x.Shape)}
}

func inferReshape(c *inferCtx) []Type {
	x, r := c.args[0], c.hint[0]
	if x.DType != r.DType {
		return c.fail("reshape cannot change the dtype (%s to %s): use convert", x, r)
	}
	if !sameElementCount(x, r) {
		return c.fail("reshape from %s to %s changes the number of elements", x, r)
	}
	return []Type{r}
}

// sameElementCount compares element counts, matching symbolic dimensions by name.
func sameElementCount(a, b Type) bool {
	count := func(t Type) (int64, []string) {
		n := int64(1)
		var syms []string
		for _, d := range t.Shape {
			if d.Symbolic() {
				syms = append(syms, d.Sym)
			} else {
				if d.Size != 0 && n > (1<<62)/d.Size {
					return -1, nil
				}
				n *= d.Size
			}
		}
		sort.Strings(syms)
		return n, syms
	}
	na, sa := count(a)
	nb, sb := count(b)
	if na < 0 || nb < 0 {
		return false
	}
	if na != nb || len(sa) != len(sb) {
		return na == 0 && nb == 0
	}
	for i := range sa {
		if sa[i] != sb[i] {
			return false
		}
	}
	return true
}

func inferConvert(c *inferCtx) []Type {
	x, r := c.args[0], c.hint[0]
	if !x.SameShape(r) {
		return c.fail("convert cannot change the shape (%s to %s): use reshape", x, r)
	}
	return []Type{r}
}

// inferCopy: the written result type is the operand's but for the layout,
// which is what a copy changes.
func inferCopy(c *inferCtx) []Type {
	x, r := c.args[0], c.hint[0]
	if !x.SameShape(r) || x.DType != r.DType {
		return c.fail("copy changes only the layout (%s to %s)", x, r)
	}
	return []Type{r}
}

func inferBroadcast(c *inferCtx) []Type {
	x, r := c.args[0], c.hint[0]
	dims := c.attr.(*DimsAttr).Dims
	if x.DType != r.DType {
		return c.fail("broadcast cannot change the dtype (%s to %s)", x, r)
	}
	if len(dims) != x.Rank() {
		return c.fail("broadcast dims has %d entries for an operand of rank %d", len(dims), x.Rank())
	}
	seen := map[int64]bool{}
	for i, d := range dims {
		if d < 0 || d >= int64(r.Rank()) {
			return c.fail("broadcast dims[%d] = %d is out of range for result rank %d", i, d, r.Rank())
		}
		if seen[d] {
			return c.fail("broadcast dims repeats %d", d)
		}
		seen[d] = true
		if xd := x.Shape[i]; xd != r.Shape[d] && xd != D(1) {
			return c.fail("broadcast operand dimension %d (size %s) must be 1 or equal result dimension %d (size %s)", i, xd, d, r.Shape[d])
		}
	}
	return []Type{r}
}

func checkPerm(perm []int64, rank int) bool {
	if len(perm) != rank {
		return false
	}
	seen := make([]bool, rank)
	for _, p := range perm {
		if p < 0 || p >= int64(rank) || seen[p] {
			return false
		}
		seen[p] = true
	}
	return true
}

func inferTranspose(c *inferCtx) []Type {
	x := c.args[0]
	perm := c.attr.(*PermAttr).Perm
	if !checkPerm(perm, x.Rank()) {
		return c.fail("transpose perm %v is not a permutation of rank %d", perm, x.Rank())
	}
	s := make([]Dim, len(perm))
	for i, p := range perm {
		s[i] = x.Shape[p]
	}
	return []Type{x.WithShape(s)}
}

// maxDim bounds dimension arithmetic: sizes and sums of sizes stay below it.
const maxDim = int64(1) << 62

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func filled(n int, v int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func inferSlice(c *inferCtx) []Type {
	x := c.args[0]
	a := c.attr.(*SliceAttr)
	if a.Stride == nil {
		a.Stride = filled(x.Rank(), 1)
	}
	if len(a.Start) != x.Rank() || len(a.Limit) != x.Rank() || len(a.Stride) != x.Rank() {
		return c.fail("slice start, limit and stride need %d entries each for %s", x.Rank(), x)
	}
	s := make([]Dim, x.Rank())
	for i := range s {
		n, ok := c.staticDim(x, i)
		if !ok {
			return nil
		}
		st, lim, str := a.Start[i], a.Limit[i], a.Stride[i]
		if st < 0 || st > lim || lim > n || str < 1 {
			return c.fail("slice dimension %d: need 0 <= start (%d) <= limit (%d) <= size (%d) and stride (%d) >= 1", i, st, lim, n, str)
		}
		k := (lim - st) / str
		if (lim-st)%str != 0 {
			k++
		}
		s[i] = D(k)
	}
	return []Type{x.WithShape(s)}
}

func inferConcat(c *inferCtx) []Type {
	x := c.args[0]
	axis := c.attr.(*AxisAttr).Axis
	if !c.axis(axis, x.Rank(), "axis") {
		return nil
	}
	total, ok := c.staticDim(x, int(axis))
	if !ok {
		return nil
	}
	for _, u := range c.args[1:] {
		if u.DType != x.DType || u.Rank() != x.Rank() {
			return c.fail("operands of concat have different dtypes or ranks: %s and %s", x, u)
		}
		for i := range u.Shape {
			if int64(i) != axis && u.Shape[i] != x.Shape[i] {
				return c.fail("operands of concat differ outside axis %d: %s and %s", axis, x, u)
			}
		}
		n, ok := c.staticDim(u, int(axis))
		if !ok {
			return nil
		}
		if total > maxDim-n {
			return c.fail("concat result dimension %d overflows int64", axis)
		}
		total += n
	}
	s := append([]Dim(nil), x.Shape...)
	s[axis] = D(total)
	return []Type{x.WithShape(s)}
}

func inferPad(c *inferCtx) []Type {
	x, v := c.args[0], c.args[1]
	a := c.attr.(*PadAttr)
	if a.Interior == nil {
		a.Interior = filled(x.Rank(), 0)
	}
	if v.Rank() != 0 || v.DType != x.DType {
		return c.fail("padding value of pad must be %s[], got %s", x.DType, v)
	}
	if len(a.Low) != x.Rank() || len(a.High) != x.Rank() || len(a.Interior) != x.Rank() {
		return c.fail("pad low, high and interior need %d entries each for %s", x.Rank(), x)
	}
	s := make([]Dim, x.Rank())
	for i := range s {
		n, ok := c.staticDim(x, i)
		if !ok {
			return nil
		}
		if a.Interior[i] < 0 {
			return c.fail("pad interior[%d] = %d must not be negative", i, a.Interior[i])
		}
		lo, hi, in := a.Low[i], a.High[i], a.Interior[i]
		if abs64(lo) > maxDim/4 || abs64(hi) > maxDim/4 || (n > 1 && in > maxDim/4/(n-1)) {
			return c.fail("pad dimension %d overflows int64", i)
		}
		m := lo + hi + n + max(n-1, 0)*in
		if m < 0 {
			return c.fail("pad dimension %d would have negative size %d", i, m)
		}
		s[i] = D(m)
	}
	return []Type{x.WithShape(s)}
}

func inferIota(c *inferCtx) []Type {
	r := c.hint[0]
	if !c.checkClass(r, numCplxT, "result") {
		return nil
	}
	if !c.axis(c.attr.(*AxisAttr).Axis, r.Rank(), "axis") {
		return nil
	}
	return []Type{r}
}

func inferDot(c *inferCtx) []Type {
	l, r := c.args[0], c.args[1]
	a := c.attr.(*DotAttr)
	if !l.DType.IsNarrowFloat() && !c.checkClass(l, numCplxT, "lhs") {
		return nil
	}
	if l.DType != r.DType {
		return c.fail("operands of dot_general have different dtypes: %s and %s", l, r)
	}
	if a.Algorithm != nil {
		if why := a.Algorithm.Refusal(l.DType); why != "" {
			return c.fail("dot_general has no algorithm with %s", why)
		}
	}
	if len(a.LhsBatch) != len(a.RhsBatch) || len(a.LhsContract) != len(a.RhsContract) {
		return c.fail("dot_general needs as many lhs as rhs batch and contracting dimensions")
	}
	lUsed, ok1 := c.dotDims(l, "lhs", a.LhsBatch, a.LhsContract)
	rUsed, ok2 := c.dotDims(r, "rhs", a.RhsBatch, a.RhsContract)
	if !ok1 || !ok2 {
		return nil
	}
	var s []Dim
	for i := range a.LhsBatch {
		ld, rd := l.Shape[a.LhsBatch[i]], r.Shape[a.RhsBatch[i]]
		if ld != rd {
			return c.fail("dot_general batch dimensions differ: lhs %d (%s) and rhs %d (%s)", a.LhsBatch[i], ld, a.RhsBatch[i], rd)
		}
		s = append(s, ld)
	}
	for i := range a.LhsContract {
		ld, rd := l.Shape[a.LhsContract[i]], r.Shape[a.RhsContract[i]]
		if ld != rd {
			return c.fail("dot_general contracting dimensions differ: lhs %d (%s) and rhs %d (%s)", a.LhsContract[i], ld, a.RhsContract[i], rd)
		}
	}
	for i, d := range l.Shape {
		if !lUsed[i] {
			s = append(s, d)
		}
	}
	for i, d := range r.Shape {
		if !rUsed[i] {
			s = append(s, d)
		}
	}
	return []Type{c.accumulate(Type{DType: l.DType, Shape: s})}
}

// accumulate returns res, or res in the wider accumulation type the written
// result type asks for: bf16 x bf16 -> f32, i8 x i8 -> i32.
func (c *inferCtx) accumulate(res Type) Type {
	if len(c.hint) == 1 && c.hint[0].DType != res.DType && c.hint[0].SameShape(res) {
		h, d := c.hint[0].DType, res.DType
		if (h.IsFloatValued() && d.IsFloatValued() && h.Bits() >= d.Bits()) || (h.IsInt() && d.IsInt() && h.Bits() >= d.Bits()) {
			res.DType = h
		}
	}
	return res
}

// inferRaggedDot: lhs [m,k] and rhs [g,k,n] of one numeric dtype, group
// sizes [g] of i32; the result is [m,n] (a wider accumulation type may be
// asked for, as for dot_general).
func inferRaggedDot(c *inferCtx) []Type {
	l, r, g := c.args[0], c.args[1], c.args[2]
	if !c.checkClass(l, numericT, "lhs") {
		return nil
	}
	if l.DType != r.DType {
		return c.fail("operands of ragged_dot have different dtypes: %s and %s", l, r)
	}
	if l.Rank() != 2 || r.Rank() != 3 || g.Rank() != 1 {
		return c.fail("ragged_dot takes lhs [m,k], rhs [g,k,n] and group sizes [g], got %s, %s and %s", l, r, g)
	}
	if g.DType != I32 {
		return c.fail("ragged_dot group sizes must be i32, got %s", g)
	}
	if l.Shape[1] != r.Shape[1] {
		return c.fail("ragged_dot contracting dimensions differ: lhs %s and rhs %s", l.Shape[1], r.Shape[1])
	}
	if r.Shape[0] != g.Shape[0] {
		return c.fail("ragged_dot has %s groups in rhs and %s group sizes", r.Shape[0], g.Shape[0])
	}
	return []Type{c.accumulate(Type{DType: l.DType, Shape: []Dim{l.Shape[0], r.Shape[2]}})}
}

// inferRaggedContract: lhs [m,k] and rhs [m,n] of one numeric dtype, group
// sizes [g] of i32; the result is [g,k,n] (a wider accumulation type may be
// asked for, as for ragged_dot).
func inferRaggedContract(c *inferCtx) []Type {
	l, r, g := c.args[0], c.args[1], c.args[2]
	if !c.checkClass(l, numericT, "lhs") {
		return nil
	}
	if l.DType != r.DType {
		return c.fail("operands of ragged_contract have different dtypes: %s and %s", l, r)
	}
	if l.Rank() != 2 || r.Rank() != 2 || g.Rank() != 1 {
		return c.fail("ragged_contract takes lhs [m,k], rhs [m,n] and group sizes [g], got %s, %s and %s", l, r, g)
	}
	if g.DType != I32 {
		return c.fail("ragged_contract group sizes must be i32, got %s", g)
	}
	if l.Shape[0] != r.Shape[0] {
		return c.fail("ragged_contract rows differ: lhs %s and rhs %s", l.Shape[0], r.Shape[0])
	}
	return []Type{c.accumulate(Type{DType: l.DType, Shape: []Dim{g.Shape[0], l.Shape[1], r.Shape[1]}})}
}

func (c *inferCtx) dotDims(t Type, side string, batch, contract []int64) ([]bool, bool) {
	used := make([]bool, t.Rank())
	for _, list := range [][]int64{batch, contract} {
		for _, d := range list {
			if d < 0 || d >= int64(t.Rank()) {
				c.fail("dot_general %s dimension %d is out of range for %s", side, d, t)
				return nil, false
			}
			if used[d] {
				c.fail("dot_general %s dimension %d is used twice", side, d)
				return nil, false
			}
			used[d] = true
		}
	}
	return used, true
}

func inferReduce(c *inferCtx) []Type {
	x := c.args[0]
	a := c.attr.(*AxesAttr)
	k := numericT
	if c.op == OpReduceSum || c.op == OpReduceProd {
		k = numCplxT // complex numbers add and multiply, but are not ordered
	}
	if !c.checkClass(x, k, "operand") {
		return nil
	}
	drop := make([]bool, x.Rank())
	for _, ax := range a.Axes {
		if !c.axis(ax, x.Rank(), "axis") {
			return nil
		}
		if drop[ax] {
			return c.fail("%s axes repeats %d", c.op, ax)
		}
		drop[ax] = true
	}
	s := []Dim{}
	for i, d := range x.Shape {
		switch {
		case !drop[i]:
			s = append(s, d)
		case a.KeepDims:
			s = append(s, D(1))
		}
	}
	return []Type{x.WithShape(s)}
}

func inferArg(c *inferCtx) []Type {
	x := c.args[0]
	axis := c.attr.(*AxisAttr).Axis
	if !c.checkClass(x, numericT, "operand") || !c.axis(axis, x.Rank(), "axis") {
		return nil
	}
	s := []Dim{}
	for i, d := range x.Shape {
		if int64(i) != axis {
			s = append(s, d)
		}
	}
	return []Type{{DType: I32, Shape: s}}
}

func inferSameNumericAxis(c *inferCtx) []Type {
	x := c.args[0]
	if !c.checkClass(x, numericT, "operand") || !c.axis(c.attr.(*AxisAttr).Axis, x.Rank(), "axis") {
		return nil
	}
	return []Type{x.WithShape(x.Shape)}
}

func inferSameFloatAxis(c *inferCtx) []Type {
	x := c.args[0]
	if !c.checkClass(x, floatT, "operand") || !c.axis(c.attr.(*AxisAttr).Axis, x.Rank(), "axis") {
		return nil
	}
	return []Type{x.WithShape(x.Shape)}
}

// takeShape is x.shape[:axis] + idx.shape + x.shape[axis+1:].
func takeShape(x, idx Type, axis int64) []Dim {
	s := append([]Dim{}, x.Shape[:axis]...)
	s = append(s, idx.Shape...)
	return append(s, x.Shape[axis+1:]...)
}

func inferTake(c *inferCtx) []Type {
	x, idx := c.args[0], c.args[1]
	axis := c.attr.(*AxisAttr).Axis
	if !c.axis(axis, x.Rank(), "axis") || !c.checkClass(idx, intT, "indices") {
		return nil
	}
	return []Type{x.WithShape(takeShape(x, idx, axis))}
}

func inferScatterAdd(c *inferCtx) []Type {
	x, idx, upd := c.args[0], c.args[1], c.args[2]
	axis := c.attr.(*AxisAttr).Axis
	if !c.checkClass(x, numericT, "operand") || !c.axis(axis, x.Rank(), "axis") || !c.checkClass(idx, intT, "indices") {
		return nil
	}
	want := x.WithShape(takeShape(x, idx, axis))
	if !upd.SameShape(want) || upd.DType != x.DType {
		return c.fail("updates of scatter_add must be %s, got %s", want, upd)
	}
	return []Type{x.WithShape(x.Shape)}
}

func (c *inferCtx) startIndices(idx []Type, rank int) bool {
	if len(idx) != rank {
		c.fail("%s needs %d start indices for rank %d, got %d", c.op, rank, rank, len(idx))
		return false
	}
	for _, t := range idx {
		if t.Rank() != 0 || !t.DType.IsInt() || t.DType != idx[0].DType {
			c.fail("start indices of %s must be integer scalars of one dtype, got %s", c.op, t)
			return false
		}
	}
	return true
}

func inferDynamicSlice(c *inferCtx) []Type {
	x := c.args[0]
	sizes := c.attr.(*SizesAttr).Sizes
	if !c.startIndices(c.args[1:], x.Rank()) {
		return nil
	}
	if len(sizes) != x.Rank() {
		return c.fail("dynamic_slice sizes needs %d entries for %s", x.Rank(), x)
	}
	s := make([]Dim, len(sizes))
	for i, n := range sizes {
		d, ok := c.staticDim(x, i)
		if !ok {
			return nil
		}
		if n < 0 || n > d {
			return c.fail("dynamic_slice sizes[%d] = %d must be between 0 and %d", i, n, d)
		}
		s[i] = D(n)
	}
	return []Type{x.WithShape(s)}
}

func inferDynamicUpdateSlice(c *inferCtx) []Type {
	x, upd := c.args[0], c.args[1]
	if upd.DType != x.DType || upd.Rank() != x.Rank() {
		return c.fail("update %s of dynamic_update_slice must have the dtype and rank of %s", upd, x)
	}
	if !c.startIndices(c.args[2:], x.Rank()) {
		return nil
	}
	for i := range x.Shape {
		d, ok1 := c.staticDim(x, i)
		u, ok2 := c.staticDim(upd, i)
		if !ok1 || !ok2 {
			return nil
		}
		if u > d {
			return c.fail("update %s of dynamic_update_slice does not fit in %s", upd, x)
		}
	}
	return []Type{x.WithShape(x.Shape)}
}

func inferOneHot(c *inferCtx) []Type {
	idx, r := c.args[0], c.hint[0]
	depth := c.attr.(*DepthAttr).Depth
	if !c.checkClass(idx, intT, "indices") {
		return nil
	}
	if depth < 0 {
		return c.fail("one_hot depth must not be negative, got %d", depth)
	}
	want := r.WithShape(append(append([]Dim{}, idx.Shape...), D(depth)))
	if !r.SameShape(want) {
		return c.fail("result of one_hot must be %s, got %s", want, r)
	}
	return []Type{r}
}

func inferTopK(c *inferCtx) []Type {
	x := c.args[0]
	k := c.attr.(*TopKAttr).K
	if !c.checkClass(x, numericT, "operand") {
		return nil
	}
	if x.Rank() == 0 {
		return c.fail("top_k needs an operand of rank at least 1, got %s", x)
	}
	last, ok := c.staticDim(x, x.Rank()-1)
	if !ok {
		return nil
	}
	if k < 0 || k > last {
		return c.fail("top_k k = %d must be between 0 and the last dimension %d", k, last)
	}
	s := append([]Dim{}, x.Shape...)
	s[len(s)-1] = D(k)
	return []Type{x.WithShape(s), {DType: I32, Shape: s}}
}

func inferArgsort(c *inferCtx) []Type {
	x := c.args[0]
	if !c.checkClass(x, numericT, "operand") || !c.axis(c.attr.(*AxisAttr).Axis, x.Rank(), "axis") {
		return nil
	}
	return []Type{{DType: I32, Shape: x.Shape}}
}

func inferNorm(c *inferCtx) []Type {
	x := c.args[0]
	if !c.checkClass(x, floatT, "operand") {
		return nil
	}
	if x.Rank() == 0 {
		return c.fail("%s needs an operand of rank at least 1, got %s", c.op, x)
	}
	want := Type{DType: x.DType, Shape: []Dim{x.Shape[x.Rank()-1]}}
	for _, p := range c.args[1:] {
		if !p.SameShape(want) || p.DType != want.DType {
			return c.fail("scale and bias of %s must be %s, got %s", c.op, want, p)
		}
	}
	if eps := c.attr.(*EpsAttr).Eps; !(eps >= 0) {
		return c.fail("%s eps must be a non-negative number, got %v", c.op, eps)
	}
	return []Type{x.WithShape(x.Shape)}
}

func inferConstant(c *inferCtx) []Type {
	r := c.hint[0]
	a, ok := c.attr.(*ConstAttr)
	if !ok || a.Value == nil {
		return c.fail("constant has no value")
	}
	n, static := r.NumElements()
	if !static {
		return c.fail("constant needs a static type, got %s", r)
	}
	if l := a.Value.Len(); l != 1 && int64(l) != n {
		return c.fail("constant has %d elements, its type %s needs %d", l, r, n)
	}
	if (a.Value.Floats != nil) != r.DType.IsFloatValued() || (a.Value.Complex != nil) != r.DType.IsComplex() {
		return c.fail("constant's elements do not match its dtype %s", r.DType)
	}
	return []Type{r}
}

func inferCall(c *inferCtx) []Type {
	if c.hint == nil {
		return c.fail("call needs its callee's result types")
	}
	return c.hint
}

// inferAbs: abs keeps a real operand's type; a complex operand's modulus is
// a float of its part type.
func inferAbs(c *inferCtx) []Type {
	r := c.same(numCplxT)
	if r == nil || !r[0].DType.IsComplex() {
		return r
	}
	return []Type{r[0].WithDType(r[0].DType.ComplexPart())}
}

// inferPart: real and imag of a complex operand have its part type.
func inferPart(c *inferCtx) []Type {
	r := c.same(complexT)
	if r == nil {
		return nil
	}
	return []Type{r[0].WithDType(r[0].DType.ComplexPart())}
}

// inferComplex: two f32 (or f64) operands of one shape make a c64 (c128).
func inferComplex(c *inferCtx) []Type {
	r := c.same(floatT)
	if r == nil {
		return nil
	}
	if cd := r[0].DType.ComplexOf(); cd != Invalid {
		return []Type{r[0].WithDType(cd)}
	}
	return c.fail("operands of complex must be f32 or f64, got %s", r[0])
}
