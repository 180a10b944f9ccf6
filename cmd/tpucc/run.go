package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/ir"
)

var runCommand = &command{
	name:    "run",
	file:    true,
	summary: "compile MODEL.tir for this CPU and run it",
	about: `Compiles the entry function of MODEL.tir as build does for --target cpu (the default pass
pipeline) and runs it on a backend: llvm (the default on a machine without TPU chips) is
native code for this CPU, generated through LLVM and built by the system clang; --backend
reference is the reference executor, which interprets the optimised program op by op.
Each parameter comes from --input NAME=FILE.npy or, when not given, is drawn at random from
--seed: a parameter that is not given gets the same values whichever others are. Floats are
drawn uniformly from [-2, 2), except a matmul's weight (a parameter that is an operand of a
dot_general or ragged_dot), drawn from [-2/sqrt(K), 2/sqrt(K)) for K the length of the sums it enters,
so that layers keep their inputs' size; signed integers from [-8, 8], unsigned ones from
[0, 16], i1 from {0, 1}.

With --output-dir the results are written as DIR/result0.npy, DIR/result1.npy, ... in return
order (all of them, or none if anything fails); DIR is created if needed. Without it, one line
per result is printed: its type and its first values. --save-inputs also writes the arguments
the program ran on as DIR/arg0.npy, DIR/arg1.npy, ... in parameter order, so that another
runtime (XLA, with tools/xlacheck) can be given exactly the same inputs. DIR/tpucc-outputs.txt
lists the files the run wrote; the files the previous run's list names and this run did not
write are removed (files tpucc did not list are left alone).

A program with symbolic dimensions (f32[B,1024]) runs once each symbol has a size: from
--dim B=64, or from the shape of an --input file for a parameter that has the symbol.

A *.mlir file is StableHLO as JAX prints it; its parameters are named as written (--input
arg0=x.npy for %arg0), and the entry is its public @main.
Sizes that disagree are an error, and so is a symbol that only a drawn parameter has
when no --dim gives it.

--device picks the device instead of a backend: cpu, pjrt (XLA:CPU through PJRT), tpu or
gpu; without --device or --backend a machine with TPU chips runs on its TPU.

A program of several replicas (replicas = R, or mhlo.num_replicas = R in a .mlir) runs as
JAX's pmap does: each --input has a leading axis of R (replica r gets slice r), each result
is written with one, and --save-inputs writes the arguments so; it runs on --device pjrt (R
XLA:CPU devices) or --backend reference (docs/SHARDING.md, "Several replicas").

MODEL may also be an executable written by build --emit=executable (MODEL.pjrt): it runs
on the device its manifest names, which must match the plugin (platform, version, API,
device kind) and whose entry the inputs must match; docs/PJRT.md describes the checks.
`,
	flags: []flagSpec{
		{name: "input", kind: listFlag, arg: "NAME=FILE.npy", doc: "the value of parameter %NAME (written without %); may be repeated"},
		{name: "seed", kind: valueFlag, arg: "N", doc: "seed for the parameters not given with --input (default 0)"},
		{name: "output-dir", kind: valueFlag, arg: "DIR", doc: "write the results into DIR as .npy files instead of printing them"},
		{name: "save-inputs", kind: boolFlag, doc: "with --output-dir, also write the arguments as DIR/argN.npy"},
		dimFlag,
		backendFlag,
		deviceFlag,
		precisionFlag,
		entryFlag,
		{name: "time", kind: boolFlag, doc: "write to standard error what compiling took, by stage (passes, lowering,\nthe backend's: LLVM IR, clang or its cache, loading), and the run"},
	},
	run: cmdRun,
}

// summaryValues is how many leading values a printed result shows.
const summaryValues = 8

// inputArg is one --input NAME=FILE.
type inputArg struct {
	name, file string
}

func parseInputs(list []string) ([]inputArg, error) {
	var ins []inputArg
	for _, s := range list {
		name, file, ok := strings.Cut(s, "=")
		name = strings.TrimPrefix(name, "%")
		if !ok || name == "" || file == "" {
			return nil, usagef("--input %s: want NAME=FILE.npy", s)
		}
		for _, in := range ins {
			if in.name == name {
				return nil, usagef("--input %s is given twice", name)
			}
		}
		ins = append(ins, inputArg{name: name, file: file})
	}
	return ins, nil
}

