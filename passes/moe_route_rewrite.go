package passes

import (
	"github.com/tpucc/tpucc/ir"
)

// gatherWeights builds w[t,k] = dense[t, ids[t,k]] as a one-hot reduction:
// reduce_sum(one_hot(ids) * broadcast(dense), axes=[2]).
func gatherWeights(ids, dense *ir.Value, e int64) func(*ir.Builder) *ir.Value {
	return func(b *ir.Builder) *ir.Value {
		tk := ids.Type.Dims()
		t := ir.Tensor(dense.Type.DType, tk[0], tk[1], e)
		oh := b.Typed(ir.OpOneHot, &ir.DepthAttr{Depth: e}, &t, ids)
		bd := b.Typed(ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{0, 2}}, &t, dense)
		return b.Op1(ir.OpReduceSum, &ir.AxesAttr{Axes: []int64{2}}, b.Op1(ir.OpMul, nil, oh, bd))
	}
}

// rewriteMoE builds the grouped form of l before its root and replaces the
// root's uses. With N = T·K routed rows:
//
//	flat   = reshape ids                      i32[N]
//	order  = argsort flat                     rows sorted by expert, stable
//	xs     = take x, order / K                [N,H], the tokens in expert order
//	sizes  = reduce_sum one_hot(flat), [0]    i32[E], rows per expert
//	p_i    = ragged_dot xs, w_i, sizes        each projection, [N,F]
//	h      = the activation of the p_i        [N,F]
//	d      = ragged_dot h, w_down, sizes      [N,H]
//	back   = take d, argsort order            [N,H], rows in (token, k) order
//	y      = reduce_sum back·w over k         [T,H]
//
// The dense instructions are left for dce.
func rewriteMoE(f *ir.Func, l *moeLayer) {
	b := ir.NewBuilder(f)
	b.SetInsertBefore(l.root)
	tk := l.ids.Type.Dims()
	n := tk[0] * tk[1]
	i32 := func(d ...int64) ir.Type { return ir.Tensor(ir.I32, d...) }
	flatT := i32(n)
	flat := b.Typed(ir.OpReshape, nil, &flatT, l.ids)
	order := b.Op1(ir.OpArgsort, &ir.AxisAttr{Axis: 0}, flat)
	kc := b.Const(flatT, float64(tk[1]))
	xs := b.Op1(ir.OpTake, &ir.AxisAttr{Axis: 0}, l.x, b.Op1(ir.OpDiv, nil, order, kc))
	ohT := i32(n, l.e)
	sizes := b.Op1(ir.OpReduceSum, &ir.AxesAttr{Axes: []int64{0}},
		b.Typed(ir.OpOneHot, &ir.DepthAttr{Depth: l.e}, &ohT, flat))

	ragged := map[projection]*ir.Value{}
	grouped := func(lhs *ir.Value, p projection) *ir.Value {
		if r, ok := ragged[p]; ok && lhs == xs {
			return r
		}
		w := p.w
		if p.contract == 2 {
			w = b.Op1(ir.OpTranspose, &ir.PermAttr{Perm: []int64{0, 2, 1}}, w)
		}
		r := b.Op1(ir.OpRaggedDot, nil, lhs, w, sizes)
		if lhs == xs {
			ragged[p] = r
		}
		return r
	}
	h := cloneAct(b, l, l.act, func(v *ir.Value) *ir.Value { return grouped(xs, l.leaves[v]) }, map[*ir.Value]*ir.Value{})
	d := grouped(h, l.down)
	back := b.Op1(ir.OpTake, &ir.AxisAttr{Axis: 0}, d, b.Op1(ir.OpArgsort, &ir.AxisAttr{Axis: 0}, order))
	hd := l.down.w.Type.Dims()[3-l.down.contract] // [E,F,H] or [E,H,F]
	tkh := ir.Tensor(d.Type.DType, tk[0], tk[1], hd)
	back3 := b.Typed(ir.OpReshape, nil, &tkh, back)
	w := b.Typed(ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{0, 1}}, &tkh, l.weights(b))
	y := b.Op1(ir.OpReduceSum, &ir.AxesAttr{Axes: []int64{1}}, b.Op1(ir.OpMul, nil, back3, w))
	f.ReplaceUses(l.root.Result(), y)
}

// cloneAct rebuilds the activation expression v over the grouped rows [N,F]:
// projections become leaf(v), scalars are broadcast or splatted to the new
// shape, every other instruction is emitted again on the new operands.
func cloneAct(b *ir.Builder, l *moeLayer, v *ir.Value, leaf func(*ir.Value) *ir.Value, done map[*ir.Value]*ir.Value) *ir.Value {
	if r, ok := done[v]; ok {
		return r
	}
	var r *ir.Value
	switch {
	case l.leaves[v].w != nil:
		r = leaf(v)
	case v.Type.Rank() == 0:
		r = v
	case scalarLike(v):
		r = resplat(b, v, l)
	default:
		d := v.Def
		args := make([]*ir.Value, len(d.Args))
		for i, a := range d.Args {
			args[i] = cloneAct(b, l, a, leaf, done)
		}
		var hint []ir.Type
		if d.Op.Info().NeedsType {
			hint = []ir.Type{newShape(d.Result().Type, l)}
		}
		in, err := b.Emit(d.Op, d.Attr, hint, args...)
		if err != nil {
			panic("passes: moe-route: rebuilding " + d.Op.String() + ": " + err.Error())
		}
		r = in.Result()
	}
	done[v] = r
	return r
}

// newShape is t at the grouped activation's shape [N,F].
func newShape(t ir.Type, l *moeLayer) ir.Type {
	tk := l.ids.Type.Dims()
	f := l.act.Type.Dims()[indexOf(l.roles, 'F')]
	return ir.Tensor(t.DType, tk[0]*tk[1], f)
}

// resplat makes a scalar-like value (a broadcast of a scalar, a splat
// constant) again at the grouped shape.
func resplat(b *ir.Builder, v *ir.Value, l *moeLayer) *ir.Value {
	t := newShape(v.Type, l)
	d := v.Def
	if d.Op == ir.OpBroadcast {
		return b.Typed(ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, &t, d.Args[0])
	}
	return b.Typed(ir.OpConstant, &ir.ConstAttr{Value: d.Attr.(*ir.ConstAttr).Value}, &t)
}

func indexOf(s []byte, c byte) int {
	for i, x := range s {
		if x == c {
			return i
		}
	}
	return -1
}
