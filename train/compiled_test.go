package train_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/lower/stablehlo"
	"github.com/tpucc/tpucc/tensor"
	"github.com/tpucc/tpucc/train"
)

// fixed is an engine program that is one module, whatever the arguments.
type fixed struct{ m *ir.Module }

func (p fixed) Trace([]engine.Arg) (*ir.Module, error) { return p.m, nil }
func (p fixed) Eager([]engine.Arg) ([]*backend.Buffer, error) {
	return nil, errors.New("the step is never run eagerly")
}

// TestCompiledStepDonated: the AdamW step compiles to one executable on the cpu device
// (the llvm backend) and gives the reference executor's numbers; the donated parameter
// and state are consumed by each call. (The llvm backend writes the new values over the
// donated arguments' storage: backend/llvm/overwrite.go.)
func TestCompiledStepDonated(t *testing.T) {
	m, err := tir.Parse("tiny.tir", []byte(tinyLoss))
	if err != nil {
		t.Fatal(err)
	}
	sm, err := train.Step(m, 1, train.NewAdamW(0.1))
	if err != nil {
		t.Fatal(err)
	}
	fn, err := engine.NewFunction(fixed{sm}, engine.Options{Name: "step", Device: "cpu", Donate: train.NewAdamW(0.1).Donate(1),
		Cache: engine.NewCache("", engine.CacheOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.FromSlice([]float32{1, -2, 0.5}, 3).Buffer()
	n := tensor.FromSlice([]int32{7}).Buffer()
	zeros := func() *backend.Buffer { return tensor.FromSlice([]float32{0, 0, 0}, 3).Buffer() }
	cur := []*backend.Buffer{tensor.FromSlice([]float32{0.3, 0.2, -0.1}, 3).Buffer(), zeros(), zeros()}
	ref := append([]*backend.Buffer{}, tensor.FromSlice([]float32{0.3, 0.2, -0.1}, 3).Buffer(), zeros(), zeros())
	for step := range 3 {
		count := tensor.FromSlice([]int32{int32(step)}).Buffer()
		want, err := cpu.Run(sm, sm.Funcs[0], append(append([]*backend.Buffer{}, ref...), count, x, n))
		if err != nil {
			t.Fatal(err)
		}
		var args []engine.Arg
		for _, b := range append(append([]*backend.Buffer{}, cur...), count, x, n) {
			args = append(args, engine.TensorArg(b))
		}
		got, err := fn.Call(args)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			g, w := tensor.FromBuffer(got[i]).Float32s(), tensor.FromBuffer(want[i]).Float32s()
			for j := range w {
				if math.Abs(float64(g[j]-w[j])) > 1e-6 {
					t.Fatalf("step %d result %d: %v, the reference executor's %v", step, i, g, w)
				}
			}
		}
		for i, b := range cur {
			if b.Donated() == "" {
				t.Errorf("step %d: argument %d was donated but is not marked consumed", step, i)
			}
		}
		cur, ref = got[1:], want[1:]
	}
}

// TestStepAliasesDonated: lowered with the parameters and state donated, each donated
// argument is aliased to its own new value (XLA then updates it in place): the step's
// results follow its arguments' order, after the loss.
func TestStepAliasesDonated(t *testing.T) {
	src := "func @loss(%a: f32[2], %b: f32[3], %x: f32[3]) -> f32[] {\n" +
		"  %p = mul %b, %x\n  %s = reduce_sum %p {axes=[0]} : f32[]\n" +
		"  %q = reduce_sum %a {axes=[0]} : f32[]\n  %l = add %s, %q\n  return %l\n}\n"
	m, err := tir.Parse("two.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sm, err := train.Step(m, 2, train.NewAdamW(1e-3))
	if err != nil {
		t.Fatal(err)
	}
	text, err := stablehlo.Lower(sm, stablehlo.Options{Donate: train.NewAdamW(1e-3).Donate(2)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "func.func public @main") || strings.Contains(line, "func.func public @step") {
			got = append(got, line)
		}
	}
	if len(got) != 1 {
		t.Fatalf("no single entry in\n%s", text)
	}
	for i, want := range []string{"%arg0: tensor<2xf32> {tf.aliasing_output = 1 : i32}", "%arg1: tensor<3xf32> {tf.aliasing_output = 2 : i32}",
		"%arg2: tensor<2xf32> {tf.aliasing_output = 3 : i32}", "%arg3: tensor<2xf32> {tf.aliasing_output = 4 : i32}",
		"%arg4: tensor<3xf32> {tf.aliasing_output = 5 : i32}", "%arg5: tensor<3xf32> {tf.aliasing_output = 6 : i32}"} {
		if !strings.Contains(got[0], want) {
			t.Errorf("argument %d: %q lacks %q", i, got[0], want)
		}
	}
}
