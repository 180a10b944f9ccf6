package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/backend/tpu"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/lower/stablehlo"
	"github.com/tpucc/tpucc/passes"
)

// Executable is one compiled program: the optimised module, which the CPU
// backend runs, and its StableHLO text (the AOT artefact for XLA). It is
// immutable once built and safe for concurrent Runs.
type Executable struct {
	Module *ir.Module // after passes.Default()
	Entry  *ir.Func
	HLO    string
}

// Run executes the program on the CPU backend.
func (e *Executable) Run(args []*cpu.Tensor) ([]*cpu.Tensor, error) {
	return cpu.Run(e.Module, e.Entry, args)
}

// StageTimes is time spent per stage of getting programs.
type StageTimes struct {
	Trace  time.Duration // running the Go function to record it (every trace)
	Passes time.Duration // passes.Default()
	Lower  time.Duration // stablehlo.Lower
	Load   time.Duration // reading, checking and parsing persistent entries
	Check  time.Duration // comparing traces for padding safety
}

func (s *StageTimes) add(u StageTimes) {
	s.Trace += u.Trace
	s.Passes += u.Passes
	s.Lower += u.Lower
	s.Load += u.Load
	s.Check += u.Check
}

// pipeline is the pass pipeline every Function compiles with.
func pipeline() []passes.Pass { return passes.Default() }

// pipelineText names the pipeline's passes in order, for the key.
func pipelineText() string {
	var names []string
	for _, p := range pipeline() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

// Build compiles m (consumed: the passes rewrite it) for target, as a
// Function compiles each traced program: passes.Default() with the CPU
// folder and the target's description, then stablehlo.Lower of the entry.
func Build(m *ir.Module, target string) (*Executable, StageTimes, error) {
	var times StageTimes
	exe, err := build(m, target, &times)
	return exe, times, err
}

func build(m *ir.Module, target string, times *StageTimes) (*Executable, error) {
	entry := m.Entry()
	if entry == nil {
		return nil, fmt.Errorf("the traced module has no function")
	}
	opts := passes.Options{Eval: cpu.Folder{}}
	if t, ok := tpu.Lookup(target); ok {
		opts.Target = t // assign-layout lays values out for it
	}
	t0 := time.Now()
	if err := passes.Run(m, pipeline(), opts); err != nil {
		return nil, err
	}
	t1 := time.Now()
	times.Passes += t1.Sub(t0)
	hlo, err := stablehlo.Lower(m, stablehlo.Options{Entry: entry.Name})
	times.Lower += time.Since(t1)
	if err != nil {
		return nil, err
	}
	return &Executable{Module: m, Entry: entry, HLO: hlo}, nil
}

// fullKey is everything a compiled program depends on. Its text is stored in
// the persistent entry and its hash names the entry's file.
type fullKey struct {
	text string
	hash string
}

// makeKey builds the key of the program traced as traced for sig. The
// traced program's own hash makes the key content-addressed, as JAX's and
// Inductor's persistent caches are: two functions that share an identity but
// close over different values trace differently and never share an entry.
func makeKey(o *Options, sig signature, tracedText string) fullKey {
	th := sha256.Sum256([]byte(tracedText))
	var b strings.Builder
	fmt.Fprintf(&b, "version %s\n", Version)
	fmt.Fprintf(&b, "function %q\n", o.Identity)
	fmt.Fprintf(&b, "signature %s\n", sig.text())
	fmt.Fprintf(&b, "target %s\n", o.Target)
	fmt.Fprintf(&b, "pipeline %s\n", pipelineText())
	fmt.Fprintf(&b, "program %s\n", hex.EncodeToString(th[:]))
	text := b.String()
	h := sha256.Sum256([]byte(text))
	return fullKey{text: text, hash: hex.EncodeToString(h[:])}
}
