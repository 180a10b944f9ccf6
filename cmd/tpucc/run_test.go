package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/internal/oracle"
	"github.com/tpucc/tpucc/ir"
)

// twoResultSrc returns two results, so that result0/result1 order is visible.
const twoResultSrc = `func @f(%x: f32[2,3], %w: f32[3]) -> (f32[2,3], f32[]) {
  %0 = add %x, %w : f32[2,3]
  %1 = reduce_sum %0 {axes=[0,1]} : f32[]
  return %0, %1
}
`

func writeNPY(t *testing.T, dir, name string, a *npy.Array) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := npy.WriteFile(p, a); err != nil {
		t.Fatal(err)
	}
	return p
}

// npyBytes is the exact .npy encoding of a tensor.
func npyBytes(t *testing.T, x *backend.Buffer) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := backend.WriteNPY(&b, x); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// reference runs src's entry on the CPU executor with args; nil arguments are drawn from seed.
func reference(t *testing.T, src string, seed int64, args ...*backend.Buffer) []*backend.Buffer {
	t.Helper()
	m, err := tir.Parse("m.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	f := m.Entry()
	random := cpu.RandomInputsWithin(f, seed, cpu.InputLimits(f))
	full := make([]*backend.Buffer, len(f.Params))
	for i := range full {
		full[i] = random[i]
		if i < len(args) && args[i] != nil {
			full[i] = args[i]
		}
	}
	res, err := cpu.Run(m, f, full)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkResults compares dir's result files with want, byte for byte, and
// checks that dir holds them and the run's list of them, nothing else.
func checkResults(t *testing.T, dir string, want []*backend.Buffer) {
	t.Helper()
	var names []string
	for i, w := range want {
		name := "result" + strconv.Itoa(i) + ".npy"
		names = append(names, name)
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		// tpucc run computes on the default backend (LLVM kernels in f32): its
		// results agree with the reference executor's within the oracle's
		// tolerance, bit for bit only where they are exact.
		if bytes.Equal(got, npyBytes(t, w)) {
			continue
		}
		g, err := backend.ReadNPY(bytes.NewReader(got))
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if err := oracle.Compare(w, g); err != nil {
			t.Errorf("%s holds %s, want %s: %v", name, g, w, err)
		}
	}
	noFiles(t, dir, append(names, manifestName)...)
}

func TestRunOutputDir(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(twoResultSrc))
	out := filepath.Join(dir, "out", "sub") // created, parents too
	tpucc(t, "", "run", model, "--output-dir", out).want(t, 0, "", "")
	checkResults(t, out, reference(t, twoResultSrc, 0))

	tpucc(t, "", "run", "--seed=7", "--output-dir="+out, model).want(t, 0, "", "")
	checkResults(t, out, reference(t, twoResultSrc, 7))
	if bytes.Equal(npyBytes(t, reference(t, twoResultSrc, 7)[0]), npyBytes(t, reference(t, twoResultSrc, 0)[0])) {
		t.Error("seeds 0 and 7 draw the same inputs")
	}
}

// TestRunSomeInputs: given inputs are used as they are, the others drawn exactly as they
// are drawn when no input is given.
func TestRunSomeInputs(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(twoResultSrc))
	wFile := writeNPY(t, dir, "w.npy", npy.Of([]int64{3}, []float32{10, 20, 30}))
	w := backend.FromFloats(cpuType(t, "f32[3]"), 10, 20, 30)
	out := filepath.Join(dir, "out")
	tpucc(t, "", "run", model, "--input", "w="+wFile, "--seed", "3", "--output-dir", out).want(t, 0, "", "")
	checkResults(t, out, reference(t, twoResultSrc, 3, nil, w))

	xFile := writeNPY(t, dir, "x.npy", npy.Of([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6}))
	x := backend.FromFloats(cpuType(t, "f32[2,3]"), 1, 2, 3, 4, 5, 6)
	tpucc(t, "", "run", model, "--input=%x="+xFile, "--input", "w="+wFile).want(t, 0,
		"result0: f32[2,3] = [11.0, 22.0, 33.0, 14.0, 25.0, 36.0]\nresult1: f32[] = 141.0\n", "")
	res := reference(t, twoResultSrc, 0, x, w)
	if res[1].Float64At(0) != 141 {
		t.Errorf("reference sum %v, want 141", res[1].Float64At(0))
	}
}

