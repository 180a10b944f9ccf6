package engine

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes/padding"
)

// Program is a function the runtime can compile: the compile package wraps
// a Go function as one; tests use .tir templates.
type Program interface {
	// Trace records the function for arguments of these types and static
	// values (tensor Args carry only their Type) and returns a verified
	// module whose entry takes the tensor arguments in order.
	Trace(args []Arg) (*ir.Module, error)
	// Eager runs the function uncompiled, for LimitEager.
	Eager(args []Arg) ([]*backend.Buffer, error)
}

// Function is the compilation cache of one function: it maps each call's
// signature to a compiled program, compiling on a miss.
//
// The fast path (a signature seen before) is one map lookup on an immutable
// snapshot, with no lock. Misses are resolved one at a time per function
// under a mutex, which makes concurrent callers with a new signature wait
// for the one compile instead of repeating it (singleflight), and keeps the
// recompile log in call order.
//
// A program is found, in order: in this function's table; in the Cache's
// memory (another Function compiled the same traced program); in the
// Cache's directory; else compiled. Only the last is a compile, and only a
// call that compiled is a miss: a call served by an existing or loaded
// program is a hit.
type Function struct {
	opts Options
	prog Program

	routes *routeTable // call key -> how to run it; hits read it without f.mu

	mu       sync.Mutex
	programs map[string]*program // by the signature traced at
	order    []*program
	dims     map[DimRef]*dimState
	last     *signature // the call that made the newest program
	changing []string   // what differed between programs, in first-seen order
	warned   bool
	times    StageTimes
	explain  []string

	calls, hits, misses, eager, rejected, compiles, traces atomic.Int64
	memHits, diskHits, corrupt, evictions, padded          atomic.Int64
	paddedElems, realElems                                 atomic.Int64
}

// program is one compiled program of a Function.
type program struct {
	sig    signature // what it was traced at
	exe    *Executable
	traced *ir.Module // an unoptimised trace, kept for padding checks
	// explicit programs were made by Lower and count against no limit.
	explicit bool
}

// route says how calls with one exact signature run.
type route struct {
	prog        *program
	plan        *padding.Plan // nil runs the program as it is
	extra, real int64         // input elements added by padding, and real ones
	eager       bool          // run uncompiled (limit policy)
	err         error         // fail with this (limit policy)
	panics      bool
	used        atomic.Int64 // the route table's clock at its last use
}

// dimState follows one dimension of one argument across calls.
type dimState struct {
	first   int64
	dynamic bool
	exact   string // why it is never padded; "" while padding may be tried
	exactAt int64  // the size at whose call exact was found
}

// NewFunction returns an empty cache for p.
func NewFunction(p Program, opts Options) (*Function, error) {
	o, err := opts.check()
	if err != nil {
		return nil, err
	}
	f := &Function{opts: o, prog: p, programs: map[string]*program{}, dims: map[DimRef]*dimState{},
		routes: newRouteTable(o.MaxRoutes)}
	return f, nil
}

// title is how logs name the function: mlp (main.go:12).
func (f *Function) title() string {
	if !f.opts.Pos.Known() {
		return f.opts.Name
	}
	return fmt.Sprintf("%s (%s:%d)", f.opts.Name, filepath.Base(f.opts.Pos.File), f.opts.Pos.Line)
}

// Upload returns b in the memory the function's programs run in: a copy in
// the device's memory when its backend runs on a device (backend.Uploader),
// made once for an argument that many calls share; b itself on the host.
func (f *Function) Upload(b *backend.Buffer) (*backend.Buffer, error) {
	if u, ok := f.opts.backend.(backend.Uploader); ok {
		return u.Upload(b)
	}
	return b, nil
}

// Call runs the function on args, compiling first if no program fits.
func (f *Function) Call(args []Arg) ([]*backend.Buffer, error) { return f.call(args, nil) }

