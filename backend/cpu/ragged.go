package cpu

import "github.com/tpucc/tpucc/ir"

// ragged_dot: row r of lhs [m,k] is multiplied by rhs[i] [k,n] for the group
// i whose row range [ends[i-1], ends[i]) holds r, ends being the running sum of
// the group sizes with negative sizes taken as 0 (docs/ops.md), so every row is
// in at most one group; rows past the last group are 0 and groups past m are
// cut at m.
//
// The loops run group by group, then row, then k, adding lhs[r,kk]*rhs[i,kk,:]
// into the output row: each expert's weights stream once per row in the order
// they are stored, which is what a decode step with a few rows per group costs.
// Accumulation is in float64 (int64), rounded (wrapped) once, as dot_general.
func raggedDotKernel(in *ir.Instr, l, r, sizes *Tensor) *Tensor {
	rt := in.Results[0].Type
	m, k := int(l.Type.Shape[0].Size), int(l.Type.Shape[1].Size)
	g, n := int(r.Type.Shape[0].Size), int(r.Type.Shape[2].Size)
	out := NewTensor(rt)
	end := int64(0)
	for i := 0; i < g; i++ {
		start := end
		end += max(sizes.I[i], 0)
		lo, hi := max(start, 0), min(end, int64(m))
		for row := int(lo); row < int(hi); row++ {
			if rt.DType.IsFloat() {
				raggedRowFloat(out.F[row*n:(row+1)*n], l.F[row*k:(row+1)*k], r.F[i*k*n:(i+1)*k*n], n)
			} else {
				raggedRowInt(out.I[row*n:(row+1)*n], l.I[row*k:(row+1)*k], r.I[i*k*n:(i+1)*k*n], n)
			}
		}
	}
	if rt.DType.IsFloat() {
		for i, v := range out.F {
			out.F[i] = rt.DType.RoundFloat(v)
		}
	} else {
		for i, v := range out.I {
			out.I[i] = rt.DType.WrapInt(v)
		}
	}
	return out
}

// raggedRowFloat adds lhs·w to acc, lhs a row [k] and w a matrix [k,n].
func raggedRowFloat(acc, lhs, w []float64, n int) {
	for kk, a := range lhs {
		for j, b := range w[kk*n : (kk+1)*n] {
			acc[j] += a * b
		}
	}
}

func raggedRowInt(acc, lhs, w []int64, n int) {
	for kk, a := range lhs {
		for j, b := range w[kk*n : (kk+1)*n] {
			acc[j] += a * b
		}
	}
}