// cpuType parses a type by way of a one-parameter function.
func cpuType(t *testing.T, typ string) ir.Type {
	t.Helper()
	m, err := tir.Parse("t.tir", []byte("func @t(%a: "+typ+") -> "+typ+" {\n  return %a\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return m.Funcs[0].Params[0].Type
}

func TestRunSummary(t *testing.T) {
	dir := t.TempDir()
	// Division is correctly rounded on every backend, so the exact text
	// holds whichever runs it (exp may differ from the reference in the
	// last place: TestExpf bounds it).
	div := "func @f(%x: f32[2,3]) -> f32[2,3] {\n  %c = constant 3 : f32[2,3]\n  %0 = div %x, %c : f32[2,3]\n  return %0\n}\n"
	model := writeFile(t, dir, "m.tir", []byte(div))
	x := writeNPY(t, dir, "x.npy", npy.Of([]int64{2, 3}, []float32{0, 1, 2, 3, 4, 5}))
	tpucc(t, "", "run", model, "--input", "x="+x).want(t, 0,
		"result0: f32[2,3] = [0.0, 0.33333334, 0.6666667, 1.0, 1.3333334, 1.6666666]\n", "")

	src := `func @f() -> (i32[10], i1[3]) {
  %0 = iota {axis=0} : i32[10]
  %1 = iota {axis=0} : i32[3]
  %c = constant 1 : i32[3]
  %2 = compare %1, %c {dir=ge} : i1[3]
  return %0, %2
}
`
	model = writeFile(t, dir, "n.tir", []byte(src))
	tpucc(t, "", "run", model).want(t, 0,
		"result0: i32[10] = [0, 1, 2, 3, 4, 5, 6, 7, ...] (10 values)\nresult1: i1[3] = [false, true, true]\n", "")
	noFiles(t, dir, "m.tir", "n.tir", "x.npy")
}

// TestRunComplex: complex parameters come from <c8 (and <c16) .npy files,
// results print as (re, im) pairs and are written as numpy complex arrays.
func TestRunComplex(t *testing.T) {
	dir := t.TempDir()
	src := "func @f(%z: c64[3], %x: f32[3]) -> (c64[3], f64[]) {\n  %w = complex %x, %x\n  %p = mul %z, %w\n" +
		"  %k = constant (3.0, 4.0) : c128[]\n  %a = abs %k\n  return %p, %a\n}\n"
	model := writeFile(t, dir, "c.tir", []byte(src))
	z := writeNPY(t, dir, "z.npy", npy.Of([]int64{3}, []complex64{1 + 2i, -1i, 3}))
	x := writeNPY(t, dir, "x.npy", npy.Of([]int64{3}, []float32{1, 2, -0.5}))
	tpucc(t, "", "run", model, "--input", "z="+z, "--input", "x="+x).want(t, 0,
		"result0: c64[3] = [(-1.0, 3.0), (2.0, -2.0), (-1.5, -1.5)]\nresult1: f64[] = 5.0\n", "")
	out := filepath.Join(dir, "out")
	tpucc(t, "", "run", model, "--input", "z="+z, "--input", "x="+x, "--output-dir", out).want(t, 0, "", "")
	a, err := npy.ReadFile(filepath.Join(out, "result0.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := npy.Values[complex64](a); err != nil || fmt.Sprint(got) != "[(-1+3i) (2-2i) (-1.5-1.5i)]" {
		t.Errorf("result0.npy holds %v (%v)", got, err)
	}
}

func TestRunEntry(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(twoFuncSrc))
	a := writeNPY(t, dir, "a.npy", npy.Of([]int64{4}, []float32{1, 2, 3, 4}))
	b := writeNPY(t, dir, "b.npy", npy.Of([]int64{4}, []float32{2, 2, 2, 2}))
	tpucc(t, "", "run", model, "--entry", "g", "--input", "a="+a, "--input", "b="+b).want(t, 0,
		"result0: f32[4] = [4.0, 8.0, 12.0, 16.0]\n", "")
	// Without --entry, @main runs: 2*(x*1)*x.
	tpucc(t, "", "run", model, "--input", "x="+a).want(t, 0, "result0: f32[4] = [2.0, 8.0, 18.0, 32.0]\n", "")
	tpucc(t, "", "run", model, "--entry", "@nope").want(t, exitUsage, "",
		"tpucc run: --entry @nope: "+model+" has no function @nope (it has @g, @main)")
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(expSrc))
	big := writeFile(t, dir, "big.tir", []byte("func @f(%x: f32[100000000000]) -> f32[100000000000] {\n  %0 = exp %x : f32[100000000000]\n  return %0\n}\n"))
	f64 := writeNPY(t, dir, "f64.npy", npy.Of([]int64{3}, []float64{1, 2, 3}))
	f32 := writeNPY(t, dir, "f32.npy", npy.Of([]int64{3, 2}, []float32{1, 2, 3, 4, 5, 6}))
	junk := writeFile(t, dir, "junk.npy", []byte("not numpy"))
	empty := writeFile(t, dir, "empty.npy", nil)
	file := writeFile(t, dir, "file", []byte("x"))
	missing := filepath.Join(dir, "missing.npy")
	limit := strconv.FormatInt(cpu.DefaultMemoryLimit(), 10)
	const usage = "usage: tpucc run [flags] MODEL.tir; 'tpucc help run' lists the flags"
	for _, c := range []struct {
		name string
		args []string
		code int
		line string
	}{
		{"too large", []string{big}, exitProgram,
			big + ":1:9: error: %x needs 400000000000 bytes (f32[100000000000]); the limit is " + limit + " bytes"},
		{"wrong dtype", []string{model, "--input", "x=" + f64}, exitProgram, f64 + ": error: input %x wants f32[2,3], file has f64[3]"},
		{"wrong shape", []string{model, "--input", "x=" + f32}, exitProgram, f32 + ": error: input %x wants f32[2,3], file has f32[3,2]"},
		{"not npy", []string{model, "--input", "x=" + junk}, exitProgram, junk + ": error: not a .npy file (bad magic)"},
		{"empty npy", []string{model, "--input", "x=" + empty}, exitProgram, empty + ": error: empty file, not a .npy file"},
		{"missing npy", []string{model, "--input", "x=" + missing}, exitProgram, missing + ": error: no such file or directory"},
		{"npy is a directory", []string{model, "--input", "x=" + dir}, exitProgram, dir + ": error: is a directory"},
		{"unknown parameter", []string{model, "--input", "y=" + f64}, exitUsage, "tpucc run: --input y: @f has no parameter %y (it has %x)"},
		{"malformed input", []string{model, "--input", f64}, exitUsage, "tpucc run: --input " + f64 + ": want NAME=FILE.npy"},
		{"input twice", []string{model, "--input", "x=" + f64, "--input", "%x=" + f32}, exitUsage, "tpucc run: --input x is given twice"},
		{"bad seed", []string{model, "--seed", "1.5"}, exitUsage, "tpucc run: --seed 1.5: want an integer"},
		{"empty output dir", []string{model, "--output-dir="}, exitUsage, "tpucc run: --output-dir needs a directory name"},
		{"output dir is a file", []string{model, "--output-dir", filepath.Join(file, "sub")}, exitProgram, file + ": error: not a directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out")
			args := append([]string{"run"}, c.args...)
			if c.name != "output dir is a file" && c.name != "empty output dir" {
				args = append(args, "--output-dir", out)
			}
			r := tpucc(t, "", args...)
			r.want(t, c.code, "", c.line)
			if c.code == exitUsage && r.stderr != c.line+"\n"+usage+"\n" {
				t.Errorf("stderr:\n%s", r.stderr)
			}
			noFiles(t, dir, "big.tir", "empty.npy", "f32.npy", "f64.npy", "file", "junk.npy", "m.tir")
		})
	}
}