// call is Call, writing the results into into's storage when it is not
// nil (CallInto).
func (f *Function) call(args []Arg, into []*backend.Buffer) ([]*backend.Buffer, error) {
	f.calls.Add(1)
	var buf [128]byte
	key, ok := appendKey(buf[:0], args)
	if !ok {
		return nil, f.badArgs(args)
	}
	if r := f.routes.get(key); r != nil && r.err == nil && !r.eager {
		f.hits.Add(1)
		return f.run(r, args, into)
	}
	return f.slow(args, string(key), into)
}

func (f *Function) badArgs(args []Arg) error {
	for i, a := range args {
		if a.static {
			if _, ok := appendStatic(nil, a.Static); !ok {
				return fmt.Errorf("%s: argument %d: static value of type %T: want a bool, integer, float or string", f.opts.Name, i, a.Static)
			}
		} else if !a.Type.IsStatic() {
			return fmt.Errorf("%s: argument %d has a symbolic shape %s", f.opts.Name, i, a.Type)
		}
	}
	return fmt.Errorf("%s: bad arguments", f.opts.Name)
}

// run executes a route: pads the inputs, runs, slices the outputs, and
// writes them into into's storage (into.go).
func (f *Function) run(r *route, args []Arg, into []*backend.Buffer) ([]*backend.Buffer, error) {
	switch {
	case r.err != nil:
		if r.panics {
			panic(r.err)
		}
		return nil, r.err
	case r.eager:
		f.eager.Add(1)
		return f.eagerInto(args, into)
	}
	ts := make([]*backend.Buffer, 0, len(args))
	for i, a := range args {
		if a.static {
			continue
		}
		if a.Tensor == nil {
			return nil, fmt.Errorf("%s: argument %d has no value", f.opts.Name, i)
		}
		if why := a.Tensor.Donated(); why != "" {
			return nil, fmt.Errorf("%s: argument %d (%s) %s: it has no value anymore", f.opts.Name, i, a.Type, why)
		}
		ts = append(ts, a.Tensor)
	}
	if into != nil {
		if err := f.checkInto(r, args, ts, into); err != nil {
			return nil, err
		}
	}
	if f.opts.KeepOnDevice || len(f.opts.Donate) > 0 || into != nil {
		return f.runWith(r, args, ts, into)
	}
	if r.plan == nil {
		return plainTypes(r.prog.exe.Run(ts))
	}
	f.padded.Add(1)
	f.paddedElems.Add(r.extra)
	f.realElems.Add(r.real)
	for i, to := range r.plan.Inputs {
		if to != nil {
			ts[i] = padTo(ts[i], to)
		}
	}
	out, err := r.prog.exe.Run(ts)
	if err != nil {
		return nil, err
	}
	for i, to := range r.plan.Outputs {
		if to != nil {
			out[i] = sliceTo(out[i], to)
		}
	}
	return plainTypes(out, nil)
}

// runWith runs a route with backend.RunOptions, then marks the donated
// arguments consumed, except one that is also into's storage for a result
// (it holds that result now).
func (f *Function) runWith(r *route, args []Arg, ts, into []*backend.Buffer) ([]*backend.Buffer, error) {
	o := backend.RunOptions{KeepOnDevice: f.opts.KeepOnDevice}
	if r.plan == nil { // padded copies are the program's own: nothing to donate
		o.Donate = tensorPositions(args, f.opts.Donate)
		o.Into = into
	} else {
		for i, to := range r.plan.Inputs {
			if to != nil {
				ts[i] = padTo(ts[i], to)
			}
		}
	}
	out, err := r.prog.exe.RunWith(ts, o)
	if err != nil {
		return nil, err
	}
	if r.plan != nil {
		for i, to := range r.plan.Outputs {
			if to != nil {
				out[i] = sliceTo(out[i], to)
			}
		}
		if into != nil {
			out = backend.CopyInto(out, into)
		}
	}
	for _, i := range f.opts.Donate {
		if i < len(args) && args[i].Tensor != nil && !slices.Contains(into, args[i].Tensor) {
			if err := args[i].Tensor.Donate(fmt.Sprintf("was donated to a call of %s (argument %d)", f.opts.Name, i)); err != nil {
				return nil, fmt.Errorf("%s: argument %d: %w", f.opts.Name, i, err)
			}
		}
	}
	return plainTypes(out, nil)
}

