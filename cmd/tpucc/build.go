package main

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/target"
)

// targets are the values --target accepts: the compile path's list (engine.Targets), each
// naming a description in target. assign-layout lays values out for it (the StableHLO
// carries no layouts) and --report costs the program on it.
var targets = engine.Targets()

// defaultTarget is cpu: it needs no target-specific rewriting, which is exactly what build
// does today, so the default's output will not change when TPU targets start to matter.
const defaultTarget = "cpu"

var buildCommand = &command{
	name:    "build",
	file:    true,
	summary: "compile MODEL.tir to StableHLO text",
	about: `Parses MODEL.tir, runs the default pass pipeline (tpucc passes) over it and lowers the entry
function to a StableHLO module whose func.func public @main takes the entry's parameters in
order; functions it calls become private functions of the module. The output file appears
only when the whole build succeeds.

A program with symbolic dimensions (f32[B,1024]) needs a size for each of them: --dim B=64
replaces the symbol B by 64 in every function of the file before the passes run.

--target names the machine, a TPU generation or this host's CPU (docs/TARGETS.md describes
each), that --report costs the program on and that assign-layout lays values out for:
dumps after assign-layout show each value's layout (f32[64,256]{1,0:T(8,128)} on a TPU).
The StableHLO carries no layouts; it differs between targets only where assign-layout
folded a transpose into a dot_general.

--report writes a cost table to standard error (the StableHLO keeps standard output, or the
-o file), after the build has succeeded: one row per group of instructions that runs as one
kernel (a fusion the fuse pass formed, or an instruction left unfused; constants are data,
not kernels), then the totals and the memory the program needs. Columns:

  group   the group's last value, named as the .tir dump names it
  op      its op; for a fusion KIND:ROOT+N, its kind (loop, input, output), the op it is
          rooted at (the dot_general, reduction or composite; else the last op) and N more
          fused instructions: "output:dot_general+3"
  result  its result type
  FLOPs   useful arithmetic: 2*M*N*K per batch for dot_general, one per element for
          elementwise ops, one per combine for reductions; movement ops count none
  transc  transcendentals (exp, log, tanh, erf, ...), counted apart from FLOPs
  bytes   memory traffic: operands from outside the group read once, results used outside
          it written once, each in the target's padded tiled size
  pad     the part of bytes that is tile padding (TPU tiles are (8,128) and friends)
  MXU     useful share of the matrix unit's FLOPs once dot_general's dimensions are padded
          to its tiles (128 or 256 wide); - for groups without a matmul
  time    max(compute, bytes / bandwidth): the roofline estimate
  bound   compute or memory, whichever sets the time

The memory line adds the parameters, the dense constants and the peak of live activations,
and a warning line follows when that exceeds one chip's memory. With --emit=executable for a
TPU target, a last line gives what libtpu's compiled executable needs of each chip's memory
(arguments, outputs, aliased, temporaries, code): for a program split over a mesh, one chip's
share (docs/SHARDING.md).
`,
	flags: []flagSpec{
		{name: "o", kind: valueFlag, arg: "FILE", doc: "write the StableHLO to FILE; without -o, or with -o -, it goes to standard output"},
		{name: "target", kind: valueFlag, arg: "T", doc: strings.Join(targets, ", ") + " (default " + defaultTarget + ");\nwhat --report costs the program on and assign-layout lays values out for"},
		{name: "report", kind: boolFlag, doc: "write the cost table for --target to standard error (see above)"},
		precisionFlag,
		{name: "dump-after", kind: valueFlag, arg: "RE|all", doc: "after each pass whose name matches the regular expression RE (all: every pass),\nwrite each function to --dump-dir as FUNC_NN_PASS.tir (NN: the pass's place in\nthe pipeline; FUNC_00_input.tir is the program before the first pass)"},
		{name: "dump-dir", kind: valueFlag, arg: "DIR", doc: "directory for --dump-after's files, created if missing (default: the current directory)"},
		{name: "disable", kind: listFlag, arg: "P,...", doc: "skip these passes (names as tpucc passes lists them); may be repeated"},
		{name: "verify-each", kind: boolFlag, doc: "verify the program after every pass, not only at the end"},
		dimFlag,
		{name: "emit", kind: valueFlag, arg: "KIND", doc: "hlo (default): StableHLO text; executable: compile it through libtpu for --topology,\nwithout a TPU, and write the serialized executable with its manifest (docs/PJRT.md)"},
		{name: "topology", kind: valueFlag, arg: "T", doc: topologyHelp()},
		entryFlag,
	},
	run: cmdBuild,
}

// buildConfig is build's command line, checked before any file is read.
type buildConfig struct {
	file   string
	out    string         // "" for standard output
	target *target.Target // what --report costs on; also opts.Target
	report bool
	entry  string
	dims   []dimSize // --dim, in command-line order
	opts   passes.Options

	precision string // --precision, for every product

	emit     string // hlo or executable
	topology string // for --emit=executable
	// limits are tpucc run's draw limits for the entry's parameters, from
	// the program as written (the passes rewrite the dots they come from).
	limits []float64
}

