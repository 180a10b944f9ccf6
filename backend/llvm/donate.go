package llvm

import (
	"slices"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// Donated arguments updated in place. A decode step takes its KV cache as
// an argument, writes one token's keys and values into it with
// dynamic_update_slice and returns it: without help that is a copy of the
// whole cache per step (gigabytes at batch 64) to change a few kilobytes.
// When the caller donates the argument (compile.Donate, JAX's
// donate_argnums) and the update is the argument's only use, the plan
// writes the update into the argument's own storage and returns that
// storage as the result; the runtime then marks the argument consumed, so
// nothing can read it again. A call that does not donate it (Run, or
// RunWith without it) works on a private copy of the argument instead, so
// one compiled program serves both.

// inplaceUpdates are the dynamic_update_slices of the entry f that may
// write into their operand: a donated parameter of static type whose only
// use in f is this update.
func inplaceUpdates(f *ir.Func, donate []int) map[*ir.Instr]bool {
	donated := map[*ir.Value]bool{}
	for _, i := range donate {
		if i >= 0 && i < len(f.Params) {
			donated[f.Params[i]] = true
		}
	}
	if len(donated) == 0 {
		return nil
	}
	uses := map[*ir.Value]int{}
	for _, in := range f.Body.Instrs {
		for _, a := range in.Args {
			uses[a]++
		}
	}
	out := map[*ir.Instr]bool{}
	for _, in := range f.Body.Instrs {
		if in.Op != ir.OpDynamicUpdateSlice || len(in.Args) < 2 {
			continue
		}
		x := in.Args[0]
		if donated[x] && uses[x] == 1 && x.Type.IsStatic() && in.Args[1].Type.IsStatic() &&
			in.Results[0].Type.DType == x.Type.DType && in.Results[0].Type.SameShape(x.Type) {
			out[in] = true
		}
	}
	return out
}

// updateInPlace plans in (one of inplaceUpdates) as a step that writes the
// update into the parameter's slot, which becomes the result's slot too.
func (pl *planner) updateInPlace(in *ir.Instr, env map[*ir.Value]int) error {
	x := env[in.Args[0]]
	st := step{kind: stepUpdate, instr: in, bufs: []int{x}, outs: 1, what: "update in place " + in.Op.String()}
	for _, a := range in.Args {
		s, ok := env[a]
		if !ok {
			return ir.Errorf(in.Pos, "internal error: operand of %s was not planned", in.Op)
		}
		st.bufs = append(st.bufs, s)
	}
	pl.p.slots[x].written = true
	pl.p.generated[in.Op]++
	env[in.Results[0]] = x
	pl.p.steps = append(pl.p.steps, st)
	return nil
}

// runUpdate copies the update (bufs[2]) into the operand's storage
// (bufs[0], also bufs[1]) at the start indices (bufs[3:]), each clamped
// so that the update fits, as the reference executor clamps them.
func runUpdate(bufs []*backend.Buffer) {
	x, upd := bufs[0], bufs[2]
	// One array for the index arithmetic at the usual ranks: a loop's
	// update runs every iteration, and an iteration allocates nothing.
	rank := len(x.Type().Shape)
	var fixed [32]int64
	ints := fixed[:]
	if 4*rank > len(fixed) {
		ints = make([]int64, 4*rank)
	}
	dims, ud := ints[:rank:rank], ints[rank:2*rank:2*rank]
	for d := range rank {
		dims[d], ud[d] = x.Type().Shape[d].Size, upd.Type().Shape[d].Size
	}
	if len(dims) == 0 {
		copy(x.Bytes(), upd.Bytes())
		return
	}
	size := int64(x.Type().DType.Size())
	strides := ints[2*rank : 3*rank : 3*rank]
	acc := size
	for d := len(dims) - 1; d >= 0; d-- {
		strides[d] = acc
		acc *= dims[d]
	}
	base := int64(0)
	for d, s := range bufs[3:] {
		base += min(max(s.Int64At(0), 0), dims[d]-ud[d]) * strides[d]
	}
	last := len(ud) - 1
	row := ud[last] * size
	rows := int64(1)
	for _, n := range ud[:last] {
		rows *= n
	}
	dst, src := x.Bytes(), upd.Bytes()
	idx := ints[3*rank : 3*rank+last]
	for r := int64(0); r < rows; r++ {
		off := base
		for d, i := range idx {
			off += i * strides[d]
		}
		copy(dst[off:off+row], src[r*row:(r+1)*row])
		for d := last - 1; d >= 0; d-- { // the next row of the update
			if idx[d]++; idx[d] < ud[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// paramBuffer is the buffer that slot i, a parameter's, runs on: the
// argument itself, unless the plan writes into it; then a view of the
// argument's storage when the call donates it, else a private copy. A
// written slot that is a result given storage runs on that storage
// (into.go, intoParam), and a donated argument whose storage is given for
// another result is copied too (that result is copied over it at the end).
func (x *Executable) paramBuffer(i int, args []*backend.Buffer, donated []int, into []*backend.Buffer) *backend.Buffer {
	sl := &x.plan.slots[i]
	arg := args[sl.param]
	if !sl.written {
		return arg
	}
	if own := x.intoFor(i, into); own != nil {
		return intoParam(arg, sl, slices.Contains(donated, sl.param), own, args)
	}
	if slices.Contains(donated, sl.param) && !sharesArg(arg, into) {
		if v, err := backend.View(sl.typ, arg.Bytes()); err == nil {
			return v
		}
	}
	return arg.Clone().WithType(sl.typ)
}

// RunWith runs the program with the arguments that o.Donate lists
// consumed: an argument the program updates in place gives its storage to
// the result, and the results are written into o.Into's storage (into.go).
// KeepOnDevice means nothing on the host (results are host buffers either
// way).
func (x *Executable) RunWith(args []*backend.Buffer, o backend.RunOptions) ([]*backend.Buffer, error) {
	return x.run(args, o.Donate, o.Into)
}
