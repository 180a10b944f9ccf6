package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/lower/stablehlo"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/target"
)

// Executable is one compiled program: the optimised module, its StableHLO
// text (the AOT artefact for XLA), and what a backend made of them. It is
// immutable once built and safe for concurrent Runs.
type Executable struct {
	Module *ir.Module // after passes.Default()
	Entry  *ir.Func
	HLO    string
	Target string             // the target the passes ran for
	Exec   backend.Executable // nil when compiled without a backend (tpucc build)
	// native is the backend's code a persistent entry carried (nil for a
	// fresh compile): withBackend hands it to a backend.ExpectingCompiler.
	native *backend.NativeCode
	// donate are the entry's parameters its callers donate (Config.Donate):
	// the backend may write results into their storage.
	donate []int
}

// Run executes the program on the backend it was compiled for.
func (e *Executable) Run(args []*backend.Buffer) ([]*backend.Buffer, error) {
	if e.Exec == nil {
		return nil, fmt.Errorf("@%s was compiled without a backend and cannot run", e.Entry.Name)
	}
	return e.Exec.Run(args)
}

// RunWith is Run with options, for a backend that honours them (see
// backend.OptionsRunner); any other runs with Run, and its results are
// copied into o.Into's storage.
func (e *Executable) RunWith(args []*backend.Buffer, o backend.RunOptions) ([]*backend.Buffer, error) {
	if e.Exec == nil {
		return e.Run(args)
	}
	if r, ok := e.Exec.(backend.OptionsRunner); ok && (o.KeepOnDevice || len(o.Donate) > 0 || o.Into != nil) {
		return r.RunWith(args, o)
	}
	if o.Into == nil {
		return e.Run(args)
	}
	if err := backend.CheckInto(e.Entry.Name, e.Entry.Results, o.Into, args, o.Donate); err != nil {
		return nil, err
	}
	res, err := e.Run(args)
	if err != nil {
		return nil, err
	}
	return backend.CopyInto(res, o.Into), nil
}

// RunInto runs the program with its results written into into's storage,
// one entry per result (nil: that result in new storage), and returns
// into's buffers in their places. The storage must have each result's
// dtype and shape and share nothing with the arguments; the rules are
// backend.CheckInto's, and an error names the result at fault. A loop that
// calls a program again and again hands the same storage back each time
// rather than paying for fresh memory.
func (e *Executable) RunInto(into, args []*backend.Buffer) ([]*backend.Buffer, error) {
	return e.RunWith(args, backend.RunOptions{Into: into})
}

// program is what a backend compiles from e.
func (e *Executable) program() *backend.Program {
	return &backend.Program{Module: e.Module, Entry: e.Entry, HLO: e.HLO, Target: e.Target, Donate: e.donate}
}

// withBackend returns e compiled by b (a copy: e itself is never changed, as
// it may be shared through the cache).
func (e *Executable) withBackend(b backend.Backend, times *StageTimes) (*Executable, error) {
	t0 := time.Now()
	var x backend.Executable
	var err error
	if ec, ok := b.(backend.ExpectingCompiler); ok && e.native != nil {
		x, err = ec.CompileExpecting(e.program(), *e.native)
	} else {
		x, err = b.Compile(e.program())
	}
	times.Backend += time.Since(t0)
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", b.Name(), err)
	}
	if fl, ok := x.(backend.FallbackLister); ok && logTopic("fallback") {
		for _, line := range fl.Fallbacks() {
			fmt.Fprintf(stderr, "tpucc: fallback: %s\n", line)
		}
	}
	c := *e
	c.Exec, c.native = x, nil
	return &c, nil
}

// fallbackWarn is where the one warning about the cpu device's fallback
// (backend.OpenCPU) goes.
var fallbackWarn io.Writer = os.Stderr

var fallbackOnce sync.Once

// openCPU opens the cpu device's backend, warning once per process when it
// falls back.
func openCPU() (backend.Backend, error) {
	return backend.OpenCPU("", "programs", nil, func(line string) {
		fallbackOnce.Do(func() { io.WriteString(fallbackWarn, line) })
	})
}

