package oracle

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	_ "github.com/tpucc/tpucc/backend/llvm" // registers the llvm backend
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

// TestLongSumFigures measures, when TPUCC_LONG_SUM is an element count N,
// the relative error of two f32 sums of N elements on XLA:CPU, the
// reference executor and the llvm backend against the exact sum (float64
// over the same f32 terms): reduce_sum(x*x) of inputs cpu.RandomInputs(@f,
// 1) and the sum of an f32 iota. It is the figure of issue 29 item 9, at
// 10^8 (several GB), so it is not part of the ordinary run:
//
//	TPUCC_LONG_SUM=100000000 go test ./internal/oracle -run TestLongSumFigures -v
//
// It fails when a side is off by more than 1e-5 relative.
func TestLongSumFigures(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("TPUCC_LONG_SUM"))
	if err != nil || n <= 0 {
		t.Skip("set TPUCC_LONG_SUM to an element count to measure")
	}
	src := fmt.Sprintf("func @f(%%x: f32[%d]) -> (f32[], f32[]) {\n  %%s = mul %%x, %%x : f32[%d]\n  %%a = reduce_sum %%s {axes=[0]} : f32[]\n"+
		"  %%i = iota {axis=0} : f32[%d]\n  %%b = reduce_sum %%i {axes=[0]} : f32[]\n  return %%a, %%b\n}\n", n, n, n)
	m, err := tir.Parse("longsum.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c := &check{name: "longsum", key: "longsum", m: m, inputs: cpu.RandomInputs(m.Entry(), 1)}
	if err := c.prepare(); err != nil {
		t.Fatal(err)
	}
	exact := []float64{0, 0}
	for _, v := range c.inputs[0].Float32s() {
		exact[0] += float64(v * v)
	}
	for i := range n {
		exact[1] += float64(float32(i))
	}
	sides := map[string][]*backend.Buffer{"reference": c.want}
	res := runCases(t, harness(t), []xlacheck.Case{c.xlaCase()})
	if !res[0].OK {
		t.Fatalf("XLA: %s: %s", res[0].Stage, res[0].Error)
	}
	for _, a := range res[0].Outputs {
		b, err := bufferOf(a)
		if err != nil {
			t.Fatal(err)
		}
		sides["XLA:CPU"] = append(sides["XLA:CPU"], b)
	}
	sides["llvm"] = runLLVM(t, src, c.inputs)
	for _, side := range []string{"XLA:CPU", "reference", "llvm"} {
		for i, name := range []string{"sum(x*x)", "sum(iota)"} {
			got := sides[side][i].Float64At(0)
			rel := math.Abs(got-exact[i]) / exact[i]
			t.Logf("n=%d %-9s %-9s = %.8g (exact %.10g) relative error %.2e", n, side, name, got, exact[i], rel)
			if rel > 1e-5 {
				t.Errorf("%s: %s is off by %.2e relative", side, name, rel)
			}
		}
	}
}

// runLLVM compiles src for the cpu target and runs it on the llvm backend.
func runLLVM(t *testing.T, src string, in []*backend.Buffer) []*backend.Buffer {
	m, err := tir.Parse("longsum.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	exe, _, err := engine.Compile(m, engine.Config{Target: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := backend.Lookup("llvm")
	if err != nil {
		t.Fatal(err)
	}
	x, err := b.Compile(&backend.Program{Module: exe.Module, Entry: exe.Entry, Target: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
