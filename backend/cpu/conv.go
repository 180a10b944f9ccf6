package cpu

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// convolution: every result element is a sum over the input features of its
// group and the window's positions of lhs·rhs, taken in a fixed order (window
// positions row-major, then features) in float64 (int64 for integers, wrapped
// once when stored). A window position whose lhs coordinate falls between
// dilated elements or in the padding reads nothing. The operands are read
// whole into float64 (int64) copies: the kernel's scratch (ir.ScratchConv).

func convKernel(in *ir.Instr, l, r *backend.Buffer) *backend.Buffer {
	out := backend.New(in.Results[0].Type)
	g := convGeometry(in)
	if out.Type().DType.IsFloat() {
		lv, rv := make([]float64, l.Len()), make([]float64, r.Len())
		l.ReadFloat64s(0, lv)
		r.ReadFloat64s(0, rv)
		for i, v := range convSum(g, lv, rv) {
			out.SetFloat64(i, v)
		}
		return out
	}
	lv, rv := make([]int64, l.Len()), make([]int64, r.Len())
	l.ReadInt64s(0, lv)
	r.ReadInt64s(0, rv)
	for i, v := range convSum(g, lv, rv) {
		out.SetInt64(i, v)
	}
	return out
}

// convGeom is a convolution's sizes and each operand's strides along its
// batch (or output feature), feature and spatial dimensions.
type convGeom struct {
	a                 *ir.ConvAttr
	batch, outBatch   int   // lhs batch, result batch
	feat, outFeat     int   // rhs input features (per group), rhs output features
	in, win, outSp    []int // lhs, window and result spatial sizes
	ls, rs, os        []int // strides: [batch|out feature, feature, spatial...]
	perFeat, perBatch int   // output features per feature group and per batch group
}

func convGeometry(in *ir.Instr) convGeom {
	a := in.Attr.(*ir.ConvAttr)
	ld, rd, od := in.Args[0].Type.Dims(), in.Args[1].Type.Dims(), in.Results[0].Type.Dims()
	pick := func(dims, which []int64) []int {
		out := make([]int, len(which))
		for i, w := range which {
			out[i] = int(dims[w])
		}
		return out
	}
	strides := func(dims, which []int64) []int {
		st := make([]int, len(dims))
		s := 1
		for d := len(dims) - 1; d >= 0; d-- {
			st[d] = s
			s *= int(dims[d])
		}
		return pick(toInt64s(st), which)
	}
	g := convGeom{a: a, batch: int(ld[a.LhsDims[0]]), outBatch: int(od[a.OutDims[0]]),
		feat: int(rd[a.RhsDims[1]]), outFeat: int(rd[a.RhsDims[0]]),
		in: pick(ld, a.LhsDims[2:]), win: pick(rd, a.RhsDims[2:]), outSp: pick(od, a.OutDims[2:]),
		ls: strides(ld, a.LhsDims), rs: strides(rd, a.RhsDims), os: strides(od, a.OutDims)}
	g.perFeat = g.outFeat / int(a.FeatureGroups)
	g.perBatch = g.outFeat / int(a.BatchGroups)
	return g
}

func toInt64s(xs []int) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}

// nextIndex steps idx, a position in the box sizes, row-major; false after the last.
func nextIndex(idx, sizes []int) bool {
	for d := len(idx) - 1; d >= 0; d-- {
		idx[d]++
		if idx[d] < sizes[d] {
			return true
		}
		idx[d] = 0
	}
	return false
}

func emptyBox(sizes []int) bool {
	for _, s := range sizes {
		if s == 0 {
			return true
		}
	}
	return false
}

func convSum[T float64 | int64](g convGeom, l, r []T) []T {
	n := g.outBatch * g.outFeat
	for _, s := range g.outSp {
		n *= s
	}
	out := make([]T, n)
	if n == 0 || emptyBox(g.win) {
		return out
	}
	sp := len(g.in)
	y, k := make([]int, sp), make([]int, sp)
	for b := 0; b < g.outBatch; b++ {
		for o := 0; o < g.outFeat; o++ {
			lb := (o/g.perBatch*g.outBatch + b) * g.ls[0]
			lf := o / g.perFeat * g.feat
			clear(y)
			for {
				oi := b*g.os[0] + o*g.os[1]
				for d := range y {
					oi += y[d] * g.os[d+2]
				}
				out[oi] = convPoint(g, l, r, y, k, lb, lf, o)
				if !nextIndex(y, g.outSp) {
					break
				}
			}
		}
	}
	return out
}

// convPoint is one result element: result position y of output feature o,
// lhs batch offset lb and first lhs feature lf; k is scratch for the window.
func convPoint[T float64 | int64](g convGeom, l, r []T, y, k []int, lb, lf, o int) T {
	var acc T
	clear(k)
	for {
		li, ri, ok := lb+lf*g.ls[1], o*g.rs[0], true
		for d := range k {
			x := y[d]*int(g.a.Stride[d]) - int(g.a.PadLow[d]) + k[d]*int(g.a.RhsDilation[d])
			dil := int(g.a.LhsDilation[d])
			if x < 0 || x%dil != 0 || x/dil >= g.in[d] {
				ok = false
				break
			}
			li += x / dil * g.ls[d+2]
			ri += k[d] * g.rs[d+2]
		}
		if ok {
			for i := 0; i < g.feat; i++ {
				acc += l[li+i*g.ls[1]] * r[ri+i*g.rs[1]]
			}
		}
		if !nextIndex(k, g.win) {
			return acc
		}
	}
}