// OpenBackend opens the backend registered as name ("" is the default
// device's: DefaultDevice, with the cpu device's fallback).
func OpenBackend(name string) (backend.Backend, error) {
	if name == "" {
		return OpenDevice("")
	}
	return backend.Lookup(name)
}

// devices are the values of a device option, each with the backend that
// runs on it.
var devices = []struct{ name, backend string }{
	{"cpu", backend.CPUDefault}, // this host's CPU, compiled by tpucc itself (or backend.CPUFallback)
	{"pjrt", "pjrt"},            // XLA:CPU through PJRT, or $TPUCC_PJRT_PLUGIN
	{"tpu", "pjrt-tpu"},         // libtpu
	{"gpu", "pjrt-gpu"},         // the CUDA plugin
}

// Devices lists the device names DeviceBackend knows.
func Devices() []string {
	out := make([]string, len(devices))
	for i, d := range devices {
		out[i] = d.name
	}
	return out
}

// DeviceBackend is the name of the backend that runs on device; "" is
// DefaultDevice().
func DeviceBackend(device string) (string, error) {
	if device == "" {
		device = DefaultDevice()
	}
	for _, d := range devices {
		if d.name == device {
			return d.backend, nil
		}
	}
	return "", fmt.Errorf("unknown device %q (want one of %s)", device, strings.Join(Devices(), ", "))
}

// DefaultDevice is tpu on a machine with TPU chips when the PJRT backends
// are linked in (importing backend/pjrt, as package compile does), else
// cpu. Chips are detected from PCI ids, without initialising libtpu.
func DefaultDevice() string {
	if hasTPU() && slices.Contains(backend.Names(), "pjrt-tpu") {
		return "tpu"
	}
	return "cpu"
}

// hasTPU reads sysfs once per process: every function created without a
// backend asks.
var hasTPU = sync.OnceValue(backend.HasTPU)

// OpenDevice opens the backend of device; the error of a device the machine
// lacks names the device.
func OpenDevice(device string) (backend.Backend, error) {
	if device == "" {
		device = DefaultDevice()
	}
	name, err := DeviceBackend(device)
	if err != nil {
		return nil, err
	}
	if device == "cpu" {
		return openCPU()
	}
	b, err := backend.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("device %s: %w", device, err)
	}
	return b, nil
}

// StageTimes is time spent per stage of getting programs.
type StageTimes struct {
	Trace  time.Duration // running the Go function to record it (every trace)
	Passes time.Duration // passes.Default(), and the target's checks
	Lower  time.Duration // stablehlo.Lower
	Load   time.Duration // reading, checking and parsing persistent entries
	Check  time.Duration // comparing traces for padding safety
	// Backend is the backend's compile (code generation, loading).
	Backend time.Duration
}

// pipeline is the pass pipeline every program compiles with.
func pipeline() []passes.Pass { return passes.Default() }