func cmdRun(e *env, p *parsed) error {
	seed, err := strconv.ParseInt(p.value("seed", "0"), 10, 64)
	if err != nil {
		return usagef("--seed %s: want an integer", p.value("seed", ""))
	}
	ins, err := parseInputs(p.list("input"))
	if err != nil {
		return err
	}
	dims, err := parseDims(p.list("dim"))
	if err != nil {
		return err
	}
	outDir := p.value("output-dir", "")
	if p.has("output-dir") && outDir == "" {
		return usagef("--output-dir needs a directory name")
	}
	saveInputs := p.flag("save-inputs")
	if saveInputs && outDir == "" {
		return usagef("--save-inputs needs --output-dir")
	}
	precision, err := precisionValue(p)
	if err != nil {
		return err
	}
	name, src, err := readSource(p.positional[0], e.stdin)
	if err != nil {
		return err
	}
	if pjrt.IsArtifact(src) {
		if p.has("precision") {
			return usagef("--precision applies to .tir programs; %s is a compiled executable", name)
		}
		return runArtifact(e, p, name, src, runOutput{seed, ins, outDir, saveInputs})
	}
	m, err := parseSource(name, src)
	if err != nil {
		return diag(name, err)
	}
	f, err := entry(m, name, p.value("entry", ""))
	if err != nil {
		return err
	}
	b, err := openRunBackend("run", p.value("backend", ""), p.value("device", ""))
	if err != nil {
		return err
	}
	given, arrays, err := readInputs(m, hostSignature(m, f), name, ins, dims)
	if err != nil {
		return err
	}
	// Refuse a program too large for memory before drawing any input or converting the
	// given ones; cpu.Run checks the same with the same limit.
	if err := cpu.CheckMemory(m, f, cpu.DefaultMemoryLimit()); err != nil {
		return diag(name, err)
	}
	args, err := runArgs(f, given, arrays, seed)
	if err != nil {
		return err
	}
	var report io.Writer
	if p.flag("time") {
		report = e.stderr
	}
	results, err := runOn(b, m, f, args, precision, report)
	if err != nil {
		return diag(name, err)
	}
	return writeResults(e, runOutput{seed, ins, outDir, saveInputs}, results, args)
}

// runArgs are the program's arguments: the given arrays as the parameters'
// tensors, the others drawn from seed.
func runArgs(f *ir.Func, given []*inputArg, arrays []*backend.Buffer, seed int64) ([]*backend.Buffer, error) {
	limits := cpu.InputLimits(f)
	f = hostSignature(f.Module, f)
	args := make([]*backend.Buffer, len(f.Params))
	missing := false
	for k, a := range arrays {
		if a == nil {
			missing = true
			continue
		}
		var err error
		if args[k], err = inputTensor(a, given[k].file, f.Params[k]); err != nil {
			return nil, err
		}
	}
	if missing {
		random := cpu.RandomInputsWithin(drawOnly(f, given), seed, limits)
		for k := range f.Params {
			if args[k] != nil {
				continue
			}
			// CheckMemory has passed, so every parameter fits the limit that
			// RandomInputs draws within (both count a value's own bytes).
			args[k] = random[k]
		}
	}
	return args, nil
}

// runOutput is what run was asked for beyond the program: how to draw and
// where to write.
type runOutput struct {
	seed       int64
	ins        []inputArg
	outDir     string
	saveInputs bool
}

// writeResults prints the results, or writes them (and with --save-inputs
// the arguments) to --output-dir, all or none.
func writeResults(e *env, o runOutput, results, args []*backend.Buffer) error {
	if o.outDir == "" {
		var b strings.Builder
		for i, r := range results {
			fmt.Fprintf(&b, "result%d: %s\n", i, summary(r))
		}
		if _, err := io.WriteString(e.stdout, b.String()); err != nil {
			return osError("<stdout>", err)
		}
		return nil
	}
	files := make([]string, 0, len(results)+len(args))
	tensors := make([]*backend.Buffer, 0, len(results)+len(args))
	for i, r := range results {
		files = append(files, "result"+strconv.Itoa(i)+".npy")
		tensors = append(tensors, r)
	}
	if o.saveInputs {
		for i, a := range args {
			files = append(files, "arg"+strconv.Itoa(i)+".npy")
			tensors = append(tensors, a)
		}
	}
	return writeTensors(o.outDir, files, tensors)
}

func paramIndex(f *ir.Func, name string) int {
	for i, p := range f.Params {
		if p.Name == name {
			return i
		}
	}
	return -1
}

func paramList(f *ir.Func) string {
	if len(f.Params) == 0 {
		return "it has none"
	}
	names := make([]string, len(f.Params))
	for i, p := range f.Params {
		names[i] = "%" + p.Name
	}
	return "it has " + strings.Join(names, ", ")
}

