package tensor

import (
	"github.com/tpucc/tpucc/frontend/trace"
	"github.com/tpucc/tpucc/ir"
)

// While runs body while cond is true and returns the last carried values:
//
//	c := init
//	for cond(c) { c = body(c) }
//	return c
//
// cond returns an i1[] tensor; body returns as many tensors as it is given,
// of the same types. Eagerly While is that Go loop. Traced (any carried
// value, or anything cond or body computes, is traced) it records one
// while op whose cond and do regions are traced once from the Go closures:
// the loop is not unrolled, and its trip count may depend on the data. A
// traced tensor from outside that a closure uses is carried into the loop
// unchanged (a loop-invariant operand), so closures may capture freely.
func While(cond func(c []*Tensor) *Tensor, body func(c []*Tensor) []*Tensor, init ...*Tensor) []*Tensor {
	check("while", init...)
	if tr := tracerOf(init); tr != nil {
		return whileTraced(tr, cond, body, init)
	}
	c := init
	for {
		ok := cond(c)
		checkCond(ok)
		if ok.tr != nil {
			return whileTraced(ok.tr, cond, body, init)
		}
		if !ok.Bools()[0] {
			return c
		}
		next := body(c)
		checkCarry("while", c, next)
		if tr := tracerOf(next); tr != nil {
			return whileTraced(tr, cond, body, init)
		}
		c = next
	}
}

// whileTraced records While's loop into tr; concrete initial values become
// constants of the trace.
func whileTraced(tr *trace.Tracer, cond func([]*Tensor) *Tensor, body func([]*Tensor) []*Tensor, init []*Tensor) []*Tensor {
	pos := trace.CallerPos(0)
	vals := valuesIn("while", tr, pos, init)
	outs, err := tr.Control(pos, ir.OpWhile, vals,
		func(ps []*ir.Value) ([]*ir.Value, error) {
			ok := cond(wrap(ps, tr))
			checkCond(ok)
			return valuesIn("while", tr, pos, []*Tensor{ok}), nil
		},
		func(ps []*ir.Value) ([]*ir.Value, error) {
			c := wrap(ps, tr)
			next := body(c[:len(init)])
			checkCarry("while", c[:len(init)], next)
			return valuesIn("while", tr, pos, next), nil
		})
	if err != nil {
		failErr("while", typesOf(init...), err)
	}
	return wrap(outs, tr)
}

// Switch runs branches[index] on operands and returns its results; an index
// outside [0, len(branches)) runs the last branch, as StableHLO's case does.
// index is an i32[] tensor. Every branch returns tensors of the same types.
// Eagerly only the chosen branch runs. Traced it records one case op with
// every branch traced as a region; outer traced tensors a branch uses become
// extra operands, as for While.
func Switch(index *Tensor, operands []*Tensor, branches ...func(ops []*Tensor) []*Tensor) []*Tensor {
	check("switch", index)
	check("switch", operands...)
	if len(branches) == 0 {
		fail("switch", nil, "needs at least one branch")
	}
	if t := index.Type(); t.DType != ir.I32 || t.Rank() != 0 {
		fail("switch", []ir.Type{t}, "the index must be i32[], got %s", t)
	}
	if tr := tracerOf(append([]*Tensor{index}, operands...)); tr != nil {
		return switchTraced(tr, index, operands, branches)
	}
	k := int(index.Int64s()[0])
	if k < 0 || k >= len(branches) {
		k = len(branches) - 1
	}
	out := branches[k](operands)
	check("switch", out...)
	if tr := tracerOf(out); tr != nil {
		return switchTraced(tr, index, operands, branches)
	}
	return out
}

func switchTraced(tr *trace.Tracer, index *Tensor, operands []*Tensor, branches []func([]*Tensor) []*Tensor) []*Tensor {
	pos := trace.CallerPos(0)
	vals := valuesIn("switch", tr, pos, append([]*Tensor{index}, operands...))
	var first []ir.Type
	bodies := make([]trace.Body, len(branches))
	for i, br := range branches {
		bodies[i] = func(ps []*ir.Value) ([]*ir.Value, error) {
			out := br(wrap(ps, tr)[:len(operands)])
			check("switch", out...)
			types := typesOf(out...)
			if i == 0 {
				first = types
			} else if !sameTypes(first, types) {
				fail("switch", types, "branch %d returns %s, but branch 0 returns %s", i, typeList(types), typeList(first))
			}
			return valuesIn("switch", tr, pos, out), nil
		}
	}
	outs, err := tr.Control(pos, ir.OpCase, vals, bodies...)
	if err != nil {
		failErr("switch", typesOf(operands...), err)
	}
	return wrap(outs, tr)
}

// checkCond checks what a While's cond returned.
func checkCond(ok *Tensor) {
	check("while", ok)
	if t := ok.Type(); t.DType != ir.I1 || t.Rank() != 0 {
		fail("while", []ir.Type{t}, "cond must return an i1[] tensor, got %s", t)
	}
}

// checkCarry checks that a loop body returned the carried types.
func checkCarry(op string, c, next []*Tensor) {
	check(op, next...)
	if ct, nt := typesOf(c...), typesOf(next...); !sameTypes(ct, nt) {
		fail(op, nt, "the body returns %s, but the carried values are %s", typeList(nt), typeList(ct))
	}
}

// typeList writes types as (f32[2], i32[]).
func typeList(ts []ir.Type) string {
	s := "("
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += t.String()
	}
	return s + ")"
}

func sameTypes(a, b []ir.Type) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// tracerOf returns the tracer of the first traced tensor of ts, or nil.
func tracerOf(ts []*Tensor) *trace.Tracer {
	for _, t := range ts {
		if t.tr != nil {
			return t.tr
		}
	}
	return nil
}

// valuesIn returns ts as values of tr: a concrete tensor becomes a constant
// of the block being traced; a tensor of another trace is refused.
func valuesIn(name string, tr *trace.Tracer, pos ir.Pos, ts []*Tensor) []*ir.Value {
	vals := make([]*ir.Value, len(ts))
	for i, t := range ts {
		switch {
		case t.tr == tr:
			vals[i] = t.v
		case t.tr != nil:
			fail(name, typesOf(ts...), "operands come from two different traces (@%s and @%s)", tr.Name(), t.tr.Name())
		default:
			vals[i] = capture(name, tr, pos, t)
		}
	}
	return vals
}

func wrap(vs []*ir.Value, tr *trace.Tracer) []*Tensor {
	ts := make([]*Tensor, len(vs))
	for i, v := range vs {
		ts[i] = &Tensor{v: v, tr: tr}
	}
	return ts
}
