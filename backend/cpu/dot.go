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
	d := dotLayout(in)
	lc := permuted(l, d.lperm)
	rc := permuted(r, d.rperm)
	out := backend.New(in.Results[0].Type)
	switch dt := out.Type().DType; {
	case dt.IsComplex():
		dotComplex(out, lc, rc, d.nb, d.nm, d.nn, d.nk)
	case dt.IsFloatValued():
		dotFloat(out, lc, rc, d.nb, d.nm, d.nn, d.nk)
	default:
		dotInt(out, lc, rc, d.nb, d.nm, d.nn, d.nk)
	}
	return out
}

// dotDims is a dot_general's canonical layout: the permutations of the
// operands into [batch, m, k] and [batch, n, k] and the four sizes.
type dotDims struct {
	lperm, rperm   []int64
	nb, nm, nn, nk int
}

func dotLayout(in *ir.Instr) dotDims {
	a := in.Attr.(*ir.DotAttr)
	ld, rd := in.Args[0].Type.Dims(), in.Args[1].Type.Dims()
	lFree := freeDims(len(ld), a.LhsBatch, a.LhsContract)
	rFree := freeDims(len(rd), a.RhsBatch, a.RhsContract)
	return dotDims{
		lperm: concatInts(a.LhsBatch, lFree, a.LhsContract),
		rperm: concatInts(a.RhsBatch, rFree, a.RhsContract),
		nb:    product(ld, a.LhsBatch), nm: product(ld, lFree),
		nn: product(rd, rFree), nk: product(ld, a.LhsContract),
	}
}

// dotBlock is how many rhs rows a dot reads into float64 (int64) scratch at
// a time: each lhs row is then read once per block, 1/dotBlock of the work.
const dotBlock = 64

// dotChunk is the most elements of the contraction a dot reads into scratch
// at a time when a block of whole rhs rows would take more than
// dotBlock*dotChunk words: a [1,K]x[K,1] product then needs a few hundred
// KiB of scratch whatever K is, not 64·K words (issue 29: 64 GiB for
// K=2^27). A multiple of 4, so that the four partial sums see the same
// elements as without chunks.
const dotChunk = 4096

// dotScratch is the words of scratch dotFloat and dotInt use: the rhs
// block, one lhs row (chunk), and the outputs and partial sums of a block.
func dotScratch(nm, nn, nk int) int64 {
	jb, kc, _ := dotPlan(nm, nn, nk)
	return int64(jb)*int64(kc) + int64(kc) + 5*dotBlock
}

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

// permuted returns x with its dimensions in perm's order: x itself (with
// the permuted type) when perm moves only dimensions of size 1, which keeps
// the elements in place (kernels never write their operands, so sharing is
// safe), else a transposed copy.
func permuted(x *backend.Buffer, perm []int64) *backend.Buffer {
	if !movesData(x.Type().Dims(), perm) {
		shape := make([]ir.Dim, len(perm))
		for i, p := range perm {
			shape[i] = x.Type().Shape[p]
		}
		return x.WithType(ir.Type{DType: x.Type().DType, Shape: shape})
	}
	return transpose(x, perm)
}

// movesData reports whether permuting dims by perm changes the order of
// the elements: whether the dimensions larger than 1 change order.
func movesData(dims, perm []int64) bool {
	last := int64(-1)
	for _, p := range perm {
		if dims[p] == 1 {
			continue
		}
		if p < last {
			return true
		}
		last = p
	}
	return false
}

// dotFloat computes out[b,i,j] = Σ_k l[b,i,k]·r[b,j,k] in float64 and
// stores each row of out rounded into its dtype. It reads a block of rhs rows
// and one lhs row at a time into float64 scratch (products of f32 or
// narrower elements are exact in float64), whole rows when a block of them
// fits dotBlock*dotChunk words, else dotChunk elements of the contraction
// at a time. The four partial sums make the order of additions fixed and
// independent of the platform, the block and the chunk; the float64(...)
// conversions forbid fusing a multiply and an add, which Go may otherwise
// do on some architectures.
func dotFloat(out, l, r *backend.Buffer, nb, nm, nn, nk int) {
	jb, kc, whole := dotPlan(nm, nn, nk)
	rblk, lrow := make([]float64, jb*kc), make([]float64, kc)
	orow, part := make([]float64, dotBlock), make([]float64, 4*dotBlock)
	for b := 0; b < nb; b++ {
		for j0 := 0; j0 < nn; j0 += dotBlock {
			jn := min(dotBlock, nn-j0)
			if whole {
				r.ReadFloat64s((b*nn+j0)*nk, rblk[:jn*nk])
			}
			for i := 0; i < nm; i++ {
				clear(part)
				for k0 := 0; k0 < nk; k0 += kc {
					kn := min(kc, nk-k0)
					l.ReadFloat64s((b*nm+i)*nk+k0, lrow[:kn])
					if !whole {
						for jj := range jn {
							r.ReadFloat64s((b*nn+j0+jj)*nk+k0, rblk[jj*kn:(jj+1)*kn])
						}
					}
					for jj := range jn {
						dotPartial(part[4*jj:4*jj+4], lrow[:kn], rblk[jj*kn:(jj+1)*kn])
					}
				}
				for jj := range orow[:jn] {
					p := part[4*jj : 4*jj+4]
					orow[jj] = (p[0] + p[1]) + (p[2] + p[3])
				}
				out.WriteFloat64s((b*nm+i)*nn+j0, orow[:jn])
			}
		}
	}
}

