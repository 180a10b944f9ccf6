package cpu

import (
	"fmt"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// runSort sorts each line of the operands along the sort's dimension by its
// comparator region, run on scalars: a stable merge sort (mergeSort), which
// is also a valid result of a sort that need not be stable. Every operand
// is permuted as the line's order says.
func (mc *machine) runSort(f *ir.Func, in *ir.Instr, vals, args []*backend.Buffer) ([]*backend.Buffer, error) {
	dims := args[0].Type().Dims()
	axis := int(in.Attr.(*ir.SortAttr).Dimension)
	n, inner := int(dims[axis]), 1
	for _, d := range dims[axis+1:] {
		inner *= int(d)
	}
	outer := 1
	for _, d := range dims[:axis] {
		outer *= int(d)
	}
	sizes := make([]int, len(args))
	for k, a := range args {
		if sizes[k] = elemSize(a); sizes[k] == 0 {
			return nil, ir.Errorf(in.Pos, "sort of %s is not supported by the cpu executor", a.Type().DType)
		}
	}
	outs := make([]*backend.Buffer, len(args))
	for k, a := range args {
		outs[k] = a.Clone()
	}
	c := comparator{mc: mc, f: f, in: in, vals: vals, args: args, sizes: sizes}
	perm := make([]int, n)
	for o := range outer {
		for i := range inner {
			base := o*n*inner + i
			for j := range perm {
				perm[j] = base + j*inner
			}
			perm = mergeSort(perm, c.less)
			if c.err != nil {
				return nil, c.err
			}
			for k, a := range args {
				src, dst, es := a.Bytes(), outs[k].Bytes(), sizes[k]
				for j, p := range perm {
					at := base + j*inner
					copy(dst[at*es:(at+1)*es], src[p*es:(p+1)*es])
				}
			}
		}
	}
	return outs, nil
}

// elemSize is the bytes of one element of b, 0 where elements are not
// whole bytes.
func elemSize(b *backend.Buffer) int {
	if b.Len() == 0 {
		return 1
	}
	if len(b.Bytes())%b.Len() != 0 {
		return 0
	}
	return len(b.Bytes()) / b.Len()
}

// comparator runs a sort's region on the scalars of two elements.
type comparator struct {
	mc    *machine
	f     *ir.Func
	in    *ir.Instr
	vals  []*backend.Buffer
	args  []*backend.Buffer
	sizes []int
	err   error
}

// mergeSort sorts xs stably by less, bottom up: runs of 1, 2, 4, ...
// merged pairwise, the left run's element taken unless the right one's is
// less. On a comparator that is a strict weak order any stable sort gives
// this order; on one that is not (lt on NaNs, le) the order is this
// sequence of comparisons', which the llvm backend's kernel makes too. It
// returns the sorted slice (xs or a scratch copy).
func mergeSort(xs []int, less func(a, b int) bool) []int {
	from, to := xs, make([]int, len(xs))
	for w := 1; w < len(xs); w *= 2 {
		for lo := 0; lo < len(xs); lo += 2 * w {
			mid, hi := min(lo+w, len(xs)), min(lo+2*w, len(xs))
			i, j := lo, mid
			for t := lo; t < hi; t++ {
				if i < mid && (j >= hi || !less(from[j], from[i])) {
					to[t], i = from[i], i+1
				} else {
					to[t], j = from[j], j+1
				}
			}
		}
		from, to = to, from
	}
	return from
}

func (c *comparator) less(a, b int) bool {
	if c.err != nil {
		return false
	}
	params := make([]*backend.Buffer, 0, 2*len(c.args))
	for k, x := range c.args {
		params = append(params, c.scalar(k, x, a), c.scalar(k, x, b))
	}
	res, err := c.mc.block(c.f, c.in.Regions[0], c.vals, params)
	if err == nil && (len(res) != 1 || res[0] == nil || res[0].Type().DType != ir.I1) {
		err = fmt.Errorf("sort comparator returned %d values, want one i1", len(res))
	}
	if err != nil {
		c.err = err
		return false
	}
	return res[0].Int64At(0) != 0
}

func (c *comparator) scalar(k int, x *backend.Buffer, i int) *backend.Buffer {
	s := backend.New(ir.Scalar(x.Type().DType))
	es := c.sizes[k]
	copy(s.Bytes(), x.Bytes()[i*es:(i+1)*es])
	return s
}
