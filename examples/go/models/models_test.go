package models_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/examples/go/models"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/oracle"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/tensor"
)

// model adapts a Go model to a list of arguments in the .tir parameter order.
type model func(args []*tensor.Tensor) *tensor.Tensor

var cases = []struct {
	tir   string // under examples/
	model model
	fn    any // the model itself, for compile.New
}{
	{"mlp.tir", func(a []*tensor.Tensor) *tensor.Tensor { return models.MLP(a[0], a[1], a[2], a[3]) }, models.MLP},
	{"transformer_block.tir", func(a []*tensor.Tensor) *tensor.Tensor {
		return models.TransformerBlock(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11])
	}, models.TransformerBlock},
	{"moe_dense.tir", func(a []*tensor.Tensor) *tensor.Tensor { return models.MoEDense(a[0], a[1], a[2], a[3], a[4]) }, models.MoEDense},
}

// within checks got (eager ops, the traced program, the compiled function;
// the last two run on the default backends, LLVM kernels in f32) against want
// (the reference executor on the .tir program) within the oracle's tolerance
// for the dtype: the one every backend is held to against the reference.
func within(t *testing.T, what string, got, want *backend.Buffer) {
	t.Helper()
	if err := oracle.Compare(want, got); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Each Go model, run eagerly, gives the numbers of its .tir twin run by the
// reference executor on the same inputs; traced, it records a program that
// gives them too.
func TestModelsMatchTIR(t *testing.T) {
	for _, c := range cases {
		t.Run(c.tir, func(t *testing.T) {
			path := filepath.Join("..", "..", c.tir)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := tir.Parse(path, src)
			if err != nil {
				t.Fatal(err)
			}
			f := m.Entry()
			inputs := cpu.RandomInputs(f, 1)
			want, err := cpu.Run(m, f, inputs)
			if err != nil {
				t.Fatal(err)
			}

			args := make([]*tensor.Tensor, len(inputs))
			for i, in := range inputs {
				args[i] = tensor.FromBuffer(in)
			}
			eager := c.model(args)
			within(t, "eager", eager.Buffer(), want[0])

			names := make([]string, len(f.Params))
			types := make([]ir.Type, len(f.Params))
			for i, p := range f.Params {
				names[i], types[i] = p.Name, p.Type
			}
			traced, err := tensor.Trace(f.Name, names, types, func(params []*tensor.Tensor) ([]*tensor.Tensor, error) {
				return []*tensor.Tensor{c.model(params)}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := firstLine(ir.PrintFunc(traced.Funcs[0])), firstLine(ir.PrintFunc(f)); got != want {
				t.Errorf("traced signature\n%s\nwant\n%s", got, want)
			}
			res, err := cpu.Run(traced, traced.Funcs[0], inputs)
			if err != nil {
				t.Fatal(err)
			}
			within(t, "traced", res[0], want[0])

			// Compiled: compile.New over the same model, called twice with these
			// shapes: the second call is a cache hit.
			fn, err := compile.New(c.fn, compile.CacheDir(""))
			if err != nil {
				t.Fatal(err)
			}
			callArgs := make([]any, len(args))
			for i, a := range args {
				callArgs[i] = a
			}
			for range 2 {
				out, err := fn.Call(callArgs...)
				if err != nil {
					t.Fatal(err)
				}
				within(t, "compiled", out[0].Buffer(), want[0])
			}
			if st := fn.Stats(); st.Compiles != 1 || st.Hits != 1 {
				t.Errorf("compiled stats %+v, want 1 compile and 1 hit", st)
			}
		})
	}
}

// The MoE layer written in Go on tensor, traced, is rewritten by moe-route
// like its .tir twin: one layer matched, three ragged_dots in the program that
// compile.Func runs (TestModelsMatchTIR checks its numbers).
func TestTracedMoEIsRouted(t *testing.T) {
	shapes := [][]int64{{32, 128}, {128, 8}, {8, 128, 256}, {8, 128, 256}, {8, 256, 128}}
	names := make([]string, len(shapes))
	types := make([]ir.Type, len(shapes))
	for i, s := range shapes {
		names[i], types[i] = fmt.Sprintf("a%d", i), ir.Tensor(ir.F32, s...)
	}
	m, err := tensor.Trace("moe", names, types, func(p []*tensor.Tensor) ([]*tensor.Tensor, error) {
		return []*tensor.Tensor{models.MoEDense(p[0], p[1], p[2], p[3], p[4])}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var st passes.Stats
	exe, _, err := engine.Compile(m, engine.Config{Passes: passes.Options{Stats: &st}})
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Get("moe-route", "combine-dot"); n != 1 {
		t.Errorf("moe-route matched %d layers, want 1\n%s", n, ir.PrintFunc(exe.Entry))
	}
	if n := strings.Count(ir.PrintFunc(exe.Entry), "= ragged_dot "); n != 3 {
		t.Errorf("%d ragged_dots, want 3", n)
	}
}