func parseBuild(p *parsed) (*buildConfig, error) {
	c := &buildConfig{file: p.positional[0], out: p.value("o", "-"), entry: p.value("entry", ""), report: p.flag("report")}
	if c.out == "-" {
		c.out = ""
	}
	name := p.value("target", defaultTarget)
	t, err := engine.LookupTarget(name)
	if err != nil {
		return nil, usagef("%v", err)
	}
	c.target = t
	if p.has("dump-after") {
		re := p.value("dump-after", "")
		if re == "all" {
			re = ""
		}
		rx, err := regexp.Compile(re)
		if err != nil {
			return nil, usagef("--dump-after: bad regular expression: %v", err)
		}
		c.opts.DumpAfter = rx
		c.opts.DumpDir = p.value("dump-dir", "") // passes: "" is the current directory
	} else if p.has("dump-dir") {
		return nil, usagef("--dump-dir without --dump-after dumps nothing; add --dump-after=all or a pass name")
	}
	known := passes.Names()
	for _, list := range p.list("disable") {
		for name := range strings.SplitSeq(list, ",") {
			if name = strings.TrimSpace(name); name == "" {
				continue
			}
			if !slices.Contains(known, name) {
				return nil, usagef("--disable: unknown pass %q (tpucc passes lists them)", name)
			}
			c.opts.Disable = append(c.opts.Disable, name)
		}
	}
	dims, err := parseDims(p.list("dim"))
	if err != nil {
		return nil, err
	}
	c.dims = dims
	if err := checkEmit(c, p.value("emit", "hlo"), p.value("topology", "")); err != nil {
		return nil, err
	}
	c.opts.VerifyEach = p.flag("verify-each")
	if c.precision, err = precisionValue(p); err != nil {
		return nil, err
	}
	return c, nil
}

func cmdBuild(e *env, p *parsed) error {
	c, err := parseBuild(p)
	if err != nil {
		return err
	}
	name, m, err := load(e, c.file)
	if err != nil {
		return err
	}
	f, err := entry(m, name, c.entry)
	if err != nil {
		return err
	}
	if len(c.dims) > 0 {
		if err := bindDims(m, name, c.dims); err != nil {
			return err
		}
	}
	if err := checkSizes(m); err != nil {
		return diag(name, err)
	}
	if c.emit == "executable" {
		c.limits = cpu.InputLimits(f)
	}
	exe, _, err := engine.Compile(m, engine.Config{Target: c.target.Name(), Entry: f.Name, Passes: c.opts, Precision: c.precision})
	if err != nil {
		return diag(name, err)
	}
	text := exe.HLO
	var report string
	if c.report {
		// Costed before anything is written, so a program the model cannot cost (a
		// symbolic shape) leaves no output behind.
		if report, err = costReport(f, c.target.WithPrecision(c.precision)); err != nil {
			return diag(name, err)
		}
	}
	if c.emit == "executable" {
		if r := f.Module.NumReplicas(); r > 1 {
			// The manifest has no replicas: the file would run one, and fail.
			return fileErrorf(name, "@%s runs as %d replicas, and an executable file holds a program of one: tpucc run runs the program itself", f.Name, r)
		}
		key, _, err := signingKey()
		if err != nil {
			return err
		}
		a, stats, err := compileExecutable(e, c, f, text)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if report != "" && stats != nil {
			report += compiledMemory(*stats, c.target, c.topology, shardMesh(f))
		}
		if err := writeExecutable(c, a, key); err != nil {
			return err
		}
	} else if err := writeBuild(e, c, text); err != nil {
		return err
	}
	if report != "" {
		if _, err := io.WriteString(e.stderr, report); err != nil {
			return osError("<stderr>", err)
		}
	}
	return nil
}

// writeBuild writes the StableHLO to standard output or, atomically, to the -o file.
func writeBuild(e *env, c *buildConfig, text string) error {
	if c.out == "" {
		if _, err := io.WriteString(e.stdout, text); err != nil {
			return osError("<stdout>", err)
		}
		return nil
	}
	out, err := newPending(c.out, func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	})
	if err != nil {
		return err
	}
	return commit([]*pending{out})
}

// isSymbol reports whether s is spelled as .tir spells a dimension symbol.
func isSymbol(s string) bool {
	for i, r := range s {
		letter := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return s != ""
}

// bindDims replaces the symbols named by --dim with their sizes in every
// type of every function of m, then verifies m: sizes that contradict the
// program (two symbols given different sizes where the program needs them
// equal) are diagnostics at the op that needs them. Naming a symbol the
// program does not have is a usage error, as --input naming no parameter.
func bindDims(m *ir.Module, file string, dims []dimSize) error {
	var syms []string
	size := func(sym string) (int64, bool) {
		if !slices.Contains(syms, sym) {
			syms = append(syms, sym)
		}
		for _, d := range dims {
			if d.name == sym {
				return d.size, true
			}
		}
		return 0, false
	}
	bind := func(t *ir.Type) {
		var shape []ir.Dim
		for i, d := range t.Shape {
			if !d.Symbolic() {
				continue
			}
			if n, ok := size(d.Sym); ok {
				if shape == nil {
					shape = slices.Clone(t.Shape) // shapes may be shared between values
				}
				shape[i] = ir.D(n)
			}
		}
		if shape != nil {
			t.Shape = shape
		}
	}
	for _, f := range m.Funcs {
		for _, p := range f.Params {
			bind(&p.Type)
		}
		for i := range f.Results {
			bind(&f.Results[i])
		}
		f.Body.Walk(func(in *ir.Instr) {
			for _, r := range in.Regions {
				for _, p := range r.Params {
					bind(&p.Type)
				}
			}
			for _, r := range in.Results {
				bind(&r.Type)
			}
		})
	}
	for _, d := range dims {
		if !slices.Contains(syms, d.name) {
			has := "it has no symbolic dimensions"
			if len(syms) > 0 {
				has = "it has " + strings.Join(syms, ", ")
			}
			return usagef("--dim %s=%d: %s has no dimension %s (%s)", d.name, d.size, file, d.name, has)
		}
	}
	return diag(file, ir.Verify(m))
}
