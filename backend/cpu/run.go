package cpu

import (
	"fmt"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Run executes f (a function of m, which resolves calls; nil means f.Module)
// on args and returns its results in return order.
//
// Before anything runs, Run verifies f and every function it reaches (a
// malformed program is an error, never a panic), requires static shapes
// everywhere ("run needs static shapes: %x has f32[B,4]"), calls CheckMemory
// with DefaultMemoryLimit, and checks the arguments against the parameters
// ("argument %x: got f32[3], want f32[2,3]"; layouts are ignored).
//
// The interpreter walks the body in order, keeping one tensor per value ID and
// dropping each as soon as its last use has run. A result that is one of the
// arguments is returned as a copy, so results never share storage with args.
//
// Run is the program alone: the 1 × 1 process grid, where replica_id and
// partition_id are 0 and a collective's group can only be process 0.
func Run(m *ir.Module, f *ir.Func, args []*backend.Buffer) (res []*backend.Buffer, err error) {
	return run(m, f, args, &process{})
}

// run is Run on process pr of a grid.
func run(m *ir.Module, f *ir.Func, args []*backend.Buffer, pr *process) (res []*backend.Buffer, err error) {
	if f == nil {
		return nil, fmt.Errorf("cpu.Run: no function to run")
	}
	if m == nil {
		m = f.Module
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("internal error in the cpu executor running @%s: %v", f.Name, r)
		}
	}()
	if err := prepare(m, f); err != nil {
		return nil, err
	}
	if err := CheckMemory(m, f, DefaultMemoryLimit()); err != nil {
		return nil, err
	}
	if err := checkArgs(f, args); err != nil {
		return nil, err
	}
	res, err = (&machine{m: m, proc: pr}).call(f, args)
	if err != nil {
		return nil, err
	}
	for i, r := range res {
		for _, a := range args {
			if r == a {
				res[i] = r.Clone()
				break
			}
		}
	}
	return res, nil
}

// prepare verifies f and the functions it calls, refusing recursion, unknown
// callees, nested regions and symbolic shapes.
func prepare(m *ir.Module, f *ir.Func) error {
	var errs []error
	err := reachable(m, f, func(g *ir.Func) {
		if err := ir.VerifyFunc(g); err != nil {
			errs = append(errs, err)
		}
	})
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return errs[0]
	}
	var serr error
	if err := reachable(m, f, func(g *ir.Func) {
		g.Body.Walk(func(in *ir.Instr) {
			if len(in.Regions) > 0 && in.Op != ir.OpFusion && !ir.IsControl(in.Op) && in.Op != ir.OpSort && serr == nil {
				serr = ir.Errorf(in.Pos, "%s with nested regions is not supported by the cpu executor", in.Op)
			}
		})
		if serr == nil {
			serr = checkStatic(g)
		}
	}); err != nil {
		return err
	}
	return serr
}

// reachable calls visit once for f and for every function reachable from it
// by call, callers before callees. An unknown callee or a call cycle is an error.
func reachable(m *ir.Module, f *ir.Func, visit func(*ir.Func)) error {
	const (
		unseen = iota
		active
		done
	)
	state := map[*ir.Func]int{}
	var walk func(g *ir.Func) error
	walk = func(g *ir.Func) error {
		state[g] = active
		visit(g)
		var err error
		g.Body.Walk(func(in *ir.Instr) {
			if in.Op != ir.OpCall && in.Op != ir.OpCustomCall || err != nil {
				return
			}
			var h *ir.Func
			if h, err = callee(m, in); err != nil {
				return
			}
			switch state[h] {
			case active:
				err = ir.Errorf(in.Pos, "call @%s from @%s is recursive", h.Name, g.Name)
			case unseen:
				err = walk(h)
			}
		})
		state[g] = done
		return err
	}
	return walk(f)
}

func callee(m *ir.Module, in *ir.Instr) (*ir.Func, error) {
	if in.Op == ir.OpCustomCall {
		// The executor has no custom kernels: the fallback runs as a call.
		return ir.CustomCallFallback(m, in)
	}
	a, ok := in.Attr.(*ir.CallAttr)
	if !ok {
		return nil, ir.Errorf(in.Pos, "call has no callee")
	}
	var g *ir.Func
	if m != nil {
		g = m.Func(a.Callee)
	}
	if g == nil {
		return nil, ir.Errorf(in.Pos, "call to undefined function @%s", a.Callee)
	}
	return g, nil
}

// checkStatic reports the first value of g with a symbolic (or negative) dimension.
func checkStatic(g *ir.Func) error {
	var err error
	each := func(v *ir.Value) {
		if err != nil {
			return
		}
		for _, d := range v.Type.Shape {
			if d.Symbolic() || d.Size < 0 {
				err = ir.Errorf(v.Pos, "run needs static shapes: %s has %s", valueName(g, v), v.Type)
				return
			}
		}
	}
	for _, p := range g.Params {
		each(p)
	}
	g.Body.Walk(func(in *ir.Instr) {
		for _, r := range in.Results {
			each(r)
		}
	})
	return err
}