// tensorPositions maps argument positions to positions among the tensor
// arguments, dropping static ones.
func tensorPositions(args []Arg, at []int) []int {
	var out []int
	for _, i := range at {
		if i >= len(args) || args[i].static {
			continue
		}
		k := 0
		for _, a := range args[:i] {
			if !a.static {
				k++
			}
		}
		out = append(out, k)
	}
	return out
}

// plainTypes drops the layouts that assign-layout gives a TPU target's
// results: callers get the types they would get eagerly.
func plainTypes(out []*backend.Buffer, err error) ([]*backend.Buffer, error) {
	for i, t := range out {
		if t.Type().Layout != nil {
			out[i] = t.WithType(t.Type().WithShape(t.Type().Shape))
		}
	}
	return out, err
}

// slow resolves a call whose key has no route yet (or a policy route).
func (f *Function) slow(args []Arg, key string, into []*backend.Buffer) ([]*backend.Buffer, error) {
	for i, a := range args {
		if !a.static && a.Tensor == nil {
			return nil, fmt.Errorf("%s: argument %d has no value", f.opts.Name, i)
		}
	}
	f.mu.Lock()
	r := f.routes.lookup(key)
	compiled := false
	if r == nil {
		var err error
		r, compiled, err = f.resolve(args)
		if err != nil {
			f.mu.Unlock()
			return nil, err
		}
		f.routes.add(key, r)
	}
	f.mu.Unlock()
	switch {
	case r.err != nil:
		f.rejected.Add(1)
	case r.eager:
	case compiled:
		f.misses.Add(1)
	default:
		f.hits.Add(1)
	}
	return f.run(r, args, into)
}

// limitError is what a call past the limit gets under LimitError and LimitPanic.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// IsLimit reports whether err is a call refused at the recompile limit.
func IsLimit(err error) bool {
	var l *limitError
	return errors.As(err, &l)
}

// resolve decides how calls with args' signature run, compiling if needed.
// It reports whether it compiled. f.mu is held.
func (f *Function) resolve(args []Arg) (*route, bool, error) {
	sig := newSignature(args)
	var became []DimRef
	for i, t := range sig.types {
		if sig.isStatic(i) {
			continue
		}
		for d, dim := range t.Shape {
			ref := DimRef{i, d}
			st := f.dims[ref]
			if st == nil {
				f.dims[ref] = &dimState{first: dim.Size, dynamic: f.opts.isDynamic(i, d)}
				continue
			}
			if !st.dynamic && dim.Size != st.first && !f.opts.NoAutoDynamic {
				st.dynamic = true
				became = append(became, ref)
			}
		}
	}
	buckets := map[DimRef]int64{}
	notes := map[DimRef]string{}
	var pads []padding.Dim
	var padded []DimRef // the dimension of each of pads
	for i, t := range sig.types {
		for d, dim := range t.Shape {
			ref := DimRef{i, d}
			st := f.dims[ref]
			if sig.isStatic(i) || !st.dynamic || dim.Size == 0 {
				continue
			}
			if st.exact != "" {
				// The traces named in exact are those of the deciding call, not this one's.
				notes[ref] = fmt.Sprintf("not padded since the call at %d: %s", st.exactAt, st.exact)
				continue
			}
			n := dim.Size
			b, ok := f.opts.bucket(n)
			if !ok {
				notes[ref] = fmt.Sprintf("not padded: no bucket holds %d", n)
				continue
			}
			buckets[ref] = b
			if b != n {
				pads = append(pads, padding.Dim{Name: ref.String(), Real: n, Padded: b})
				padded = append(padded, ref)
			}
		}
	}
	target := sig.withDims(buckets)
	if len(pads) > 0 {
		r, compiled, why, err := f.tryPadding(args, sig, target, pads, became, buckets)
		if r != nil || err != nil {
			return r, compiled, err
		}
		for k, ref := range padded {
			f.dims[ref].exact, f.dims[ref].exactAt = why, pads[k].Real
			notes[ref] = "not padded: " + why
			delete(buckets, ref)
		}
		target = sig.withDims(buckets)
	}
	if p := f.programs[target.text()]; p != nil {
		return &route{prog: p}, false, nil
	}
	reason := f.reason(sig, became, buckets, notes)
	p, compiled, r, err := f.obtain(args, target, nil, reason, false)
	if r != nil || err != nil {
		return r, false, err
	}
	f.last = &sig
	return &route{prog: p}, compiled, nil
}

