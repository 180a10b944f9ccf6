package train

import (
	"fmt"
	"math"

	"github.com/tpucc/tpucc/autodiff"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
)

// Step builds the training step of loss's entry, whose first nParams parameters are the
// trained f32 parameters, whose other parameters are the batch, and whose only result
// is the f32 scalar loss. The returned module's only function is
//
//	@step(<params>, <opt state>, %step: i32[], <batch>) -> (f32[], <new params>, <new opt state>)
//
// The state is opt.StateNames() per parameter, parameter by parameter, each of its
// parameter's type (zeros before the first step). %step counts the steps already
// taken: 0 for the first. The loss returned is the one before the update.
//
// Step rewrites loss in place before it differentiates it: the passes up to moe-route
// (route) put dense mixture-of-experts layers in their grouped ragged_dot form, so the
// backward pass is grouped too.
func Step(loss *ir.Module, nParams int, opt Optimizer) (*ir.Module, error) {
	return StepWith(loss, nParams, opt, autodiff.Options{})
}

// StepWith is Step with the loss differentiated under ad (autodiff.Options.Remat: the
// reverse of a layer loop recomputes each layer's forward instead of reading the
// residuals the forward loop saved).
func StepWith(loss *ir.Module, nParams int, opt Optimizer, ad autodiff.Options) (*ir.Module, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
	f := loss.Entry()
	if f == nil {
		return nil, ir.Errorf(ir.Pos{File: loss.File}, "the program has no loss function")
	}
	if err := checkLoss(f, nParams); err != nil {
		return nil, err
	}
	if err := route(loss); err != nil {
		return nil, err
	}
	m, err := autodiff.ModuleOfWith(f, ad)
	if err != nil {
		return nil, err
	}
	v := m.Funcs[0]
	scatterIntoSums(v)
	ret := v.Body.Terminator()
	lossVal, grads := ret.Args[0], append([]*ir.Value(nil), ret.Args[1:1+nParams]...)
	params := append([]*ir.Value(nil), v.Params[:nParams]...)
	batch := append([]*ir.Value(nil), v.Params[nParams:len(f.Params)]...)
	ct := v.Params[len(f.Params)]

	var state []*ir.Value
	for _, p := range params {
		for _, s := range opt.StateNames() {
			x := v.NewValue(p.Type)
			x.Name, x.Pos = p.Name+"_"+s, p.Pos
			state = append(state, x)
		}
	}
	count := v.NewValue(ir.Scalar(ir.I32))
	count.Name, count.Pos = "step", f.Pos
	all := append(append(append(append([]*ir.Value(nil), params...), state...), count), batch...)
	for i, p := range all {
		p.Index = i
	}
	v.Params, v.Body.Params = all, all

	b := ir.NewBuilder(v)
	b.SetInsertBefore(v.Body.Instrs[0])
	v.ReplaceUses(ct, b.Const(ct.Type, 1))
	b.SetInsertBefore(ret)
	e := &emitter{b: b}
	newParams, newState := opt.update(e, params, grads, state, count)

	ret.Args = append(append([]*ir.Value{lossVal}, newParams...), newState...)
	v.Results = []ir.Type{lossVal.Type}
	for _, x := range ret.Args[1:] {
		v.Results = append(v.Results, x.Type)
	}
	v.Name = "step"
	if err := ir.Verify(m); err != nil {
		panic(fmt.Sprintf("train: the step does not verify: %v", err))
	}
	return m, nil
}

// scatterIntoSums rewrites each add(y, scatter_add(0, idx, upd)) of f's
// body, the scatter's only use, as scatter_add(y, idx, upd): a tied
// embedding's gradient is the lm-head product's plus the tokens' rows
// scattered into a zero table, and adding the rows into the product's
// gradient (which a backend can do in its storage) reads and writes a
// thousand rows where the sum read two [V, D] tables and the scatter wrote
// one. Rows hit once get the same bits either way; a row that several
// tokens hit adds them in another order (f32 rounding), and an untouched
// -0 stays -0 where +0 + -0 gave +0.
func scatterIntoSums(f *ir.Func) {
	uses := map[*ir.Value]int{}
	for _, in := range f.Body.Instrs {
		for _, a := range in.Args {
			uses[a]++
		}
	}
	for _, in := range f.Body.Instrs {
		if in.Op != ir.OpAdd || len(in.Args) != 2 {
			continue
		}
		for i, s := range in.Args {
			y := in.Args[1-i]
			d := s.Def
			if d == nil || d.Op != ir.OpScatterAdd || uses[s] != 1 || !zeroConst(d.Args[0]) ||
				!y.Type.SameShape(in.Results[0].Type) || y.Type.DType != in.Results[0].Type.DType {
				continue
			}
			in.Op, in.Attr = ir.OpScatterAdd, d.Attr
			in.Args = []*ir.Value{y, d.Args[1], d.Args[2]}
			break // the old scatter and its zeros are left to dce
		}
	}
}

