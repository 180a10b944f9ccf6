package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// obtain returns the program traced at sig, from the cache or compiled.
// traced is an unoptimised trace at sig when the caller has one. reason says
// why the program is needed (for the recompile log). Past a limit it returns
// the policy's route instead. explicit (Lower) bypasses the limits and does
// not count as a specialisation. f.mu is held.
func (f *Function) obtain(args []Arg, sig signature, traced *ir.Module, reason string, explicit bool) (*program, bool, *route, error) {
	if !explicit {
		n, classes := f.specialisations()
		if r := f.checkLimit(n, classes[f.classKey(sig)], reason); r != nil {
			return nil, false, r, nil
		}
	}
	var err error
	if traced == nil {
		if traced, err = f.trace(args, sig); err != nil {
			return nil, false, nil, err
		}
	}
	key := makeKey(&f.opts, sig, ir.Print(traced))
	exe, src, note := f.opts.Cache.lookup(key, f.opts.Target, traced.Entry(), &f.times)
	if note != "" {
		f.note(note)
	}
	compiled := false
	switch src {
	case fromMemory, fromDisk:
		if src == fromMemory {
			f.memHits.Add(1)
			f.note(withReason(fmt.Sprintf("found %s for %s in the cache's memory", f.title(), sig.text()), reason))
		} else {
			f.diskHits.Add(1)
			f.note(withReason(fmt.Sprintf("loaded %s for %s from the persistent cache %s", f.title(), sig.text(), f.opts.Cache.path(key.hash)), reason))
		}
		if exe.Exec == nil {
			// A persistent entry holds the optimised program; the backend
			// compiles it again (a lookup, for backends that cache their own
			// objects), and memory keeps the result. The key holds the
			// donors, so they are the entry's.
			exe.donate = tensorPositions(args, f.opts.Donate)
			if exe, err = exe.withBackend(f.opts.backend, &f.times); err != nil {
				return nil, false, nil, fmt.Errorf("%s: compiling for %s: %w", f.opts.Name, sig.text(), err)
			}
			f.opts.Cache.remember(key.hash, exe)
		}
	default:
		if note != "" {
			f.corrupt.Add(1)
		}
		f.noteCompile(sig, reason, explicit)
		// passes rewrite in place; traced stays as it is for padding checks.
		m, err := f.copyTrace(traced, args, sig)
		if err != nil {
			return nil, false, nil, err
		}
		if exe, err = compile(m, Config{Target: f.opts.Target, Backend: f.opts.backend,
			Donate: tensorPositions(args, f.opts.Donate), Precision: f.opts.Precision}, &f.times); err != nil {
			return nil, false, nil, fmt.Errorf("%s: compiling for %s: %w", f.opts.Name, sig.text(), err)
		}
		f.compiles.Add(1)
		compiled = true
		ev, err := f.opts.Cache.store(key, f.opts.Name, exe)
		if err != nil {
			f.note(fmt.Sprintf("could not write the persistent cache entry: %v", err))
		}
		f.evictions.Add(int64(ev))
	}
	p := &program{sig: sig, exe: exe, traced: traced, explicit: explicit}
	f.programs[sig.text()] = p
	f.order = append(f.order, p)
	return p, compiled, nil, nil
}

// noteCompile logs a compile: the first program's, or a recompile with
// its reason, which TPUCC_LOGS=recompiles (Options.Log) prints. Programs
// found in the cache are logged as what they are, never as compiles.
func (f *Function) noteCompile(sig signature, reason string, explicit bool) {
	switch {
	case explicit:
		f.note(fmt.Sprintf("compiling %s for %s (Lower)", f.title(), sig.text()))
	case f.last == nil:
		f.note(fmt.Sprintf("compiling %s for %s", f.title(), sig.text()))
	default:
		line := fmt.Sprintf("recompiling %s: %s", f.title(), reason)
		f.note(line)
		if f.opts.Log != nil {
			fmt.Fprintln(f.opts.Log, line)
		}
	}
}

// withReason appends why a program was needed, when a reason is known.
func withReason(line, reason string) string {
	if reason == "" {
		return line
	}
	return line + ": " + reason
}