// dotPlan is the rhs rows of a block, the contraction elements read at a
// time, and whether that is all of them (the block is then read once for
// all lhs rows). With one lhs row, whole rows would save nothing.
func dotPlan(nm, nn, nk int) (jb, kc int, whole bool) {
	jb = min(dotBlock, nn)
	if nk <= dotChunk || nm > 1 && jb*nk <= dotBlock*dotChunk {
		return jb, nk, true
	}
	return jb, dotChunk, false
}

// dotPartial adds the products of lrow and rrow into the four partial sums
// p, element k into p[k%4] (the elements past the last multiple of 4, which
// only the last chunk has, into p[0]).
func dotPartial(p, lrow, rrow []float64) {
	rrow = rrow[:len(lrow)]
	s0, s1, s2, s3 := p[0], p[1], p[2], p[3]
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
	p[0], p[1], p[2], p[3] = s0, s1, s2, s3
}

// dotInt is dotFloat for integers: int64 sums, wrapped once into the dtype
// when stored (the same result as wrapping at every step).
func dotInt(out, l, r *backend.Buffer, nb, nm, nn, nk int) {
	jb, kc, whole := dotPlan(nm, nn, nk)
	rblk, lrow := make([]int64, jb*kc), make([]int64, kc)
	orow := make([]int64, dotBlock)
	for b := 0; b < nb; b++ {
		for j0 := 0; j0 < nn; j0 += dotBlock {
			jn := min(dotBlock, nn-j0)
			if whole {
				r.ReadInt64s((b*nn+j0)*nk, rblk[:jn*nk])
			}
			for i := 0; i < nm; i++ {
				clear(orow)
				for k0 := 0; k0 < nk; k0 += kc {
					kn := min(kc, nk-k0)
					l.ReadInt64s((b*nm+i)*nk+k0, lrow[:kn])
					if !whole {
						for jj := range jn {
							r.ReadInt64s((b*nn+j0+jj)*nk+k0, rblk[jj*kn:(jj+1)*kn])
						}
					}
					for jj := range jn {
						rrow := rblk[jj*kn : (jj+1)*kn]
						s := orow[jj]
						for k, v := range lrow[:kn] {
							s += v * rrow[k]
						}
						orow[jj] = s
					}
				}
				out.WriteInt64s((b*nm+i)*nn+j0, orow[:jn])
			}
		}
	}
}

// dotComplex computes out[b,i,j] = Σ_k l[b,i,k]·r[b,j,k] (no conjugation, as
// StableHLO's dot_general) in complex128, in order of k, rounding once into
// the result dtype. It reads one lhs row and one rhs row, a dotChunk of the
// contraction at a time: complex products are rare enough here that the
// blocking of dotFloat is not worth its scratch.
func dotComplex(out, l, r *backend.Buffer, nb, nm, nn, nk int) {
	kc := min(nk, dotChunk)
	lrow, rrow := make([]complex128, kc), make([]complex128, kc)
	for b := range nb {
		for i := range nm {
			for j := range nn {
				var s complex128
				for k0 := 0; k0 < nk; k0 += kc {
					kn := min(kc, nk-k0)
					l.ReadComplex128s((b*nm+i)*nk+k0, lrow[:kn])
					r.ReadComplex128s((b*nn+j)*nk+k0, rrow[:kn])
					for k, v := range lrow[:kn] {
						s += v * rrow[k]
					}
				}
				out.SetComplex128((b*nm+i)*nn+j, s)
			}
		}
	}
}
