package cpu

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

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
func raggedDotKernel(in *ir.Instr, l, r, sizes *backend.Buffer) *backend.Buffer {
	rt := in.Results[0].Type
	m, k := int(l.Type().Shape[0].Size), int(l.Type().Shape[1].Size)
	g, n := int(r.Type().Shape[0].Size), int(r.Type().Shape[2].Size)
	out := backend.New(rt)
	float := rt.DType.IsFloat()
	var facc, flhs, fw []float64
	var iacc, ilhs, iw []int64
	if float {
		facc, flhs, fw = make([]float64, n), make([]float64, k), make([]float64, n)
	} else {
		iacc, ilhs, iw = make([]int64, n), make([]int64, k), make([]int64, n)
	}
	end := int64(0)
	for i := 0; i < g; i++ {
		start := end
		end += max(sizes.Int64At(i), 0)
		lo, hi := max(start, 0), min(end, int64(m))
		for row := int(lo); row < int(hi); row++ {
			if float {
				raggedRowFloat(facc, flhs, fw, l, r, row, i)
				out.WriteFloat64s(row*n, facc)
			} else {
				raggedRowInt(iacc, ilhs, iw, l, r, row, i)
				out.WriteInt64s(row*n, iacc)
			}
		}
	}
	return out
}

// raggedRowFloat sets acc to lhs row `row` times group i's matrix [k,n],
// reading the row into lhs and each matrix row into w.
func raggedRowFloat(acc, lhs, w []float64, l, r *backend.Buffer, row, i int) {
	k, n := len(lhs), len(acc)
	clear(acc)
	l.ReadFloat64s(row*k, lhs)
	for kk, a := range lhs {
		r.ReadFloat64s((i*k+kk)*n, w)
		for j, b := range w {
			acc[j] += a * b
		}
	}
}

func raggedRowInt(acc, lhs, w []int64, l, r *backend.Buffer, row, i int) {
	k, n := len(lhs), len(acc)
	clear(acc)
	l.ReadInt64s(row*k, lhs)
	for kk, a := range lhs {
		r.ReadInt64s((i*k+kk)*n, w)
		for j, b := range w {
			acc[j] += a * b
		}
	}
}

// ragged_contract: result[i] [k,n] is the sum over the rows r of group i of
// lhs[r,:]ᵀ·rhs[r,:], the groups' rows as ragged_dot's (negative sizes as 0,
// rows past m cut), so a group with no rows is 0. One output row (i, kk) is
// accumulated at a time, in float64 (int64) and rounded (wrapped) once.
func raggedContractKernel(in *ir.Instr, l, r, sizes *backend.Buffer) *backend.Buffer {
	out := backend.New(in.Results[0].Type)
	m, k := int(l.Type().Shape[0].Size), int(l.Type().Shape[1].Size)
	g, n := int(sizes.Type().Shape[0].Size), int(r.Type().Shape[1].Size)
	if out.Type().DType.IsFloat() {
		contractGroups(out, l.Float64At, r.ReadFloat64s, out.WriteFloat64s, sizes, m, k, g, n)
	} else {
		contractGroups(out, l.Int64At, r.ReadInt64s, out.WriteInt64s, sizes, m, k, g, n)
	}
	return out
}

// contractGroups writes every output row, reading lhs by element and rhs by
// row (two rows of n held: the accumulator and the rhs row).
func contractGroups[T float64 | int64](out *backend.Buffer, lhs func(int) T, rhsRow, write func(int, []T),
	sizes *backend.Buffer, m, k, g, n int) {
	acc, w := make([]T, n), make([]T, n)
	end := int64(0)
	for i := 0; i < g; i++ {
		start := end
		end += max(sizes.Int64At(i), 0)
		lo, hi := int(min(start, int64(m))), int(min(end, int64(m)))
		for kk := 0; kk < k; kk++ {
			clear(acc)
			for row := lo; row < hi; row++ {
				a := lhs(row*k + kk)
				rhsRow(row*n, w)
				for j, b := range w {
					acc[j] += a * b
				}
			}
			write((i*k+kk)*n, acc)
		}
	}
}