// TestRunWriteFailure: when one result cannot be written, none is.
func TestRunWriteFailure(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(twoResultSrc))
	out := filepath.Join(dir, "out")
	blocker := filepath.Join(out, "result1.npy")
	if err := os.MkdirAll(blocker, 0o755); err != nil {
		t.Fatal(err)
	}
	tpucc(t, "", "run", model, "--output-dir", out).want(t, exitProgram, "", blocker+": error: is a directory")
	noFiles(t, out, "result1.npy")
}

// TestRunSaveInputs: --save-inputs writes the arguments the run used, given or drawn,
// next to the results, in parameter order.
func TestRunSaveInputs(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(twoResultSrc))
	wFile := writeNPY(t, dir, "w.npy", npy.Of([]int64{3}, []float32{10, 20, 30}))
	out := filepath.Join(dir, "out")
	tpucc(t, "", "run", model, "--input", "w="+wFile, "--seed", "5", "--output-dir", out, "--save-inputs").want(t, 0, "", "")
	x := cpu.RandomInputs(mustParse(t, twoResultSrc).Entry(), 5)[0]
	w := backend.FromFloats(cpuType(t, "f32[3]"), 10, 20, 30)
	for i, want := range []*backend.Buffer{x, w} {
		got, err := os.ReadFile(filepath.Join(out, "arg"+strconv.Itoa(i)+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, npyBytes(t, want)) {
			t.Errorf("arg%d.npy differs from %s", i, want)
		}
	}
	tpucc(t, "", "run", model, "--save-inputs").want(t, 2, "", "tpucc run: --save-inputs needs --output-dir")
}