// zeroConst reports whether v is a constant splat of zero.
func zeroConst(v *ir.Value) bool {
	if v.Def == nil || v.Def.Op != ir.OpConstant {
		return false
	}
	c, ok := v.Def.Attr.(*ir.ConstAttr)
	return ok && c.Value != nil && c.Value.Complex == nil && c.Value.Len() == 1 && c.Value.Float(0) == 0
}

// routing is Default's pipeline up to moe-route, then dce: what moe-route needs before
// it (one spelling of each computation, contractions as dot_general) and the removal of
// the dense layers it replaced. fold-constants is left to the compile that follows (it
// needs the backend's evaluator); the MoE layers of every family match without it.
var routing = []string{"canonicalize", "cse", "canonicalize", "contract", "moe-route", "dce"}

// route runs the routing passes on m in place. Differentiating the dense form that the
// models write would make the backward pass compute every expert on every token (E/k
// times the grouped work); after moe-route the forward is ragged_dot and its VJP is
// ragged_dot and ragged_contract, so the backward pass is grouped as the forward is.
func route(m *ir.Module) error {
	var pipeline []passes.Pass
	for _, name := range routing {
		p, ok := passes.Lookup(name)
		if !ok {
			panic("train: unknown pass " + name)
		}
		pipeline = append(pipeline, p)
	}
	return passes.Run(m, pipeline, passes.Options{})
}

// checkLoss refuses a loss function the step cannot train.
func checkLoss(f *ir.Func, nParams int) error {
	if len(f.Results) != 1 || !f.Results[0].DType.IsFloat() || f.Results[0].Rank() != 0 {
		return ir.Errorf(f.Pos, "@%s returns %s; a training step needs one float scalar, the loss", f.Name, typesString(f.Results))
	}
	if nParams < 1 || nParams > len(f.Params) {
		return ir.Errorf(f.Pos, "@%s has %d parameters; cannot train the first %d", f.Name, len(f.Params), nParams)
	}
	for _, p := range f.Params[:nParams] {
		if p.Type.DType != ir.F32 {
			return ir.Errorf(p.Pos, "parameter %%%s is %s; the step trains f32 parameters", p.Name, p.Type)
		}
	}
	return nil
}

func typesString(ts []ir.Type) string {
	s := "("
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += t.String()
	}
	return s + ")"
}

// update emits the optimizer's step and returns the new parameters and state.
func (o Optimizer) update(e *emitter, params, grads, state []*ir.Value, count *ir.Value) ([]*ir.Value, []*ir.Value) {
	if o.ClipNorm > 0 {
		grads = clip(e, grads, o.ClipNorm)
	}
	lr := o.rate(e, count)
	var newParams, newState []*ir.Value
	k := len(o.StateNames())
	for i, p := range params {
		var np *ir.Value
		var ns []*ir.Value
		if o.Kind == AdamW {
			np, ns = o.adamw(e, p, grads[i], state[k*i], state[k*i+1], lr, count)
		} else {
			np, ns = o.sgd(e, p, grads[i], state[k*i:k*i+k], lr, count)
		}
		newParams, newState = append(newParams, np), append(newState, ns...)
	}
	return newParams, newState
}

// sgd is torch.optim.SGD (dampening 0): the weight decay is added to the gradient; the
// momentum buffer starts as the first gradient (buf = momentum·0 + g: the same with a
// zero initial state).
func (o Optimizer) sgd(e *emitter, p, g *ir.Value, st []*ir.Value, lr, _ *ir.Value) (*ir.Value, []*ir.Value) {
	if o.WeightDecay != 0 {
		g = e.add(g, e.scale(p, o.WeightDecay))
	}
	var ns []*ir.Value
	if o.Momentum != 0 {
		buf := e.add(e.scale(st[0], o.Momentum), g)
		ns = append(ns, buf)
		if o.Nesterov {
			g = e.add(g, e.scale(buf, o.Momentum))
		} else {
			g = buf
		}
	}
	return e.sub(p, e.mul(e.splat(lr, p.Type), g)), ns
}

