package llvm

import (
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	"github.com/tpucc/tpucc/ir"
)

// rngBitGenerator generates rng_bit_generator as a kernel over its
// counters, one counter per index of its range: counters are independent,
// so parts of the range hash apart, and the bits land where the reference
// executor's rngKernel (backend/cpu/rng.go, XLA:CPU's layout) puts them.
// Row 0 also writes the new state, which depends only on the old state and
// the counter count (both known here). An empty bits tensor has no rows
// and is left to the reference executor.
func (pl *planner) rngBitGenerator(in *ir.Instr, env map[*ir.Value]int) bool {
	state, bits := in.Args[0].Type, in.Results[1].Type
	words, _ := state.NumElements()
	n, ok := bits.NumElements()
	elem, okElem := copyType(bits.DType)
	if !ok || !okElem || n == 0 || state.DType != ir.U64 || !state.IsStatic() {
		return false
	}
	threeFry := in.Attr.(*ir.RngAttr).Algorithm == ir.RngThreeFry
	size := int64(bits.DType.Size())
	lay := rngLayout{dims: bits.Dims(), n: n, size: size, elem: elem}
	counters := lay.counters(threeFry)
	k, st := pl.newKernelStep(in, env)
	st.rows, st.work = counters, counters*rngCounterWork
	sp, bp, op := k.buf(0, types.I64), k.buf(1, elem), k.buf(2, types.I64)
	s0, s1 := k.load(types.I64, op, ci(0)), k.load(types.I64, op, ci(1))
	key := [2]value.Value{k.cur.NewTrunc(s0, types.I32), k.cur.NewTrunc(k.cur.NewLShr(s0, ci(32)), types.I32)}
	hiWord := s0 // a two-word philox state's counter high word is its key
	if words == 3 {
		hiWord = k.load(types.I64, op, ci(2))
	}
	k.loop(k.lo, k.hi, nil, func(h value.Value, _ []value.Value) []value.Value {
		lo := k.cur.NewAdd(s1, h)
		if threeFry {
			lay.storeThreeFry(k, bp, h, threeFry2x32(k, key, lo))
		} else {
			carry := k.cur.NewZExt(k.cur.NewICmp(enum.IPredULT, lo, s1), types.I64)
			x := philox4x32(k, key, [4]value.Value{k.lo32(lo), k.hi32(lo), k.lo32(k.cur.NewAdd(hiWord, carry)), k.hi32(k.cur.NewAdd(hiWord, carry))})
			lay.storePhilox(k, bp, h, x)
		}
		k.ifElse(k.cur.NewICmp(enum.IPredEQ, h, ci(0)), func() {
			k.loopN(words, func(i value.Value) { k.store(k.load(types.I64, op, i), sp, i) })
			next := k.cur.NewAdd(s1, ci(counters))
			k.store(next, sp, ci(1))
			if words == 3 && !threeFry {
				carry := k.cur.NewZExt(k.cur.NewICmp(enum.IPredULT, next, s1), types.I64)
				k.store(k.cur.NewAdd(hiWord, carry), sp, ci(2))
			}
		}, nil)
		return nil
	})
	k.finish()
	pl.addStep(in, env, st)
	return true
}

// rngCounterWork is a counter's work in elements, for splitting: Philox's
// 10 rounds and Threefry's 20 are each some 60 to 100 integer operations,
// for up to four elements.
const rngCounterWork = 32

// rngLayout is where the words of each counter go in the bits tensor.
type rngLayout struct {
	dims    []int64
	n, size int64
	elem    types.Type
}

// counters is how many counters fill the bits: Threefry gives one 64-bit
// element, or two narrower ones along the split axis, per counter; Philox
// four elements of up to 32 bits, or two of 64.
func (l rngLayout) counters(threeFry bool) int64 {
	switch {
	case threeFry && (l.size == 8 || len(l.dims) == 0):
		return l.n
	case threeFry:
		split := ir.RngSplitAxis(l.dims)
		return l.n / l.dims[split] * ((l.dims[split] + 1) / 2)
	case l.size == 8:
		return (l.n + 1) / 2
	}
	return (l.n + 3) / 4
}

// storeThreeFry stores counter h's two words x: one 64-bit element (low
// word first), else the elements 2j and 2j+1 of the split axis at counter
// h's (outer, j, k) in the shape with that axis halved (the second only
// when the axis has it); a scalar keeps the first word.
func (l rngLayout) storeThreeFry(k *kfn, bp, h value.Value, x [2]value.Value) {
	if l.size == 8 {
		k.store(k.join64(x[0], x[1]), bp, h)
		return
	}
	if len(l.dims) == 0 {
		k.store(k.trunc(x[0], l.elem), bp, h)
		return
	}
	split := ir.RngSplitAxis(l.dims)
	d := l.dims[split]
	inner := int64(1)
	for _, v := range l.dims[split+1:] {
		inner *= v
	}
	half := (d + 1) / 2
	outer, rest := k.cur.NewUDiv(h, ci(half*inner)), k.cur.NewURem(h, ci(half*inner))
	j, kk := k.cur.NewUDiv(rest, ci(inner)), k.cur.NewURem(rest, ci(inner))
	at := func(p int64) value.Value {
		row := k.cur.NewAdd(k.cur.NewMul(outer, ci(d)), k.cur.NewAdd(k.cur.NewMul(j, ci(2)), ci(p)))
		return k.mulAdd(row, inner, kk)
	}
	k.store(k.trunc(x[0], l.elem), bp, at(0))
	second := func() { k.store(k.trunc(x[1], l.elem), bp, at(1)) }
	if d%2 == 0 {
		second()
		return
	}
	k.ifElse(k.cur.NewICmp(enum.IPredSLT, k.cur.NewAdd(k.cur.NewMul(j, ci(2)), ci(1)), ci(d)), second, nil)
}