func mustParse(t *testing.T, src string) *ir.Module {
	t.Helper()
	m, err := tir.Parse("m.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRunBackend: --backend names the backend; an unknown one is a usage
// error listing those there are, and nothing is written.
func TestRunBackend(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(expSrc))
	ref := tpucc(t, "", "run", model, "--seed", "3", "--backend", "reference")
	def := tpucc(t, "", "run", model, "--seed", "3")
	def.want(t, 0, ref.stdout, "")
	out := filepath.Join(dir, "out")
	tpucc(t, "", "run", model, "--backend", "nope", "--output-dir", out).want(t, exitUsage, "",
		`tpucc run: --backend: unknown backend "nope" (have llvm, pjrt, pjrt-gpu, pjrt-tpu, reference)`)
	noFiles(t, dir, "m.tir")
}

// TestRunTime: --time writes one line to stderr naming each compile stage
// (the llvm backend's own stages too, clang or its cache) and the run, and
// leaves stdout as it is without the flag.
func TestRunTime(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(twoResultSrc))
	ms := `[0-9]+\.[0-9] ms`
	for _, c := range []struct {
		backend string
		line    *regexp.Regexp
	}{
		{"llvm", regexp.MustCompile(`^time: passes ` + ms + `, lower ` + ms + `, backend llvm ` + ms +
			` \(llvm-ir ` + ms + `, clang( \(cached\))? ` + ms + `, load ` + ms + `\), run ` + ms + "\n$")},
		{"reference", regexp.MustCompile(`^time: passes ` + ms + `, lower ` + ms + `, backend reference ` + ms + `, run ` + ms + "\n$")},
	} {
		plain := tpucc(t, "", "run", model, "--backend", c.backend)
		r := tpucc(t, "", "run", model, "--time", "--backend", c.backend)
		if r.code != 0 || r.stdout != plain.stdout || !c.line.MatchString(r.stderr) {
			t.Errorf("--backend %s: exit %d, stdout %q (want %q), stderr %q (want %s)", c.backend, r.code, r.stdout, plain.stdout, r.stderr, c.line)
		}
	}
}

// TestRunOutputDirHoldsOneRun: a run into a directory a previous run wrote
// removes what that run wrote and this one did not (result1.npy, arg0.npy
// stayed), leaves files tpucc did not write, and lists its own files in
// tpucc-outputs.txt.
func TestRunOutputDirHoldsOneRun(t *testing.T) {
	dir := t.TempDir()
	two := writeFile(t, dir, "two.tir", []byte(twoResultSrc))
	one := writeFile(t, dir, "one.tir", []byte(expSrc))
	out := filepath.Join(dir, "out")
	tpucc(t, "", "run", two, "--output-dir", out, "--save-inputs").want(t, 0, "", "")
	noFiles(t, out, "arg0.npy", "arg1.npy", "result0.npy", "result1.npy", manifestName)
	// The user's own files, one named like an output.
	writeFile(t, out, "notes.txt", []byte("mine"))
	writeFile(t, out, "result7.npy", []byte("mine"))
	tpucc(t, "", "run", one, "--output-dir", out).want(t, 0, "", "")
	noFiles(t, out, "notes.txt", "result0.npy", "result7.npy", manifestName)
	list, err := os.ReadFile(filepath.Join(out, manifestName))
	if want := "# written by tpucc run: the files of the last run into this directory\nresult0.npy\n"; err != nil || string(list) != want {
		t.Errorf("manifest %q (%v), want %q", list, err, want)
	}
}

// TestRunManifestIsInput: a manifest naming paths or files tpucc does not
// write removes none of them, and one that is not a regular file is an
// error naming it, with nothing written.
func TestRunManifestIsInput(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(expSrc))
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "precious.npy", []byte("mine"))
	writeFile(t, out, "keep.txt", []byte("mine"))
	writeFile(t, out, manifestName, []byte("../precious.npy\nkeep.txt\n/etc/passwd\nresult0.npy/..\n"))
	tpucc(t, "", "run", model, "--output-dir", out).want(t, 0, "", "")
	noFiles(t, out, "keep.txt", "result0.npy", manifestName)
	if _, err := os.Stat(filepath.Join(dir, "precious.npy")); err != nil {
		t.Error(err)
	}
	fifoDir := filepath.Join(dir, "fifo")
	if err := os.Mkdir(fifoDir, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(fifoDir, manifestName)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	tpucc(t, "", "run", model, "--output-dir", fifoDir).want(t, exitProgram, "", fifo+": error: is not a regular file (tpucc lists its outputs there)")
	noFiles(t, fifoDir, manifestName)
}
