package cpu

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// dot_general: both operands are first permuted into a canonical layout, lhs as
// [batch, m, k] and rhs as [batch, n, k] (m and n the free dimensions, k the
// contracting ones, each group flattened in the order the attribute and the
// operand give), so that every result element is one dot product of two
// contiguous rows. The result [batch, m, n] is already in dot_general's result
// order (batch, lhs free, rhs free).
//
// Floats accumulate in float64 and round once into the result dtype; products
// of f32, f16 and bf16 elements are exact in float64, so this is the f32
// accumulation the contract asks for, only more precise. Integers accumulate in
// int64 and wrap once into the result dtype, which equals wrapping at every step.

func dotKernel(in *ir.Instr, l, r *backend.Buffer) *backend.Buffer {
	a := in.Attr.(*ir.DotAttr)
	rt := in.Results[0].Type
	ld, rd := l.Type().Dims(), r.Type().Dims()
	lFree := freeDims(len(ld), a.LhsBatch, a.LhsContract)
	rFree := freeDims(len(rd), a.RhsBatch, a.RhsContract)
	nb, nm := product(ld, a.LhsBatch), product(ld, lFree)
	nn, nk := product(rd, rFree), product(ld, a.LhsContract)
	lc := permuted(l, concatInts(a.LhsBatch, lFree, a.LhsContract))
	rc := permuted(r, concatInts(a.RhsBatch, rFree, a.RhsContract))
	out := backend.New(rt)
	if rt.DType.IsFloat() {
		dotFloat(out, lc, rc, nb, nm, nn, nk)
	} else {
		dotInt(out, lc, rc, nb, nm, nn, nk)
	}
	return out
}

// dotBlock is how many rhs rows a dot reads into float64 (int64) scratch at
// a time: each lhs row is then read once per block, 1/dotBlock of the work.
const dotBlock = 64

// freeDims lists, in order, the dimensions of a rank-n operand that are
// neither batch nor contracting.
func freeDims(n int, batch, contract []int64) []int64 {
	used := make([]bool, n)
	for _, d := range batch {
		used[d] = true
	}
	for _, d := range contract {
		used[d] = true
	}
	var free []int64
	for d := 0; d < n; d++ {
		if !used[d] {
			free = append(free, int64(d))
		}
	}
	return free
}

func product(dims, which []int64) int {
	p := 1
	for _, d := range which {
		p *= int(dims[d])
	}
	return p
}

func concatInts(lists ...[]int64) []int64 {
	var out []int64
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// permuted returns x with its dimensions in perm's order, x itself when perm is
// the identity (kernels never write their operands, so sharing is safe).
func permuted(x *backend.Buffer, perm []int64) *backend.Buffer {
	for i, p := range perm {
		if p != int64(i) {
			return transpose(x, perm)
		}
	}
	return x
}

// dotFloat computes out[b,i,j] = Σ_k l[b,i,k]·r[b,j,k] in float64 and
// stores each row of out rounded into its dtype. It reads a block of rhs rows
// and one lhs row at a time into float64 scratch (products of f32 or
// narrower elements are exact in float64). The four partial sums make the
// order of additions fixed and independent of the platform and the block
// size; the float64(...) conversions forbid fusing a multiply and an add,
// which Go may otherwise do on some architectures.
func dotFloat(out, l, r *backend.Buffer, nb, nm, nn, nk int) {
	rblk, lrow, orow := make([]float64, dotBlock*nk), make([]float64, nk), make([]float64, dotBlock)
	for b := 0; b < nb; b++ {
		for j0 := 0; j0 < nn; j0 += dotBlock {
			jn := min(dotBlock, nn-j0)
			r.ReadFloat64s((b*nn+j0)*nk, rblk[:jn*nk])
			for i := 0; i < nm; i++ {
				l.ReadFloat64s((b*nm+i)*nk, lrow)
				for jj := range orow[:jn] {
					rrow := rblk[jj*nk : (jj+1)*nk]
					rrow = rrow[:len(lrow)]
					var s0, s1, s2, s3 float64
					k := 0
					for ; k+4 <= len(lrow); k += 4 {
						s0 += float64(lrow[k] * rrow[k])
						s1 += float64(lrow[k+1] * rrow[k+1])
						s2 += float64(lrow[k+2] * rrow[k+2])
						s3 += float64(lrow[k+3] * rrow[k+3])
					}
					for ; k < len(lrow); k++ {
						s0 += float64(lrow[k] * rrow[k])
					}
					orow[jj] = (s0 + s1) + (s2 + s3)
				}
				out.WriteFloat64s((b*nm+i)*nn+j0, orow[:jn])
			}
		}
	}
}

// dotInt is dotFloat for integers: int64 sums, wrapped once into the dtype
// when stored (the same result as wrapping at every step).
func dotInt(out, l, r *backend.Buffer, nb, nm, nn, nk int) {
	rblk, lrow, orow := make([]int64, dotBlock*nk), make([]int64, nk), make([]int64, dotBlock)
	for b := 0; b < nb; b++ {
		for j0 := 0; j0 < nn; j0 += dotBlock {
			jn := min(dotBlock, nn-j0)
			r.ReadInt64s((b*nn+j0)*nk, rblk[:jn*nk])
			for i := 0; i < nm; i++ {
				l.ReadInt64s((b*nm+i)*nk, lrow)
				for jj := range orow[:jn] {
					rrow := rblk[jj*nk : (jj+1)*nk]
					var s int64
					for k, v := range lrow {
						s += v * rrow[k]
					}
					orow[jj] = s
				}
				out.WriteInt64s((b*nm+i)*nn+j0, orow[:jn])
			}
		}
	}
}
