package passes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/tpucc/tpucc/ir"
)

// Options control a pipeline run.
type Options struct {
	// VerifyEach verifies every function after every pass, so a failure names
	// the pass that broke the IR. Without it the module is verified once, at
	// the end.
	VerifyEach bool
	// DumpAfter selects the passes (by name) after which every function is
	// written to DumpDir as <func>_<seq>_<pass>.tir, seq being the pass's
	// 1-based index in the pipeline as given (disabled passes keep their
	// numbers), two digits. When it is set, <func>_00_input.tir is written
	// before the first pass too.
	DumpAfter *regexp.Regexp
	DumpDir   string // created if missing; "" is the current directory
	// Disable names passes to skip; a name that is neither a known pass nor in
	// the pipeline is an error.
	Disable []string
	// Eval folds constants (fold-constants); nil folds only what needs no
	// arithmetic.
	Eval Evaluator
	// Stats, when not nil, receives the rewrite counters of the run, so a
	// driver can print them. Run adds to it; it is not reset.
	Stats *Stats
	// Target is the machine the program is compiled for (layout assignment,
	// fusion profitability); nil means none was chosen, and passes that need
	// one leave the program as it is.
	Target Target
	// Times, when not nil, receives what each step took, in order: the
	// verification of the input ("verify", Seq 0), each enabled pass over all
	// functions (with its verification under VerifyEach), and the final
	// verification ("verify", Seq len(pipeline)+1) when there is one. Run
	// appends to it.
	Times *[]PassTime
}

// PassTime is the time one step of a pipeline run took.
type PassTime struct {
	Pass string
	Seq  int // the pass's 1-based place in the pipeline as given
	Time time.Duration
}

// PanicError is a panic inside a pass, recovered by Run. Its message names
// the pass and the function; Stack is the goroutine's stack at the panic, for
// a developer (drivers should not show it to users).
type PanicError struct {
	Pass, Func string
	Value      any
	Stack      []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("internal error: pass %s panicked on @%s: %v", e.Pass, e.Func, e.Value)
}

// Run applies pipeline to every function of m in order: each pass runs over
// all functions before the next pass starts. m must verify on entry.
func Run(m *ir.Module, pipeline []Pass, opts Options) error {
	steps, err := enabled(pipeline, opts.Disable)
	if err != nil {
		return err
	}
	active := make([]Pass, len(steps))
	for i, s := range steps {
		active[i] = s.pass
	}
	if err := checkOrder(active); err != nil {
		return err
	}
	clock := stepClock{times: opts.Times, start: time.Now()}
	if err := ir.Verify(m); err != nil {
		return fmt.Errorf("passes: the input does not verify:\n%w", err)
	}
	clock.lap("verify", 0)
	stats := opts.Stats
	if stats == nil {
		stats = &Stats{}
	}
	c := &Context{Eval: opts.Eval, Stats: stats, Target: opts.Target}
	if opts.DumpAfter != nil {
		if err := dump(m, opts.DumpDir, 0, "input"); err != nil {
			return err
		}
		clock.start = time.Now()
	}
	for _, s := range steps {
		c.pass = s.pass.Name
		for _, f := range m.Funcs {
			if err := runOne(s.pass, f, c, opts.VerifyEach); err != nil {
				return err
			}
		}
		clock.lap(s.pass.Name, s.seq)
		if opts.DumpAfter != nil && opts.DumpAfter.MatchString(s.pass.Name) {
			if err := dump(m, opts.DumpDir, s.seq, s.pass.Name); err != nil {
				return err
			}
			clock.start = time.Now()
		}
	}
	if !opts.VerifyEach {
		if err := ir.Verify(m); err != nil {
			return fmt.Errorf("passes: the IR does not verify after the pipeline (%s); run with VerifyEach to find the pass that broke it:\n%w",
				pipelineNames(active), err)
		}
		clock.lap("verify", len(pipeline)+1)
	}
	return nil
}

// stepClock records PassTimes when asked to; dumps are not timed.
type stepClock struct {
	times *[]PassTime
	start time.Time
}

func (c *stepClock) lap(pass string, seq int) {
	if c.times == nil {
		return
	}
	now := time.Now()
	*c.times = append(*c.times, PassTime{Pass: pass, Seq: seq, Time: now.Sub(c.start)})
	c.start = now
}

type step struct {
	pass Pass
	seq  int // 1-based index in the pipeline as given
}

// enabled drops the disabled passes, checking that every disabled name exists.
func enabled(pipeline []Pass, disable []string) ([]step, error) {
	valid := Names()
	for _, p := range pipeline {
		if !contains(valid, p.Name) {
			valid = append(valid, p.Name)
		}
	}
	off := map[string]bool{}
	for _, name := range disable {
		if !contains(valid, name) {
			return nil, fmt.Errorf("passes: cannot disable unknown pass %q; valid passes: %s", name, strings.Join(valid, ", "))
		}
		off[name] = true
	}
	var steps []step
	for i, p := range pipeline {
		if !off[p.Name] {
			steps = append(steps, step{pass: p, seq: i + 1})
		}
	}
	return steps, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func pipelineNames(ps []Pass) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// runOne runs p on f, turning a panic into a *PanicError, and verifies f
// afterwards when verify is set. A pass that reports no change must leave the
// printed function identical; with verify set that is checked too.
func runOne(p Pass, f *ir.Func, c *Context, verify bool) (err error) {
	var before string
	if verify {
		before = ir.PrintFunc(f)
	}
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Pass: p.Name, Func: f.Name, Value: r, Stack: debug.Stack()}
		}
	}()
	changed, err := runPass(p, f, c)
	if err != nil {
		return fmt.Errorf("pass %s on @%s: %w", p.Name, f.Name, err)
	}
	if !verify {
		return nil
	}
	if err := ir.VerifyFunc(f); err != nil {
		return fmt.Errorf("pass %s broke @%s:\n%w", p.Name, f.Name, err)
	}
	if !changed && ir.PrintFunc(f) != before {
		return fmt.Errorf("pass %s changed @%s but reported no change", p.Name, f.Name)
	}
	return nil
}

// runPass runs p on f and, when p.Regions is set, inside every while and
// case region of f, nested ones included, each as a function of its own.
func runPass(p Pass, f *ir.Func, c *Context) (bool, error) {
	changed, err := p.Run(f, c)
	if err != nil || !p.Regions {
		return changed, err
	}
	for _, in := range f.Body.Instrs {
		if !ir.IsControl(in.Op) {
			continue
		}
		for _, r := range in.Regions {
			ch, err := runPass(p, f.RegionFunc(r), c)
			if err != nil {
				return changed, err
			}
			changed = changed || ch
		}
	}
	return changed, nil
}

// dump writes every function of m after step seq, each file atomically
// (a temporary file in dir, then a rename) so a reader never sees half a dump.
func dump(m *ir.Module, dir string, seq int, what string) error {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("passes: dump: %w", err)
		}
	}
	for _, f := range m.Funcs {
		name := fmt.Sprintf("%s_%02d_%s.tir", f.Name, seq, what)
		if err := writeAtomic(filepath.Join(dir, name), ir.PrintFunc(f)); err != nil {
			return fmt.Errorf("passes: dump: %w", err)
		}
	}
	return nil
}

func writeAtomic(path, text string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, werr := tmp.WriteString(text)
	merr := tmp.Chmod(0o644) // CreateTemp makes the file private; a dump is not
	cerr := tmp.Close()
	if err := errors.Join(werr, merr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