// storePhilox stores counter h's four words x as the elements from
// h·per on: four of up to 32 bits, or two 64-bit ones (low word first),
// the last counter's only as far as the tensor reaches.
func (l rngLayout) storePhilox(k *kfn, bp, h value.Value, x [4]value.Value) {
	vals := []value.Value{k.join64(x[0], x[1]), k.join64(x[2], x[3])}
	if l.size < 8 {
		vals = []value.Value{k.trunc(x[0], l.elem), k.trunc(x[1], l.elem), k.trunc(x[2], l.elem), k.trunc(x[3], l.elem)}
	}
	per := int64(len(vals))
	for p, v := range vals {
		i := k.mulAdd(h, per, ci(int64(p)))
		if l.n%per == 0 || p == 0 {
			k.store(v, bp, i)
			continue
		}
		k.ifElse(k.cur.NewICmp(enum.IPredSLT, i, ci(l.n)), func() { k.store(v, bp, i) }, nil)
	}
}

func (k *kfn) lo32(x value.Value) value.Value { return k.cur.NewTrunc(x, types.I32) }

func (k *kfn) hi32(x value.Value) value.Value {
	return k.cur.NewTrunc(k.cur.NewLShr(x, ci(32)), types.I32)
}

func (k *kfn) join64(lo, hi value.Value) value.Value {
	return k.cur.NewOr(k.cur.NewZExt(lo, types.I64), k.cur.NewShl(k.cur.NewZExt(hi, types.I64), ci(32)))
}

// trunc keeps the low bits of the 32-bit word x as elem (a no-op for i32).
func (k *kfn) trunc(x value.Value, elem types.Type) value.Value {
	if elem.Equal(types.I32) {
		return x
	}
	return k.cur.NewTrunc(x, elem)
}

// u32 is v as an i32 constant, written signed as LLVM reads it.
func u32(v uint32) value.Value { return constant.NewInt(types.I32, int64(int32(v))) }

var threeFryRotations = [8]int64{13, 15, 26, 6, 17, 29, 16, 24}

// threeFry2x32 is Threefry-2x32 with 20 rounds (Salmon et al., SC 2011) of
// the 64-bit counter ctr's low and high words, unrolled.
func threeFry2x32(k *kfn, key [2]value.Value, ctr value.Value) [2]value.Value {
	c := k.cur
	ks := [3]value.Value{key[0], key[1], c.NewXor(c.NewXor(u32(0x1BD11BDA), key[0]), key[1])}
	x := [2]value.Value{c.NewAdd(k.lo32(ctr), ks[0]), c.NewAdd(k.hi32(ctr), ks[1])}
	for g := range 5 {
		for r := range 4 {
			rot := threeFryRotations[4*(g%2)+r]
			x[0] = c.NewAdd(x[0], x[1])
			x[1] = c.NewOr(c.NewShl(x[1], constant.NewInt(types.I32, rot)), c.NewLShr(x[1], constant.NewInt(types.I32, 32-rot)))
			x[1] = c.NewXor(x[1], x[0])
		}
		x[0] = c.NewAdd(x[0], ks[(g+1)%3])
		x[1] = c.NewAdd(x[1], c.NewAdd(ks[(g+2)%3], u32(uint32(g+1))))
	}
	return x
}

// philox4x32 is Philox-4x32 with 10 rounds (Salmon et al., SC 2011),
// unrolled: each round's two 32×32→64-bit products in i64.
func philox4x32(k *kfn, key [2]value.Value, x [4]value.Value) [4]value.Value {
	c := k.cur
	for range 10 {
		p0 := c.NewMul(c.NewZExt(x[0], types.I64), ci(0xD2511F53))
		p1 := c.NewMul(c.NewZExt(x[2], types.I64), ci(0xCD9E8D57))
		x = [4]value.Value{
			c.NewXor(c.NewXor(k.hi32(p1), x[1]), key[0]), k.lo32(p1),
			c.NewXor(c.NewXor(k.hi32(p0), x[3]), key[1]), k.lo32(p0),
		}
		key = [2]value.Value{c.NewAdd(key[0], u32(0x9E3779B9)), c.NewAdd(key[1], u32(0xBB67AE85))}
	}
	return x
}