// adamw is torch.optim.AdamW (amsgrad off): the decoupled decay p·(1 - lr·wd) first,
// then the moments, then p - lr/(1-β1ᵗ) · m / (√v/√(1-β2ᵗ) + eps) with t = step+1.
func (o Optimizer) adamw(e *emitter, p, g, m, v, lr, count *ir.Value) (*ir.Value, []*ir.Value) {
	if o.WeightDecay != 0 {
		decay := e.sub(e.scalar(1), e.mul(lr, e.scalar(o.WeightDecay)))
		p = e.mul(p, e.splat(decay, p.Type))
	}
	m = e.add(e.scale(m, o.Beta1), e.scale(g, 1-o.Beta1))
	v = e.add(e.scale(v, o.Beta2), e.scale(e.mul(g, g), 1-o.Beta2))
	t := e.add(e.toF32(count), e.scalar(1))
	bc1 := e.sub(e.scalar(1), e.b.Op1(ir.OpPow, nil, e.scalar(o.Beta1), t))
	bc2 := e.sub(e.scalar(1), e.b.Op1(ir.OpPow, nil, e.scalar(o.Beta2), t))
	stepSize := e.div(lr, bc1)
	denom := e.add(e.div(e.b.Op1(ir.OpSqrt, nil, v), e.splat(e.b.Op1(ir.OpSqrt, nil, bc2), v.Type)), e.splat(e.scalar(o.Eps), v.Type))
	p = e.sub(p, e.mul(e.splat(stepSize, p.Type), e.div(m, denom)))
	return p, []*ir.Value{m, v}
}

// clip is torch.nn.utils.clip_grad_norm_ (norm 2): every gradient is scaled by
// min(1, max_norm/(‖g‖ + 1e-6)), ‖g‖ the norm of all gradients together.
func clip(e *emitter, grads []*ir.Value, maxNorm float64) []*ir.Value {
	var sum *ir.Value
	for _, g := range grads {
		axes := make([]int64, g.Type.Rank())
		for i := range axes {
			axes[i] = int64(i)
		}
		s := e.b.Op1(ir.OpReduceSum, &ir.AxesAttr{Axes: axes}, e.mul(g, g))
		if sum == nil {
			sum = s
		} else {
			sum = e.add(sum, s)
		}
	}
	norm := e.b.Op1(ir.OpSqrt, nil, sum)
	coef := e.div(e.scalar(maxNorm), e.add(norm, e.scalar(1e-6)))
	coef = e.b.Op1(ir.OpMin, nil, coef, e.scalar(1))
	out := make([]*ir.Value, len(grads))
	for i, g := range grads {
		out[i] = e.mul(g, e.splat(coef, g.Type))
	}
	return out
}

// rate is the learning rate of step count as an f32 scalar.
func (o Optimizer) rate(e *emitter, count *ir.Value) *ir.Value {
	s := o.Schedule
	if s.Warmup == 0 && s.Total == 0 {
		return e.scalar(o.LR)
	}
	t := e.toF32(count)
	warm := e.div(t, e.scalar(math.Max(1, float64(s.Warmup))))
	progress := e.div(e.sub(t, e.scalar(float64(s.Warmup))), e.scalar(math.Max(1, float64(s.Total-s.Warmup))))
	cos := e.b.Op1(ir.OpCos, nil, e.mul(progress, e.scalar(math.Pi)))
	decay := e.b.Op1(ir.OpMax, nil, e.scalar(0), e.mul(e.scalar(0.5), e.add(e.scalar(1), cos)))
	inWarmup := e.b.Op1(ir.OpCompare, &ir.CompareAttr{Dir: ir.CmpLT}, t, e.scalar(float64(s.Warmup)))
	return e.mul(e.scalar(o.LR), e.b.Op1(ir.OpSelect, nil, inWarmup, warm, decay))
}

// emitter builds f32 arithmetic, broadcasting scalars where asked.
type emitter struct{ b *ir.Builder }

func (e *emitter) scalar(x float64) *ir.Value   { return e.b.Const(ir.Scalar(ir.F32), x) }
func (e *emitter) add(x, y *ir.Value) *ir.Value { return e.b.Op1(ir.OpAdd, nil, x, y) }
func (e *emitter) sub(x, y *ir.Value) *ir.Value { return e.b.Op1(ir.OpSub, nil, x, y) }
func (e *emitter) mul(x, y *ir.Value) *ir.Value { return e.b.Op1(ir.OpMul, nil, x, y) }
func (e *emitter) div(x, y *ir.Value) *ir.Value { return e.b.Op1(ir.OpDiv, nil, x, y) }

// scale multiplies x by the constant c.
func (e *emitter) scale(x *ir.Value, c float64) *ir.Value {
	return e.mul(x, e.b.Const(x.Type, c))
}

// splat broadcasts the scalar s to t.
func (e *emitter) splat(s *ir.Value, t ir.Type) *ir.Value {
	if t.Rank() == 0 {
		return s
	}
	return e.b.Typed(ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, &t, s)
}

func (e *emitter) toF32(x *ir.Value) *ir.Value {
	t := ir.Scalar(ir.F32)
	return e.b.Typed(ir.OpConvert, nil, &t, x)
}
