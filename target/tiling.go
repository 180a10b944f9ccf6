package target

import (
	"math/bits"

	"github.com/tpucc/tpucc/ir"
)

// TPU tiling, as XLA:TPU (libtpu 0.0.42.1) lays out parameters in row-major
// order, measured with the compile-only client for v4, v5e, v6e and TPU7x
// (identical on all four; docs/TARGETS.md has the table). Vector registers are
// 8 sublanes x 128 lanes of 32 bits; narrower dtypes pack 2 (16-bit) or 4
// (8-bit and pred) rows into one 32-bit word, which the second tile says.
//
//	rank >= 2, second-minor dimension r:
//	  32- and 64-bit  r=1: (1,128)  r=2: (2,128)  r<=4: (4,128)  else (8,128)
//	  16-bit          r<=2: (2,128)(2,1)   r<=4: (4,128)(2,1)   else (8,128)(2,1)
//	  8-bit and pred  r<=4: (4,128)(4,1)   r%32=0: (32,128)(4,1)   else (8,128)(4,1)
//	rank 1, n elements: (t) for 32/64-bit, (t)(128)(2,1) for 16-bit,
//	  (t)(128)(4,1) for 8-bit, t the smallest of 128 (256 for 16-bit, 512 for
//	  8-bit), 256, 512, 1024 that holds n, and 1024 beyond
//	rank 0: (128), (256) or (512): one minimal tile
//
// ../shared/reference/tpu.md says a second-minor dimension of 1-2 uses (2,128)
// for f32 and that pred takes 4 bytes; XLA does otherwise: f32[1,5] is
// {1,0:T(1,128)} and pred is stored like int8, one byte an element (a
// pred[1024,1024] parameter is 1048576 bytes). (32,128)(4,1) for 8-bit dtypes
// adds no padding over (8,128)(4,1): XLA picks it only when r is a multiple
// of 32. 64-bit dtypes, which TPUs emulate, keep the 32-bit tiles at 8 bytes
// an element.

// Tiles returns the tiling of a value of type ty in row-major order
// (passes.Target). A symbolic second-minor dimension gets the full (8,128)
// tile; the CPU tiles nothing.
func (t *Target) Tiles(ty ir.Type) [][]int64 {
	if t.Kind != KindTPU {
		return nil
	}
	bitsPer := ty.DType.Bits()
	pack := int64(1) // rows per 32-bit word
	if bitsPer < 32 {
		pack = int64(32 / bitsPer)
	}
	dims := ty.Dims()
	switch len(dims) {
	case 0:
		return [][]int64{{128 * pack}}
	case 1:
		tile := 128 * pack
		for tile < 1024 && (dims[0] < 0 || tile < dims[0]) {
			tile *= 2
		}
		if pack == 1 {
			return [][]int64{{tile}}
		}
		return [][]int64{{tile}, {128}, {pack, 1}}
	}
	r := dims[len(dims)-2]
	rows := int64(8)
	switch {
	case r < 0: // symbolic
	case pack == 4 && r > 0 && r%32 == 0:
		rows = 32
	case r <= 1 && pack == 1:
		rows = 1
	case r <= 2 && pack <= 2:
		rows = 2
	case r <= 4:
		rows = 4
	}
	if pack == 1 {
		return [][]int64{{rows, 128}}
	}
	return [][]int64{{rows, 128}, {pack, 1}}
}

// Layout returns ty's default layout on the target: row-major with Tiles, or
// nil where values are untiled (the CPU).
func (t *Target) Layout(ty ir.Type) *ir.Layout {
	tiles := t.Tiles(ty)
	if tiles == nil {
		return nil
	}
	m2m := make([]int, ty.Rank())
	for i := range m2m {
		m2m[i] = ty.Rank() - 1 - i
	}
	return &ir.Layout{MinorToMajor: m2m, Tiles: tiles}
}

// ElementBytes is the storage size of one element of dt (pred: one byte).
func (t *Target) ElementBytes(dt ir.DType) int64 { return int64(dt.Size()) }

// Bytes is the size of a value of type ty in device memory (passes.Target):
// in ty.Layout when set, else row-major with Tiles(ty), padded to whole tiles.
// -1 when ty is not static or the size overflows int64.
func (t *Target) Bytes(ty ir.Type) int64 {
	if !ty.IsStatic() {
		return -1
	}
	shape := ty.Dims() // physical order, major to minor
	tiles := t.Tiles(ty)
	if l := ty.Layout; l != nil {
		if len(l.MinorToMajor) != len(shape) {
			return -1
		}
		phys := make([]int64, len(shape))
		for i, d := range l.MinorToMajor {
			if d < 0 || d >= len(shape) {
				return -1
			}
			phys[len(shape)-1-i] = shape[d]
		}
		shape, tiles = phys, l.Tiles
	}
	n, ok := tiledElements(shape, tiles)
	if !ok {
		return -1
	}
	return mulOK(n, t.ElementBytes(ty.DType))
}

// LogicalBytes is ty's size without any padding: elements times element size.
// -1 when ty is not static or the size overflows.
func (t *Target) LogicalBytes(ty ir.Type) int64 {
	n, ok := ty.NumElements()
	if !ok {
		return -1
	}
	return mulOK(n, t.ElementBytes(ty.DType))
}

// tiledElements is the number of element slots a shape occupies under tiles,
// applied as XLA's tiled layouts apply them: each tile of rank k replaces the
// k minor dimensions d by ceil(d/tile) and appends the tile's dimensions, so
// later tiles subdivide earlier ones and padding comes from rounding up. A
// shape of lower rank than a tile counts as having leading 1s (a scalar
// occupies one whole tile).
func tiledElements(shape []int64, tiles [][]int64) (int64, bool) {
	cur := append([]int64(nil), shape...)
	for _, tile := range tiles {
		k := len(tile)
		for len(cur) < k {
			cur = append([]int64{1}, cur...)
		}
		m := len(cur)
		next := append([]int64(nil), cur[:m-k]...)
		for i, td := range tile {
			if td <= 0 {
				return 0, false
			}
			next = append(next, (cur[m-k+i]+td-1)/td)
		}
		cur = append(next, tile...)
	}
	n := int64(1)
	for _, d := range cur {
		n = mulOK(n, d)
		if n < 0 {
			return 0, false
		}
	}
	return n, true
}

// mulOK multiplies non-negative a and b; -1 if either is negative or the
// product overflows int64.
func mulOK(a, b int64) int64 {
	if a < 0 || b < 0 {
		return -1
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > 1<<63-1 {
		return -1
	}
	return int64(lo)
}

// addOK adds non-negative a and b; -1 if either is negative or the sum
// overflows.
func addOK(a, b int64) int64 {
	if a < 0 || b < 0 || a > 1<<63-1-b {
		return -1
	}
	return a + b
}