// tryPadding tries to run sig's call in the bucket program target. It returns a
// route, or why padding is unsafe (then the caller compiles the exact shape).
func (f *Function) tryPadding(args []Arg, sig, target signature, pads []padding.Dim, became []DimRef, buckets map[DimRef]int64) (*route, bool, string, error) {
	p := f.programs[target.text()]
	var bucketTrace *ir.Module
	if p != nil {
		bucketTrace = p.traced
	} else {
		var err error
		if bucketTrace, err = f.trace(args, target); err != nil {
			return nil, false, fmt.Sprintf("tracing at the bucket size failed: %v", firstLine(err.Error())), nil
		}
	}
	exactTrace, err := f.trace(args, sig)
	if err != nil {
		return nil, false, "", err // the error eager execution would give
	}
	t0 := time.Now()
	plan, why := checkPadding(bucketTrace, exactTrace, pads)
	f.times.Check += time.Since(t0)
	if why != "" {
		return nil, false, why, nil
	}
	compiled := false
	if p == nil {
		var r *route
		p, compiled, r, err = f.obtain(args, target, bucketTrace, f.reason(sig, became, buckets, nil), false)
		if r != nil || err != nil {
			return r, false, "", err
		}
		f.last = &sig
	}
	r := &route{prog: p, plan: plan}
	for i, to := range plan.Inputs {
		if to != nil {
			real := elements(exactTrace.Funcs[0].Params[i].Type)
			r.extra += elements(bucketTrace.Funcs[0].Params[i].Type) - real
			r.real += real
		}
	}
	f.note(fmt.Sprintf("%s: %s runs in bucket %s", f.title(), sig.text(), target.text()))
	return r, compiled, "", nil
}

func elements(t ir.Type) int64 {
	n, _ := t.NumElements()
	return n
}

// trace records the program for sig, using args for the static values.
func (f *Function) trace(args []Arg, sig signature) (*ir.Module, error) {
	ta := make([]Arg, len(args))
	for i, a := range args {
		if a.static {
			ta[i] = a
		} else {
			ta[i] = ShapeArg(sig.types[i])
		}
	}
	t0 := time.Now()
	m, err := f.prog.Trace(ta)
	f.times.Trace += time.Since(t0)
	f.traces.Add(1)
	if err != nil {
		return nil, err
	}
	e := m.Entry()
	want := sig.tensorTypes()
	if e == nil || len(e.Params) != len(want) {
		return nil, fmt.Errorf("%s: the trace does not take the %d tensor arguments", f.opts.Name, len(want))
	}
	for i, p := range e.Params {
		if !p.Type.Equal(want[i]) {
			return nil, fmt.Errorf("%s: the trace's argument %d is %s, want %s", f.opts.Name, i, p.Type, want[i])
		}
	}
	if err := f.shard(m, args); err != nil {
		return nil, err
	}
	return m, nil
}
