package llvm

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// The eager ops that move data or reduce it, put into the descriptors of
// the shape-generic kernels.

// eagerStrided copies x into a new buffer of type rt whose element idx is
// x's element at sum(idx[d]*strides[d]) (strides per result dimension).
// nil when the copy has more than eagerRank dimensions once merged.
func (b *Backend) eagerStrided(l *eagerLib, x *backend.Buffer, rt ir.Type, strides []int64) *backend.Buffer {
	dims, st := mergeStrided(rt.Dims(), strides)
	if len(dims) > eagerRank {
		return nil
	}
	out := backend.New(rt)
	total, _ := rt.NumElements()
	if total == 0 {
		return out
	}
	desc := append(append([]int64{int64(len(dims))}, dims...), st...)
	b.eagerCall(l.fns["eager_copy"], total/dims[len(dims)-1], total, false, out, x, desc)
	return out
}

// mergeStrided drops dimensions of size 1 and merges neighbours that read
// the input as one strided dimension; a scalar becomes [1].
func mergeStrided(dims, strides []int64) (md, ms []int64) {
	for d, n := range dims {
		if n == 1 {
			continue
		}
		k := len(md)
		if k > 0 && ms[k-1] == strides[d]*n {
			md[k-1] *= n
			ms[k-1] = strides[d]
			continue
		}
		md, ms = append(md, n), append(ms, strides[d])
	}
	if len(md) == 0 {
		return []int64{1}, []int64{0}
	}
	return md, ms
}

// eagerBroadcast: operand dimension i becomes result dimension dims[i]
// (stride 0 where it is broadcast from size 1), other result dimensions
// repeat it (stride 0).
func (b *Backend) eagerBroadcast(l *eagerLib, dims []int64, x *backend.Buffer, rt ir.Type) *backend.Buffer {
	xs := x.Type().Dims()
	xst := rowMajorStrides(xs)
	out := rt.Dims()
	strides := make([]int64, len(out))
	for i, d := range dims {
		if xs[i] == out[d] {
			strides[d] = xst[i]
		}
	}
	return b.eagerStrided(l, x, rt, strides)
}

// eagerTranspose: result dimension d is operand dimension perm[d].
func (b *Backend) eagerTranspose(l *eagerLib, perm []int64, x *backend.Buffer) *backend.Buffer {
	xs := x.Type().Dims()
	xst := rowMajorStrides(xs)
	dims := make([]int64, len(perm))
	strides := make([]int64, len(perm))
	for d, p := range perm {
		dims[d], strides[d] = xs[p], xst[p]
	}
	return b.eagerStrided(l, x, ir.Tensor(ir.F32, dims...), strides)
}

// eagerReduce reduces x over axes into rt (keepdims only changes the
// type). The input is seen as [A, R, B] with the reduced axes as R; when
// they are not one block of the layout, x is first transposed so they are
// last.
func (b *Backend) eagerReduce(l *eagerLib, op ir.Op, axes []int64, x *backend.Buffer, rt ir.Type) *backend.Buffer {
	dims := x.Type().Dims()
	red := make([]bool, len(dims))
	for _, a := range axes {
		red[a] = true
	}
	first, last, block := -1, -1, true
	for d, n := range dims {
		if !red[d] || n == 1 {
			continue
		}
		if first < 0 {
			first = d
		}
		last = d
	}
	for d := first + 1; block && first >= 0 && d < last; d++ {
		block = red[d] || dims[d] == 1
	}
	var A, R, B int64 = 1, 1, 1
	if !block {
		var perm []int64
		for d := range dims {
			if !red[d] {
				perm = append(perm, int64(d))
				A *= dims[d]
			}
		}
		for d := range dims {
			if red[d] {
				perm = append(perm, int64(d))
				R *= dims[d]
			}
		}
		if x = b.eagerTranspose(l, perm, x); x == nil {
			return nil
		}
	} else {
		for d, n := range dims {
			switch {
			case red[d]:
				R *= n
			case first >= 0 && d > last:
				B *= n
			default:
				A *= n
			}
		}
	}
	out := backend.New(rt)
	if B == 1 {
		b.eagerCall(l.fns[eagerName(op, "rows")], A, A*R, false, out, x, []int64{R})
	} else {
		b.eagerCall(l.fns[eagerName(op, "cols")], A, A*R*B, false, out, x, []int64{R, B})
	}
	return out
}

// eagerDot runs dot_general as a batch of strided products. An operand
// whose batch, free or contracting dimensions do not merge into one strided
// dimension each is first transposed into (batch, free, contracting) order.
func (b *Backend) eagerDot(l *eagerLib, a *ir.DotAttr, x, y *backend.Buffer, rt ir.Type) *backend.Buffer {
	lb, lc, rb, rc := a.LhsBatch, a.LhsContract, a.RhsBatch, a.RhsContract
	lhs := newDotOperand(x.Type(), lb, lc)
	if !eagerMerged(lhs) {
		if x, lb, lc = b.eagerCanonical(l, x, lb, lc); x == nil {
			return nil
		}
		lhs = newDotOperand(x.Type(), lb, lc)
	}
	rhs := newDotOperand(y.Type(), rb, rc)
	if !eagerMerged(rhs) {
		if y, rb, rc = b.eagerCanonical(l, y, rb, rc); y == nil {
			return nil
		}
		rhs = newDotOperand(y.Type(), rb, rc)
	}
	B, M, K, N := lhs.batch.size(), lhs.free.size(), lhs.contract.size(), rhs.free.size()
	out := backend.New(rt)
	if B*M*N == 0 {
		return out
	}
	mc, kc, nc := gemmBlocks(M, K, N)
	nIC, nJC := (M+mc-1)/mc, (N+nc-1)/nc
	desc := make([]int64, gdLen)
	desc[gdB], desc[gdM], desc[gdN], desc[gdK] = B, M, N, K
	desc[gdASB], desc[gdASM], desc[gdASK] = stride(lhs.batch), stride(lhs.free), stride(lhs.contract)
	desc[gdBSB], desc[gdBSK], desc[gdBSN] = stride(rhs.batch), stride(rhs.contract), stride(rhs.free)
	desc[gdMC], desc[gdKC], desc[gdNC], desc[gdNIC], desc[gdNJC] = mc, kc, nc, nIC, nJC
	name := "eager_dot_general"
	if desc[gdBSN] != 1 {
		name += "_strided"
	}
	b.eagerCall(l.fns[name], B*nJC*nIC, B*M*N*max(K, 1), true, out, x, y, desc)
	return out
}

// eagerMerged: every group of o is at most one strided dimension.
func eagerMerged(o dotOperand) bool {
	return len(o.batch.sizes) <= 1 && len(o.free.sizes) <= 1 && len(o.contract.sizes) <= 1
}

// stride is the stride of a merged group (0 when it is empty: size 1).
func stride(g dotGroup) int64 {
	if len(g.strides) == 0 {
		return 0
	}
	return g.strides[0]
}

// eagerCanonical transposes x into (batch, free, contracting) order and
// returns it with its new batch and contracting dimensions.
func (b *Backend) eagerCanonical(l *eagerLib, x *backend.Buffer, batch, contract []int64) (*backend.Buffer, []int64, []int64) {
	n := len(x.Type().Dims())
	perm := append(append(append([]int64{}, batch...), freeDims(n, batch, contract)...), contract...)
	y := b.eagerTranspose(l, perm, x)
	var nb, nc []int64
	for i := range batch {
		nb = append(nb, int64(i))
	}
	for i := range contract {
		nc = append(nc, int64(n-len(contract)+i))
	}
	return y, nb, nc
}