// drawOnly is f's signature for cpu.RandomInputs with every given parameter made a scalar,
// so that only the missing ones cost a draw. RandomInputs gives each parameter its own
// stream (from the seed and its position), so the missing ones get exactly the values a run
// without any --input gives them.
func drawOnly(f *ir.Func, given []*inputArg) *ir.Func {
	g := &ir.Func{Name: f.Name, Results: f.Results, Module: f.Module}
	for k, p := range f.Params {
		if given[k] != nil {
			p = &ir.Value{Type: ir.Scalar(p.Type.DType), Index: k, Name: p.Name}
		}
		g.Params = append(g.Params, p)
	}
	return g
}

// readNPY reads an --input file.
func readNPY(file string) (*backend.Buffer, error) {
	b, err := backend.ReadNPYFile(file)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, osError(file, err)
		}
		// ReadNPYFile puts the path in front of its reason; fileError puts it back.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return nil, fileErrorf(file, "%v", err)
	}
	return b, nil
}

// inputTensor checks that the buffer read from file has parameter p's dtype and
// shape (static by now: its symbols are bound).
func inputTensor(b *backend.Buffer, file string, p *ir.Value) (*backend.Buffer, error) {
	if t := b.Type(); t.DType != p.Type.DType || !slices.Equal(t.Dims(), p.Type.Dims()) {
		return nil, fileErrorf(file, "input %%%s wants %s, file has %s", p.Name, p.Type, t)
	}
	return b, nil
}

// summary is a result's type and its first values, flat in row-major order:
// f32[2,3] = [1.0, 2.5, ...] (6 values); a scalar is f32[] = 1.0.
func summary(b *backend.Buffer) string {
	t, n := b.Type(), b.Len()
	vals := make([]string, 0, min(n, summaryValues)+1)
	for i := range min(n, summaryValues) {
		switch {
		case t.DType.IsComplex():
			vals = append(vals, ir.FormatComplex(b.Complex128At(i), t.DType))
		case t.DType.IsFloat():
			vals = append(vals, ir.FormatFloat(b.Float64At(i), t.DType))
		case t.DType.IsBool():
			vals = append(vals, strconv.FormatBool(b.Int64At(i) != 0))
		case t.DType == ir.U64: // Int64At gives the bit pattern
			vals = append(vals, strconv.FormatUint(uint64(b.Int64At(i)), 10))
		default:
			vals = append(vals, strconv.FormatInt(b.Int64At(i), 10))
		}
	}
	if t.Rank() == 0 && n == 1 {
		return t.String() + " = " + vals[0]
	}
	s := t.String() + " = [" + strings.Join(vals, ", ")
	if n > summaryValues {
		return s + ", ...] (" + strconv.Itoa(n) + " values)"
	}
	return s + "]"
}

// writeTensors writes each tensor to dir under its file name, all or none: each goes to a
// temporary file first, and only when all are written are they renamed into place. A
// directory created for them is removed again on failure. The manifest (manifestName) is
// written with them, and then what the previous run's manifest listed and this run did not
// write is removed.
func writeTensors(dir string, files []string, tensors []*backend.Buffer) (err error) {
	created, err := makeDir(dir)
	if err != nil {
		return err
	}
	var outs []*pending
	defer func() {
		if err != nil {
			discard(outs)
			for _, d := range created {
				os.Remove(d)
			}
		}
	}()
	for i, r := range tensors {
		o, err := newPending(filepath.Join(dir, files[i]), func(w io.Writer) error {
			return backend.WriteNPY(w, r)
		})
		if err != nil {
			return err
		}
		outs = append(outs, o)
	}
	mpath := filepath.Join(dir, manifestName)
	if st, err := os.Lstat(mpath); err == nil && !st.Mode().IsRegular() {
		return fileErrorf(mpath, "is not a regular file (tpucc lists its outputs there)")
	}
	o, err := newPending(mpath, func(w io.Writer) error {
		_, err := w.Write(manifest(files))
		return err
	})
	if err != nil {
		return err
	}
	outs = append(outs, o)
	old := previousOutputs(dir)
	if err := commit(outs); err != nil {
		return err
	}
	removeStale(dir, old, files)
	return nil
}

// makeDir is mkdir -p that returns the directories it created, deepest first.
func makeDir(dir string) (created []string, err error) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return nil, fileErrorf(d, "not a directory")
			}
			break
		}
		// Under a file, stat says "not a directory"; walking on finds that file and names it.
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return nil, osError(d, err)
		}
		created = append(created, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, osError(dir, err)
	}
	return created, nil
}
