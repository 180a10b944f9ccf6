package autodiff

import (
	"math"

	"github.com/tpucc/tpucc/ir"
)

// emitter builds the backward instructions. Its operands are valid by construction
// (they come from verified forward instructions), so a type error panics in ir.Builder.
type emitter struct{ b *ir.Builder }

func (e *emitter) add(x, y *ir.Value) *ir.Value { return e.b.Op1(ir.OpAdd, nil, x, y) }
func (e *emitter) sub(x, y *ir.Value) *ir.Value { return e.b.Op1(ir.OpSub, nil, x, y) }
func (e *emitter) mul(x, y *ir.Value) *ir.Value { return e.b.Op1(ir.OpMul, nil, x, y) }
func (e *emitter) div(x, y *ir.Value) *ir.Value { return e.b.Op1(ir.OpDiv, nil, x, y) }
func (e *emitter) neg(x *ir.Value) *ir.Value    { return e.b.Op1(ir.OpNeg, nil, x) }
func (e *emitter) un(op ir.Op, x *ir.Value) *ir.Value {
	return e.b.Op1(op, nil, x)
}

// like is a constant of x's type, every element c.
func (e *emitter) like(x *ir.Value, c float64) *ir.Value { return e.b.Const(x.Type, c) }

// scale is x*c.
func (e *emitter) scale(x *ir.Value, c float64) *ir.Value { return e.mul(x, e.like(x, c)) }

func (e *emitter) cmp(dir ir.CmpDir, x, y *ir.Value) *ir.Value {
	return e.b.Op1(ir.OpCompare, &ir.CompareAttr{Dir: dir}, x, y)
}

func (e *emitter) sel(p, x, y *ir.Value) *ir.Value { return e.b.Op1(ir.OpSelect, nil, p, x, y) }

// where is x where p, else 0.
func (e *emitter) where(p, x *ir.Value) *ir.Value { return e.sel(p, x, e.like(x, 0)) }

// indicator is 1 where p, else 0, of type t.
func (e *emitter) indicator(p *ir.Value, t ir.Type) *ir.Value {
	t = t.WithShape(p.Type.Shape)
	return e.b.Typed(ir.OpConvert, nil, &t, p)
}

func (e *emitter) convert(x *ir.Value, dt ir.DType) *ir.Value {
	t := x.Type.WithDType(dt)
	return e.b.Typed(ir.OpConvert, nil, &t, x)
}

// convertTo is x in dtype dt, x itself when it is already.
func (e *emitter) convertTo(x *ir.Value, dt ir.DType) *ir.Value {
	if x.Type.DType == dt {
		return x
	}
	return e.convert(x, dt)
}

func (e *emitter) reshape(x *ir.Value, t ir.Type) *ir.Value {
	t = t.WithDType(x.Type.DType)
	if x.Type.SameShape(t) {
		return x
	}
	return e.b.Typed(ir.OpReshape, nil, &t, x)
}

func (e *emitter) transpose(x *ir.Value, perm []int64) *ir.Value {
	identity := true
	for i, p := range perm {
		identity = identity && p == int64(i)
	}
	if identity {
		return x
	}
	return e.b.Op1(ir.OpTranspose, &ir.PermAttr{Perm: perm}, x)
}

func (e *emitter) sum(x *ir.Value, axes []int64, keep bool) *ir.Value {
	if len(axes) == 0 {
		return x
	}
	return e.b.Op1(ir.OpReduceSum, &ir.AxesAttr{Axes: axes, KeepDims: keep}, x)
}

// broadcast maps x's dim i to dim dims[i] of t.
func (e *emitter) broadcast(x *ir.Value, t ir.Type, dims []int64) *ir.Value {
	t = t.WithDType(x.Type.DType)
	if x.Type.SameShape(t) {
		return x
	}
	return e.b.Typed(ir.OpBroadcast, &ir.DimsAttr{Dims: dims}, &t, x)
}

// keepBack broadcasts a keepdims reduction of x's shape back to x's shape.
func (e *emitter) keepBack(r *ir.Value, t ir.Type) *ir.Value {
	return e.broadcast(r, t, iotaDims(t.Rank()))
}

// sumAlong is the sum of x along axis, broadcast back to x's shape.
func (e *emitter) sumAlong(x *ir.Value, axis int64) *ir.Value {
	return e.keepBack(e.sum(x, []int64{axis}, true), x.Type)
}

// unbroadcast sums x (of a broadcast's result type) back to the operand type t.
func (e *emitter) unbroadcast(x *ir.Value, t ir.Type, dims []int64) *ir.Value {
	rank := x.Type.Rank()
	mapped := make([]int, rank) // result dim -> operand dim + 1
	for i, d := range dims {
		mapped[d] = i + 1
	}
	var axes []int64
	var kept []int64 // operand dims kept, in result order
	for d := 0; d < rank; d++ {
		switch i := mapped[d] - 1; {
		case i < 0:
			axes = append(axes, int64(d))
		case t.Shape[i].Size != x.Type.Shape[d].Size:
			axes = append(axes, int64(d))
		default:
			kept = append(kept, int64(i))
		}
	}
	s := e.sum(x, axes, false)
	perm := make([]int64, len(kept)) // into the operand's order
	order := append([]int64{}, kept...)
	sortInts(order)
	for j, o := range order {
		for k, kd := range kept {
			if kd == o {
				perm[j] = int64(k)
			}
		}
	}
	return e.reshape(e.transpose(s, perm), t)
}

func iotaDims(n int) []int64 {
	d := make([]int64, n)
	for i := range d {
		d[i] = int64(i)
	}
	return d
}

func sortInts(xs []int64) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

func without(n int, drop []int64) []int64 {
	var out []int64
	for i := 0; i < n; i++ {
		found := false
		for _, d := range drop {
			found = found || d == int64(i)
		}
		if !found {
			out = append(out, int64(i))
		}
	}
	return out
}

var invSqrtPi2 = 2 / math.Sqrt(math.Pi)
