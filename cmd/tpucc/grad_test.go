package main

import (
	"os"

	"github.com/tpucc/tpucc/internal/npy"
	"path/filepath"
	"testing"
)

const gradSrc = `func @main(%x: f32[3], %w: f32[3], %n: i32[]) -> (f32[], i32[]) {
  %y = mul %x, %w
  %s = reduce_sum %y {axes=[0]}
  %t = tanh %s
  return %t, %n
}
`

const gradWant = `func @main_vjp(%x: f32[3], %w: f32[3], %n: i32[], %ct0: f32[]) -> (f32[], i32[], f32[3], f32[3]) {
  %y = mul %x, %w : f32[3]
  %s = reduce_sum %y {axes=[0]} : f32[]
  %t = tanh %s : f32[]
  %0 = constant 1.0 : f32[]
  %1 = mul %t, %t : f32[]
  %2 = sub %0, %1 : f32[]
  %3 = mul %ct0, %2 : f32[]
  %4 = broadcast %3 {dims=[]} : f32[3]
  %5 = mul %4, %w : f32[3]
  %6 = mul %4, %x : f32[3]
  return %t, %n, %5, %6
}
`

func TestGrad(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "m.tir", []byte(gradSrc))
	tpucc(t, "", "grad", model).want(t, 0, gradWant, "")
	tpucc(t, gradSrc, "grad", "-").want(t, 0, gradWant, "")

	out := filepath.Join(dir, "vjp.tir")
	tpucc(t, "", "grad", model, "-o", out).want(t, 0, "", "")
	got, err := os.ReadFile(out)
	if err != nil || string(got) != gradWant {
		t.Fatalf("-o wrote %q (%v), want\n%s", got, err, gradWant)
	}
	// The output is a program: it checks, formats to itself, and runs.
	tpucc(t, "", "check", out).want(t, 0, "", "")
	tpucc(t, "", "fmt", out).want(t, 0, gradWant, "")
	// x=[1,2,3], w=0, ct0=2: tanh'(0)=1, so d/dx = 2w = 0 and d/dw = 2x.
	args := []string{"run", out,
		"--input", "x=" + writeNPY(t, dir, "x.npy", npy.Of([]int64{3}, []float32{1, 2, 3})),
		"--input", "w=" + writeNPY(t, dir, "w.npy", npy.Of([]int64{3}, []float32{0, 0, 0})),
		"--input", "n=" + writeNPY(t, dir, "n.npy", npy.Of([]int64{}, []int32{3})),
		"--input", "ct0=" + writeNPY(t, dir, "ct.npy", npy.Of([]int64{}, []float32{2}))}
	tpucc(t, "", args...).want(t, 0, "result0: f32[] = 0.0\nresult1: i32[] = 3\nresult2: f32[3] = [0.0, 0.0, 0.0]\nresult3: f32[3] = [2.0, 4.0, 6.0]\n", "")
}

func TestGradDims(t *testing.T) {
	src := "func @f(%x: f32[B,4]) -> f32[B,4] {\n  %y = exp %x\n  return %y\n}\n"
	tpucc(t, src, "grad", "-").want(t, exitProgram, "",
		"<stdin>:1:9: error: cannot differentiate @f: parameter %x has the symbolic type f32[B,4]; give its sizes (--dim)")
	tpucc(t, src, "grad", "-", "--dim", "B=2").want(t, 0, `func @f_vjp(%x: f32[2,4], %ct0: f32[2,4]) -> (f32[2,4], f32[2,4]) {
  %y = exp %x : f32[2,4]
  %0 = mul %ct0, %y : f32[2,4]
  return %y, %0
}
`, "")
}

func TestGradErrors(t *testing.T) {
	dir := t.TempDir()
	fusion := "func @f(%x: f32[4]) -> f32[4] {\n  %y = fusion %x {kind=loop} : f32[4] (%p: f32[4]) {\n    %e = exp %p : f32[4]\n    return %e\n  }\n  return %y\n}\n"
	model := writeFile(t, dir, "fused.tir", []byte(fusion))
	out := filepath.Join(dir, "out.tir")
	tpucc(t, "", "grad", model, "-o", out).want(t, exitProgram, "",
		model+":2:3: error: cannot differentiate fusion: autodiff runs on unfused IR, before the fuse pass")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed grad left %s behind (%v)", out, err)
	}
	tpucc(t, gradSrc, "grad", "-", "--entry", "nope").want(t, exitUsage, "",
		"tpucc grad: --entry nope: <stdin> has no function @nope (it has @main)")
	tpucc(t, "func @f(%x: f32[2]) -> f32[2] {\n  %y = exp %q\n  return %y\n}\n", "grad", "-").want(t, exitProgram, "",
		"<stdin>:2:12: error: undefined value %q")
}
