package ir

import (
	"strconv"
	"strings"
)

// Dim is one dimension of a shape: a static size, or a symbol standing for
// one size throughout a function (f32[B,1024]).
type Dim struct {
	Size int64  // meaningful when Sym == ""
	Sym  string // the symbol's name, or "" for a static dimension
}

// D returns a static dimension.
func D(n int64) Dim { return Dim{Size: n} }

// Symbolic reports whether d is a symbol.
func (d Dim) Symbolic() bool { return d.Sym != "" }

func (d Dim) String() string {
	if d.Sym != "" {
		return d.Sym
	}
	return strconv.FormatInt(d.Size, 10)
}

// Type is a tensor type: an element type and a shape. A rank-0 shape is a scalar.
// Layout is nil until layout assignment gives the value a physical layout.
type Type struct {
	DType  DType
	Shape  []Dim
	Layout *Layout
}

// Layout is a physical layout as XLA prints it: minor-to-major dimension order,
// then tiles over the minor physical dimensions ({1,0:T(8,128)(2,1)}).
type Layout struct {
	MinorToMajor []int
	Tiles        [][]int64
}

// Tensor returns the static type dt[dims...].
func Tensor(dt DType, dims ...int64) Type {
	s := make([]Dim, len(dims))
	for i, n := range dims {
		s[i] = Dim{Size: n}
	}
	return Type{DType: dt, Shape: s}
}

// Scalar returns the rank-0 type dt[].
func Scalar(dt DType) Type { return Type{DType: dt, Shape: []Dim{}} }

// Rank is the number of dimensions.
func (t Type) Rank() int { return len(t.Shape) }

// IsStatic reports whether every dimension has a known size.
func (t Type) IsStatic() bool {
	for _, d := range t.Shape {
		if d.Symbolic() {
			return false
		}
	}
	return true
}

// Dims returns the static sizes; a symbolic dimension is reported as -1.
func (t Type) Dims() []int64 {
	out := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		if d.Symbolic() {
			out[i] = -1
		} else {
			out[i] = d.Size
		}
	}
	return out
}

// NumElements returns the element count; ok is false if a dimension is symbolic
// or the count overflows int64.
func (t Type) NumElements() (n int64, ok bool) {
	n = 1
	for _, d := range t.Shape {
		if d.Symbolic() {
			return 0, false
		}
		if d.Size != 0 && n > (1<<62)/d.Size {
			return 0, false
		}
		n *= d.Size
	}
	return n, true
}

// WithShape returns t's dtype with another shape (and no layout).
func (t Type) WithShape(s []Dim) Type { return Type{DType: t.DType, Shape: s} }

// WithDType returns t's shape with another dtype (and no layout).
func (t Type) WithDType(dt DType) Type { return Type{DType: dt, Shape: t.Shape} }

// Equal reports whether t and u have the same dtype, shape and layout.
func (t Type) Equal(u Type) bool {
	return t.SameShape(u) && t.DType == u.DType && t.Layout.Equal(u.Layout)
}

// SameShape reports whether t and u have the same dimensions (dtypes may differ).
func (t Type) SameShape(u Type) bool {
	if len(t.Shape) != len(u.Shape) {
		return false
	}
	for i := range t.Shape {
		if t.Shape[i] != u.Shape[i] {
			return false
		}
	}
	return true
}

// String spells the type as .tir does: f32[64,1024], i1[], f32[B,16]{1,0:T(8,128)}.
func (t Type) String() string {
	var b strings.Builder
	b.WriteString(t.DType.String())
	b.WriteByte('[')
	for i, d := range t.Shape {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(d.String())
	}
	b.WriteByte(']')
	if t.Layout != nil {
		b.WriteString(t.Layout.String())
	}
	return b.String()
}

// Equal reports whether two layouts are the same; nil equals only nil.
func (l *Layout) Equal(m *Layout) bool {
	if l == nil || m == nil {
		return l == m
	}
	if len(l.MinorToMajor) != len(m.MinorToMajor) || len(l.Tiles) != len(m.Tiles) {
		return false
	}
	for i := range l.MinorToMajor {
		if l.MinorToMajor[i] != m.MinorToMajor[i] {
			return false
		}
	}
	for i := range l.Tiles {
		if len(l.Tiles[i]) != len(m.Tiles[i]) {
			return false
		}
		for j := range l.Tiles[i] {
			if l.Tiles[i][j] != m.Tiles[i][j] {
				return false
			}
		}
	}
	return true
}

func (l *Layout) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, d := range l.MinorToMajor {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(d))
	}
	if len(l.Tiles) > 0 {
		// XLA writes T once before the first tile: {1,0:T(8,128)(2,1)}.
		b.WriteString(":T")
		for _, tile := range l.Tiles {
			b.WriteByte('(')
			for i, n := range tile {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strconv.FormatInt(n, 10))
			}
			b.WriteByte(')')
		}
	}
	b.WriteByte('}')
	return b.String()
}

// BroadcastShapes is numpy's broadcasting rule for two shapes: right-aligned, a
// missing or size-1 dimension stretches to the other's size, and symbolic
// dimensions match only by name. ok is false when the shapes do not broadcast.
func BroadcastShapes(a, b []Dim) (out []Dim, ok bool) {
	n := max(len(a), len(b))
	out = make([]Dim, n)
	for i := 1; i <= n; i++ {
		da, db := D(1), D(1)
		if i <= len(a) {
			da = a[len(a)-i]
		}
		if i <= len(b) {
			db = b[len(b)-i]
		}
		switch {
		case da == db, db == D(1):
			out[n-i] = da
		case da == D(1):
			out[n-i] = db
		default:
			return nil, false
		}
	}
	return out, true
}

// MatMulDims is numpy matmul as dot_general, for operands of types a and b of
// rank at least 1 whose contracting sizes agree: a's last dimension contracts
// with b's second to last (its only one when b is 1-D). When both have rank at
// least 2 and b at least 3, the leading (batch) dimensions broadcast together
// and become batch dimensions; aShape and bShape are then the shapes to
// broadcast the operands to first (nil otherwise). ok is false when the batch
// dimensions do not broadcast.
func MatMulDims(a, b Type) (attr *DotAttr, aShape, bShape []Dim, ok bool) {
	ra, rb := a.Rank(), b.Rank()
	kb := 0
	if rb >= 2 {
		kb = rb - 2
	}
	attr = &DotAttr{LhsBatch: []int64{}, RhsBatch: []int64{}, LhsContract: []int64{int64(ra - 1)}, RhsContract: []int64{int64(kb)}}
	if ra < 2 || rb < 3 {
		return attr, nil, nil, true
	}
	batch, ok := BroadcastShapes(a.Shape[:ra-2], b.Shape[:rb-2])
	if !ok {
		return nil, nil, nil, false
	}
	nb := len(batch)
	aShape = append(append([]Dim{}, batch...), a.Shape[ra-2:]...)
	bShape = append(append([]Dim{}, batch...), b.Shape[rb-2:]...)
	attr.LhsBatch = make([]int64, nb)
	attr.RhsBatch = make([]int64, nb)
	for i := range nb {
		attr.LhsBatch[i], attr.RhsBatch[i] = int64(i), int64(i)
	}
	attr.LhsContract = []int64{int64(nb + 1)}
	attr.RhsContract = []int64{int64(nb)}
	return attr, aShape, bShape, true
}
