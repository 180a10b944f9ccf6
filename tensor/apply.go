package tensor

import (
	"math"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/trace"
	"github.com/tpucc/tpucc/ir"
)

// apply is the one path every operation takes. It checks the operands with
// ir.Infer (the type rules of .tir), then records op into the trace of a
// traced operand, or runs it at once on the CPU when every operand is
// concrete. name is the operation as the user called it, for errors. The
// attribute must be freshly built: Infer fills its rank-dependent defaults.
func apply(name string, op ir.Op, attr ir.Attr, hint []ir.Type, args ...*Tensor) []*Tensor {
	check(name, args...)
	types := make([]ir.Type, len(args))
	var tr *trace.Tracer
	for i, a := range args {
		types[i] = a.Type()
		if a.tr == nil {
			continue
		}
		if tr != nil && a.tr != tr {
			fail(name, types[:i+1], "operands come from two different traces (@%s and @%s)", tr.Name(), a.tr.Name())
		}
		tr = a.tr
	}
	res, err := ir.Infer(op, types, attr, hint)
	if err != nil {
		failErr(name, types, err)
	}
	if tr != nil {
		return record(name, tr, op, attr, res, args, types)
	}
	return run(name, op, attr, res, args, types)
}

// run evaluates the op on concrete operands with the eager backend.
func run(name string, op ir.Op, attr ir.Attr, res []ir.Type, args []*Tensor, types []ir.Type) []*Tensor {
	in := &ir.Instr{Op: op, Attr: attr, Args: make([]*ir.Value, len(args))}
	cs := make([]*backend.Buffer, len(args))
	for i, a := range args {
		in.Args[i] = &ir.Value{Type: types[i]}
		cs[i] = a.c
	}
	limit := cpu.DefaultMemoryLimit()
	for i, t := range res {
		// Refuse before allocating.
		if n, ok := t.NumElements(); !ok || t.DType.Size() == 0 || n > limit/int64(t.DType.Size()) {
			fail(name, types, "the result %s is too large for the cpu executor (limit %d bytes)", t, limit)
		}
		in.Results = append(in.Results, &ir.Value{Type: t, Def: in, Index: i})
	}
	outs, err := eagerBackend().Eval(in, cs)
	if err != nil {
		failErr(name, types, err)
	}
	ts := make([]*Tensor, len(outs))
	for i, c := range outs {
		ts[i] = &Tensor{c: c}
	}
	return ts
}

// record emits the op into tr at the user's call site; concrete operands
// become constants of the trace first.
func record(name string, tr *trace.Tracer, op ir.Op, attr ir.Attr, res []ir.Type, args []*Tensor, types []ir.Type) []*Tensor {
	if tr.Finished() {
		fail(name, types, "the trace of @%s has finished: a traced tensor escaped the traced function", tr.Name())
	}
	pos := trace.CallerPos(0)
	vals := make([]*ir.Value, len(args))
	for i, a := range args {
		if a.v != nil {
			vals[i] = a.v
		} else {
			vals[i] = capture(name, tr, pos, a)
		}
	}
	outs, err := tr.Emit(pos, op, attr, res, vals...)
	if err != nil {
		failErr(name, types, err)
	}
	ts := make([]*Tensor, len(outs))
	for i, v := range outs {
		ts[i] = &Tensor{v: v, tr: tr}
	}
	return ts
}

// lift makes the concrete operands of an operation with traced ones
// constants of their trace (a copy of ts; ts itself when none is traced), so
// that broadcasts inserted for them are recorded rather than computed: a
// closed-over scalar stays a scalar constant of the trace.
func lift(name string, ts []*Tensor) []*Tensor {
	var tr *trace.Tracer
	for _, t := range ts {
		if t.tr != nil {
			tr = t.tr
			break
		}
	}
	if tr == nil {
		return ts
	}
	out := append([]*Tensor{}, ts...)
	var pos ir.Pos
	for i, t := range ts {
		if t.c == nil {
			continue
		}
		if tr.Finished() {
			fail(name, typesOf(ts...), "the trace of @%s has finished: a traced tensor escaped the traced function", tr.Name())
		}
		if !pos.Known() {
			pos = trace.CallerPos(0)
		}
		out[i] = &Tensor{v: capture(name, tr, pos, t), tr: tr}
	}
	return out
}

// capture records a concrete tensor as a constant of tr: an iota op for a
// tensor made by Iota, a splat for one whose elements are all equal (bit for
// bit), otherwise every element.
func capture(name string, tr *trace.Tracer, pos ir.Pos, a *Tensor) *ir.Value {
	t := a.c.Type()
	if a.iotaAxis > 0 {
		outs, err := tr.Emit(pos, ir.OpIota, &ir.AxisAttr{Axis: int64(a.iotaAxis - 1)}, []ir.Type{t})
		if err != nil {
			failErr(name, []ir.Type{t}, err)
		}
		return outs[0]
	}
	lit := &ir.Literal{}
	if t.DType.IsFloat() {
		lit.Floats = make([]float64, a.c.Len())
		a.c.ReadFloat64s(0, lit.Floats)
		if splatFloats(lit.Floats) {
			lit.Floats = lit.Floats[:1]
		}
	} else {
		lit.Ints = make([]int64, a.c.Len())
		a.c.ReadInt64s(0, lit.Ints)
		if splatInts(lit.Ints) {
			lit.Ints = lit.Ints[:1]
		}
	}
	outs, err := tr.Emit(pos, ir.OpConstant, &ir.ConstAttr{Value: lit}, []ir.Type{t})
	if err != nil {
		failErr(name, []ir.Type{t}, err)
	}
	return outs[0]
}

func splatFloats(xs []float64) bool {
	for _, x := range xs[min(1, len(xs)):] {
		if math.Float64bits(x) != math.Float64bits(xs[0]) {
			return false
		}
	}
	return len(xs) > 1
}

func splatInts(xs []int64) bool {
	for _, x := range xs[min(1, len(xs)):] {
		if x != xs[0] {
			return false
		}
	}
	return len(xs) > 1
}

// apply1 is apply for ops with one result.
func apply1(name string, op ir.Op, attr ir.Attr, hint []ir.Type, args ...*Tensor) *Tensor {
	return apply(name, op, attr, hint, args...)[0]
}