func checkArgs(f *ir.Func, args []*backend.Buffer) error {
	if len(args) != len(f.Params) {
		return fmt.Errorf("@%s takes %d arguments, got %d", f.Name, len(f.Params), len(args))
	}
	for i, p := range f.Params {
		a := args[i]
		switch {
		case a == nil:
			return fmt.Errorf("argument %s: missing (nil), want %s", valueName(f, p), p.Type)
		case !sameType(a.Type(), p.Type):
			return fmt.Errorf("argument %s: got %s, want %s", valueName(f, p), a.Type(), p.Type)
		}
		if err := checkBuffer(a); err != nil {
			return fmt.Errorf("argument %s: %v", valueName(f, p), err)
		}
	}
	return nil
}

// machine runs verified functions on a process. dead caches each block's deadAfter.
type machine struct {
	m    *ir.Module
	proc *process
	dead map[*ir.Block][][]int
}

func (mc *machine) call(f *ir.Func, args []*backend.Buffer) ([]*backend.Buffer, error) {
	vals := make([]*backend.Buffer, f.NumValues())
	return mc.block(f, f.Body, vals, args)
}

// block runs blk, a function body or a region of f, on args and returns what
// its return returns. Value IDs are unique across f and its regions, so
// regions keep their values in the function's table; each value is dropped
// after its last use in its own block.
func (mc *machine) block(f *ir.Func, blk *ir.Block, vals, args []*backend.Buffer) ([]*backend.Buffer, error) {
	for i, p := range blk.Params {
		vals[p.ID] = args[i]
	}
	dead := mc.deadAfter(f, blk)
	for i, in := range blk.Instrs {
		ins := make([]*backend.Buffer, len(in.Args))
		for k, a := range in.Args {
			ins[k] = vals[a.ID]
		}
		if in.Op == ir.OpReturn {
			return ins, nil
		}
		outs, err := mc.instr(f, in, vals, ins)
		if err != nil {
			return nil, err
		}
		for k, r := range in.Results {
			vals[r.ID] = outs[k]
		}
		for _, id := range dead[i] {
			vals[id] = nil
		}
	}
	if blk.Parent != nil {
		return nil, ir.Errorf(blk.Parent.Pos, "a %s region does not end with return", blk.Parent.Op)
	}
	return nil, fmt.Errorf("@%s does not end with return", f.Name)
}

// instr runs one instruction of f on its operands.
func (mc *machine) instr(f *ir.Func, in *ir.Instr, vals, ins []*backend.Buffer) ([]*backend.Buffer, error) {
	switch in.Op {
	case ir.OpCall, ir.OpCustomCall:
		g, err := callee(mc.m, in)
		if err != nil {
			return nil, err
		}
		return mc.call(g, ins)
	case ir.OpFusion:
		return runFusion(in, ins)
	case ir.OpWhile:
		return mc.runWhile(f, in, vals, ins)
	case ir.OpCase:
		return mc.runCase(f, in, vals, ins)
	case ir.OpSort:
		return mc.runSort(f, in, vals, ins)
	}
	if ir.IsCollective(in.Op) || in.Op == ir.OpReplicaID || in.Op == ir.OpPartitionID {
		outs, err := mc.proc.collective(in, ins)
		if err != nil {
			return nil, ir.Errorf(in.Pos, "%v", err)
		}
		return outs, nil
	}
	outs, err := eval(in, ins)
	if err != nil {
		return nil, ir.Errorf(in.Pos, "%v", err)
	}
	return outs, nil
}

func (mc *machine) deadAfter(f *ir.Func, blk *ir.Block) [][]int {
	if d, ok := mc.dead[blk]; ok {
		return d
	}
	if mc.dead == nil {
		mc.dead = map[*ir.Block][][]int{}
	}
	d := deadAfter(f, blk)
	mc.dead[blk] = d
	return d
}

// deadAfter lists, for each instruction index of blk, the values whose last
// use in blk it is (values the return uses are never listed).
func deadAfter(f *ir.Func, blk *ir.Block) [][]int {
	last := map[int]int{}
	n := len(blk.Instrs)
	for i, in := range blk.Instrs {
		for _, a := range in.Args {
			if in.Op == ir.OpReturn {
				last[a.ID] = n // kept
			} else if l, ok := last[a.ID]; !ok || l < n {
				last[a.ID] = i
			}
		}
	}
	dead := make([][]int, n)
	for id, i := range last {
		if i < n {
			dead[i] = append(dead[i], id)
		}
	}
	return dead
}

// valueName spells v as the printer does (ir.ValueNames), with its %.
func valueName(f *ir.Func, v *ir.Value) string { return "%" + ir.ValueNames(f)[v] }
