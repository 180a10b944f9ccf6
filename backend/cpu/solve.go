package cpu

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// triangularSolveKernel solves op(a)·x = b or x·op(a) = b for each batch
// matrix, one column (left side) or row (right side) of b at a time, by
// substitution in float64 (complex128 for complex dtypes), rounding each
// solution element once into the dtype. The right-side form is the left-side one on the transposes
// (x·op(a) = b is op(a)ᵀ·xᵀ = bᵀ), so both run as a left-side solve by
// the matrix t: a, or aᵀ when exactly one of transpose_a and the right side
// holds. t is lower triangular when a's written triangle is lower and t is
// not transposed, or upper and transposed.
func triangularSolveKernel(in *ir.Instr, a, b *backend.Buffer) *backend.Buffer {
	at := in.Attr.(*ir.TriangularSolveAttr)
	out := backend.New(in.Results[0].Type)
	dims := b.Type().Dims()
	r := len(dims)
	m := int(dims[r-2])
	vecs, stride, step := int(dims[r-1]), int(dims[r-1]), 1 // columns of b
	if !at.LeftSide {
		m = int(dims[r-1])
		vecs, stride, step = int(dims[r-2]), 1, m // rows of b
	}
	if m == 0 || vecs == 0 {
		return out
	}
	trans := at.TransposeA != !at.LeftSide
	if a.Type().DType.IsComplex() {
		s := substitution[complex128]{at: a.Complex128At, m: m, trans: trans, lower: at.Lower != trans, unit: at.UnitDiagonal}
		s.run(b.Complex128At, out.SetComplex128, vecs, stride, step, out.Len())
	} else {
		s := substitution[float64]{at: a.Float64At, m: m, trans: trans, lower: at.Lower != trans, unit: at.UnitDiagonal}
		s.run(b.Float64At, out.SetFloat64, vecs, stride, step, out.Len())
	}
	return out
}

// substitution solves t·x = x in place for one batch matrix of a (at base),
// in float64 for real dtypes and complex128 for complex ones.
type substitution[T float64 | complex128] struct {
	at                 func(int) T // a's element
	base, m            int
	trans, lower, unit bool
	x                  []T
}

// run solves for each of the vecs vectors of every batch matrix of b (n
// elements): vector v of a batch starts at v*step, its elements stride apart.
func (s *substitution[T]) run(get func(int) T, set func(int, T), vecs, stride, step, n int) {
	s.x = make([]T, s.m)
	for batch := 0; batch < n/(s.m*vecs); batch++ {
		s.base = batch * s.m * s.m
		for v := 0; v < vecs; v++ {
			off := batch*s.m*vecs + v*step
			for i := range s.x {
				s.x[i] = get(off + i*stride)
			}
			s.solve()
			for i, xi := range s.x {
				set(off+i*stride, xi)
			}
		}
	}
}

// t is element (i, j) of the matrix solved by.
func (s *substitution[T]) t(i, j int) T {
	if s.trans {
		i, j = j, i
	}
	return s.at(s.base + i*s.m + j)
}

// solve runs forward substitution for a lower t, backward for an upper one;
// only t's triangle (and its diagonal unless unit) is read.
func (s *substitution[T]) solve() {
	for n := 0; n < s.m; n++ {
		i := n
		if !s.lower {
			i = s.m - 1 - n
		}
		sum := s.x[i]
		for k := 0; k < s.m; k++ {
			if (s.lower && k < i) || (!s.lower && k > i) {
				sum -= s.t(i, k) * s.x[k]
			}
		}
		if !s.unit {
			sum /= s.t(i, i)
		}
		s.x[i] = sum
	}
}
