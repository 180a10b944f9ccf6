package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/internal/npy"
)

// staticSym is symSrc with B=2 and S=3 written in.
var staticSym = strings.NewReplacer("B,", "2,", "S,", "3,", "S]", "3]").Replace(symSrc)

// TestRunDim: run binds symbolic dimensions from --dim and from the inputs' shapes, and
// then computes what the program written with those sizes computes.
func TestRunDim(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(symSrc))
	out := filepath.Join(dir, "out")

	tpucc(t, "", "run", model, "--dim", "B=2", "--dim=S=3", "--seed", "4", "--output-dir", out).want(t, 0, "", "")
	checkResults(t, out, reference(t, staticSym, 4))

	// %x's file gives B and S; %w is drawn as f32[3,4].
	xFile := writeNPY(t, dir, "x.npy", npy.Of([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6}))
	x := backend.FromFloats(cpuType(t, "f32[2,3]"), 1, 2, 3, 4, 5, 6)
	tpucc(t, "", "run", model, "--input", "x="+xFile, "--seed", "4", "--output-dir", out).want(t, 0, "", "")
	checkResults(t, out, reference(t, staticSym, 4, x))

	// %w's file gives S; --dim gives B; the two agree with a --dim S that repeats it.
	wFile := writeNPY(t, dir, "w.npy", npy.Of([]int64{3, 4}, make([]float32, 12)))
	tpucc(t, "", "run", model, "--input", "w="+wFile, "--dim", "B=2", "--dim", "S=3").want(t, 0,
		"result0: f32[2,4] = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]\n", "")
}

// TestRunDimErrors: sizes that disagree, a symbol nothing gives a size, and inputs that
// do not fit are errors naming the symbol and the parameter; nothing is written.
func TestRunDimErrors(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(symSrc))
	x23 := writeNPY(t, dir, "x.npy", npy.Of([]int64{2, 3}, make([]float32, 6)))
	w54 := writeNPY(t, dir, "w.npy", npy.Of([]int64{5, 4}, make([]float32, 20)))
	w35 := writeNPY(t, dir, "w35.npy", npy.Of([]int64{3, 5}, make([]float32, 15)))
	x6 := writeNPY(t, dir, "x6.npy", npy.Of([]int64{6}, make([]float32, 6)))
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		code int
		line string
	}{
		{[]string{"--input", "x=" + x23, "--dim", "S=5"}, exitProgram,
			x23 + ": error: dimension S of %x (f32[B,S]) has two sizes: --dim gives it 5, and input %x (" + x23 + ", f32[2,3]) gives it 3"},
		{[]string{"--input", "x=" + x23, "--input", "w=" + w54}, exitProgram,
			w54 + ": error: dimension S of %w (f32[S,4]) has two sizes: input %x (" + x23 + ", f32[2,3]) gives it 3, and input %w (" + w54 + ", f32[5,4]) gives it 5"},
		{[]string{"--dim", "B=2"}, exitProgram,
			model + ":1:9: error: run needs a size for dimension S of %x (f32[B,S]): give --dim S=SIZE or --input x=FILE.npy"},
		{[]string{"--input", "w=" + w35, "--dim", "B=2"}, exitProgram,
			w35 + ": error: input %w wants f32[3,4], file has f32[3,5]"},
		{[]string{"--input", "w=" + w54, "--dim", "S=5"}, exitProgram,
			model + ":1:9: error: run needs a size for dimension B of %x (f32[B,S]): give --dim B=SIZE or --input x=FILE.npy"},
		{[]string{"--input", "x=" + x6}, exitProgram,
			x6 + ": error: input %x wants f32[B,S], file has f32[6]"},
		{[]string{"--dim", "C=2", "--input", "x=" + x23}, exitUsage,
			"tpucc run: --dim C=2: " + model + " has no dimension C (it has B, S)"},
		{[]string{"--dim", "B"}, exitUsage,
			"tpucc run: --dim B: want NAME=SIZE, NAME a dimension symbol such as B"},
	} {
		args := append([]string{"run", model, "--output-dir", out}, c.args...)
		tpucc(t, "", args...).want(t, c.code, "", c.line)
	}
	noFiles(t, dir, "m.tir", "w.npy", "w35.npy", "x.npy", "x6.npy")
}