// classKey is sig with the size of every dimension that is padded to
// buckets, and that sits at a bucket size, replaced by "*": programs of one
// class differ only in buckets, and each class is one specialisation.
func (f *Function) classKey(sig signature) string {
	var b strings.Builder
	for i, t := range sig.types {
		if sig.isStatic(i) {
			b.WriteString(sig.statics[i] + ";")
			continue
		}
		b.WriteString(t.DType.String() + "[")
		for d, dim := range t.Shape {
			st := f.dims[DimRef{i, d}]
			if n, ok := f.opts.bucket(dim.Size); ok && n == dim.Size && st != nil && st.dynamic && st.exact == "" {
				b.WriteString("*,")
			} else {
				fmt.Fprintf(&b, "%d,", dim.Size)
			}
		}
		b.WriteString("];")
	}
	return b.String()
}

// specialisations counts the classes of the programs Call compiled, as
// the dimensions are padded now (a dimension found unsafe to pad splits
// its class into one per size).
func (f *Function) specialisations() (n int, classes map[string]bool) {
	classes = map[string]bool{}
	for _, p := range f.order {
		if !p.explicit {
			classes[f.classKey(p.sig)] = true
		}
	}
	return len(classes), classes
}

// checkLimit returns the policy's route when a new program would pass a
// limit (a new class past the recompile limit, or any program past the
// program limit), warning once per function.
func (f *Function) checkLimit(specialisations int, oldClass bool, reason string) *route {
	limit := ""
	switch {
	case len(f.programs) >= f.opts.MaxPrograms:
		limit = fmt.Sprintf("program limit of %d", f.opts.MaxPrograms)
	case !oldClass && specialisations >= f.opts.RecompileLimit:
		limit = fmt.Sprintf("recompile limit of %d", f.opts.RecompileLimit)
	default:
		return nil
	}
	action := map[Policy]string{LimitError: "new signatures are errors", LimitEager: "new signatures run eagerly",
		LimitPanic: "new signatures panic"}[f.opts.OnLimit]
	if !f.warned {
		f.warned = true
		fmt.Fprintf(f.opts.Warn, "tpucc: warning: %s reached its %s (changing: %s); %s\n", f.title(), limit, strings.Join(f.changing, ", "), action)
	}
	f.note(fmt.Sprintf("not compiling %s: %s reached: %s; %s", f.title(), limit, reason, action))
	err := &limitError{fmt.Sprintf("%s reached its %s: %s", f.title(), limit, reason)}
	switch f.opts.OnLimit {
	case LimitEager:
		return &route{eager: true}
	case LimitPanic:
		return &route{err: err, panics: true}
	}
	return &route{err: err}
}

// reason says how sig differs from the call that made the newest program,
// and what became of each changed dimension; it also records what changed.
func (f *Function) reason(sig signature, became []DimRef, buckets map[DimRef]int64, notes map[DimRef]string) string {
	if f.last == nil {
		return ""
	}
	var items []string
	for _, ch := range f.last.diff(sig) {
		what := fmt.Sprintf("arg %d", ch.arg)
		s := ch.text
		if ch.dim >= 0 {
			ref := DimRef{ch.arg, ch.dim}
			what = ref.String()
			st := f.dims[ref]
			switch {
			case notes[ref] != "":
				s += "; " + notes[ref]
			case st != nil && st.dynamic && slices.Contains(became, ref):
				s += fmt.Sprintf("; now dynamic, bucket %d", buckets[ref])
			case st != nil && st.dynamic:
				s += fmt.Sprintf("; bucket %d", buckets[ref])
			}
		}
		if !slices.Contains(f.changing, what) {
			f.changing = append(f.changing, what)
		}
		items = append(items, s)
	}
	if len(items) == 0 {
		return "new signature " + sig.text()
	}
	return strings.Join(items, "; ")
}

// Lower returns the StableHLO text of the program for args' exact shapes
// (tensor Args need only a Type), compiling it if no program has them, as
// jax.jit(f).lower(x) does. It never pads and ignores the limits.
func (f *Function) Lower(args []Arg) (string, error) {
	if _, ok := appendKey(nil, args); !ok {
		return "", f.badArgs(args)
	}
	sig := newSignature(args)
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.programs[sig.text()]
	if p == nil {
		var err error
		if p, _, _, err = f.obtain(args, sig, nil, "", true); err != nil {
			return "", err
		}
	}
	return p.exe.HLO, nil
}

// copyTrace is a copy of traced for the passes to rewrite: through the
// module encoding, so that the user's function runs once per compile
// (Stats.Traces counts its runs, as JAX counts traces); traced again only
// where the encoding refuses the module (regions nested past its budget).
func (f *Function) copyTrace(traced *ir.Module, args []Arg, sig signature) (*ir.Module, error) {
	if m, err := DecodeModule(EncodeModule(traced)); err == nil {
		return m, nil
	}
	return f.trace(args, sig)
}
