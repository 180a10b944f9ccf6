package engine

import (
	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

// CallInto is Call with the results written into into's storage: one entry
// per result (nil: that result in new storage), each of the result's dtype
// and shape, plain host memory, sharing storage with no argument except one
// the function donates (Options.Donate), which then holds the result and is
// not marked consumed. It returns into's buffers in their places. Where the
// backend writes results in place (llvm) the kernels write into the
// storage; pjrt copies them there from the device; a padded call, an eager
// one and the reference backend copy them there from new storage. A loop of calls (a decode step, a
// streaming chain) hands the same storage back every call instead of paying
// for fresh memory. Storage that breaks a rule is an error naming the
// result (backend.CheckInto), and nothing runs. A nil into is Call.
func (f *Function) CallInto(into []*backend.Buffer, args []Arg) ([]*backend.Buffer, error) {
	return f.call(args, into)
}

// checkInto checks into against route r's results (their sizes after
// slicing, for a padded call) and the tensor arguments ts.
func (f *Function) checkInto(r *route, args []Arg, ts, into []*backend.Buffer) error {
	e := r.prog.exe
	types := e.Entry.Results
	if r.plan != nil {
		types = make([]ir.Type, len(e.Entry.Results))
		for i, t := range e.Entry.Results {
			types[i] = t.WithShape(t.Shape)
			if to := r.plan.Outputs[i]; to != nil {
				types[i] = ir.Tensor(t.DType, to...)
			}
		}
	}
	return backend.CheckInto(e.Entry.Name, types, into, ts, tensorPositions(args, f.opts.Donate))
}

// eagerInto runs the function uncompiled (LimitEager) and copies its
// results into into's storage.
func (f *Function) eagerInto(args []Arg, into []*backend.Buffer) ([]*backend.Buffer, error) {
	out, err := f.prog.Eager(args)
	if err != nil || into == nil {
		return out, err
	}
	types := make([]ir.Type, len(out))
	var ts []*backend.Buffer
	for i, o := range out {
		types[i] = o.Type()
	}
	for _, a := range args {
		if !a.static {
			ts = append(ts, a.Tensor)
		}
	}
	if err := backend.CheckInto(f.opts.Name, types, into, ts, tensorPositions(args, f.opts.Donate)); err != nil {
		return nil, err
	}
	return backend.CopyInto(out, into), nil
}

// InHostMemory reports whether the function's programs run in this host's
// memory (the cpu device's backends, llvm and reference) with their results
// left there: then a donated argument may also be given as its result's
// storage (CallInto), which a device's backend refuses.
func (f *Function) InHostMemory() bool {
	n := f.opts.backend.Name()
	return !f.opts.KeepOnDevice && (n == backend.CPUDefault || n == backend.CPUFallback)
}