// pipelineText names the pipeline's passes in order, for the key.
func pipelineText() string {
	var names []string
	for _, p := range pipeline() {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

// Config says how Compile compiles. The zero Config compiles the module's
// entry for the cpu target with the default pipeline.
type Config struct {
	// Target is a target name as tpucc build --target spells it (Targets);
	// "" is "cpu". assign-layout lays values out for it and its checks
	// refuse what it cannot compile.
	Target string
	// Entry names the function to lower; "" is the module's entry.
	Entry string
	// Passes carries the pipeline's driver options: dumps, disabled passes,
	// statistics, verification after each pass. Compile sets its Target and,
	// when it has none, its Eval (the CPU folder).
	Passes passes.Options
	// Donate lists the entry's parameters (by position) whose buffers each
	// call consumes; the lowering marks them as donors (stablehlo.Options
	// Donate), which a device backend acts on, and the llvm backend writes
	// a dynamic_update_slice of a donated parameter into its storage.
	Donate []int
	// Precision is every product's precision on the device
	// (stablehlo.Options.Precision).
	Precision string
	// Backend, when not nil, compiles the lowered program into the
	// Executable's Exec; nil stops after lowering (tpucc build).
	Backend backend.Backend
}

// Compile is the one compile path: every caller (Function, tpucc build and
// run, tools) compiles through it, so a program is optimised, checked and
// lowered the same way wherever it comes from. It runs the default pipeline
// for the target over m (consumed: the passes rewrite it), then the target's
// checks, then the lowering of the entry to StableHLO, then (with
// Config.Backend) the backend's compile.
//
// Inside tests (testing.Testing) every pass is followed by verification, as
// --verify-each asks for on the command line; outside them the module is
// verified once, after the last pass.
func Compile(m *ir.Module, cfg Config) (*Executable, StageTimes, error) {
	var times StageTimes
	exe, err := compile(m, cfg, &times)
	return exe, times, err
}

func compile(m *ir.Module, cfg Config, times *StageTimes) (*Executable, error) {
	t, err := LookupTarget(cfg.Target)
	if err != nil {
		return nil, err
	}
	entry := m.Entry()
	if cfg.Entry != "" {
		entry = m.Func(cfg.Entry)
	}
	if entry == nil {
		return nil, fmt.Errorf("the module has no function to compile")
	}
	opts := cfg.Passes
	opts.Target = t
	if opts.Eval == nil {
		opts.Eval = cpu.Folder{}
	}
	opts.VerifyEach = opts.VerifyEach || testing.Testing()
	t0 := time.Now()
	if err := passes.Run(m, pipeline(), opts); err != nil {
		return nil, err
	}
	if err := t.Check(m); err != nil {
		return nil, err
	}
	t1 := time.Now()
	times.Passes += t1.Sub(t0)
	hlo, err := stablehlo.Lower(m, stablehlo.Options{Entry: entry.Name,
		NativeRaggedDot: t.Kind == target.KindTPU, Donate: cfg.Donate, Precision: cfg.Precision})
	times.Lower += time.Since(t1)
	if err != nil {
		return nil, err
	}
	exe := &Executable{Module: m, Entry: entry, HLO: hlo, Target: t.Name(), donate: cfg.Donate}
	if cfg.Backend == nil {
		return exe, nil
	}
	return exe.withBackend(cfg.Backend, times)
}

// LookupTarget returns the description of the target named name ("" is
// "cpu"), or an error listing the targets there are: a TPU generation from
// target, or for "cpu" the host as target.Host measures it.
// Everyone who needs a target by name asks here.
func LookupTarget(name string) (*target.Target, error) {
	if name == "" || name == "cpu" {
		return hostTarget(), nil
	}
	t, ok := target.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown target %q (want one of %s)", name, strings.Join(Targets(), ", "))
	}
	return t, nil
}

// hostTarget describes this machine as the "cpu" target; the version
// fingerprint test replaces it with target.ReferenceCPU so that its record does
// not depend on the machine.
var hostTarget = target.Host

// targetKey is what the key says of a target: its name ("" is the cpu).
// No pass reads a figure measured on this machine (the fuse pass's size
// cap, the L2, was one until fusions became unbounded), so an entry made on
// a machine with another cache hierarchy is the same program.
func targetKey(name string) string {
	t, err := LookupTarget(name)
	if err != nil {
		return name
	}
	return t.Name()
}

// Targets are the target names Compile accepts, as tpucc build --target
// spells them: the TPU generations oldest first, then the CPU.
func Targets() []string { return append(target.Names(), "cpu") }

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
	fmt.Fprintf(&b, "target %s\n", targetKey(o.Target))
	fmt.Fprintf(&b, "backend %s %s\n", o.backend.Name(), o.backend.Fingerprint())
	fmt.Fprintf(&b, "pipeline %s\n", pipelineText())
	if len(o.Donate) > 0 { // absent otherwise, so that older keys stand
		fmt.Fprintf(&b, "donate %v\n", o.Donate)
	}
	if o.Precision != "" && o.Precision != "default" { // likewise
		fmt.Fprintf(&b, "precision %s\n", o.Precision)
	}
	fmt.Fprintf(&b, "program %s\n", hex.EncodeToString(th[:]))
	text := b.String()
	h := sha256.Sum256([]byte(text))
	return fullKey{text: text, hash: hex.EncodeToString(h[:])}
}
