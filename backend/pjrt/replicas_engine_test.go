package pjrt

import (
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/frontend/stablehlo"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// replicasTIR runs as four replicas: a sum and a gather over all of them,
// a max within pairs given out of order, and arithmetic on a collective's
// result.
const replicasTIR = `replicas = 4

func @f(%x: f32[2,3]) -> (f32[2,3], f32[8,3], f32[2,3], f32[2,3]) {
  %s = all_reduce %x {groups=[[0,1,2,3]], kind=sum} : f32[2,3]
  %g = all_gather %x {dim=0, groups=[[0,1,2,3]]} : f32[8,3]
  %m = all_reduce %x {groups=[[0,2],[3,1]], kind=max} : f32[2,3]
  %y = mul %s, %x
  return %s, %g, %m, %y
}
`

// replicasMLIR is the StableHLO a pmap over four devices was lowered to
// (mhlo.num_replicas = 4, replica groups without a channel).
const replicasMLIR = `module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 4 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32> {jax.result_info = "[0]"}, tensor<8x3xf32> {jax.result_info = "[1]"}) {
    %0 = "stablehlo.all_reduce"(%arg0) <{replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %3 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %3 : tensor<f32>
    }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = "stablehlo.all_gather"(%arg0) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}> : (tensor<2x3xf32>) -> tensor<8x3xf32>
    %2 = stablehlo.multiply %0, %arg0 : tensor<2x3xf32>
    return %2, %1 : tensor<2x3xf32>, tensor<8x3xf32>
  }
}
`

// replicaInput is replica r's argument: halves, so that every sum is exact
// in any order.
func replicaInput(r, j int) float64 { return float64(10*r) + float64(j)/2 - 1 }

// growingBackend is the backend as the pjrt opener makes it when
// TPUCC_PJRT_OPTIONS sets no cpu_device_count: a program needing more
// devices than its client's gets a client of that many (forDevices).
func growingBackend(t *testing.T) *Backend {
	b := &Backend{c: cpuClient(t), name: BackendName, grow: true}
	t.Cleanup(func() {
		for _, c := range b.meshed {
			c.Close()
		}
	})
	return b
}

// TestReplicasRun: a program of four replicas, from .tir and imported from
// .mlir, compiled through engine.Compile and run on four XLA:CPU devices (pjrt)
// and on the reference backend, its argument carrying the replicas as a
// leading axis, gives every replica's results of the reference executor's
// 4 × 1 process grid (cpu.RunGrid) run on the parsed program, bit for bit,
// stacked along a leading axis.
func TestReplicasRun(t *testing.T) {
	pb := growingBackend(t)
	for _, c := range []struct {
		name  string
		parse func() (*ir.Module, error)
		first string // replica 1's first result: the sum over all four, or it times x
	}{
		{"tir", func() (*ir.Module, error) { return tir.Parse("r.tir", []byte(replicasTIR)) },
			"f32[2,3] [[56.0, 58.0, 60.0], [62.0, 64.0, 66.0]]"},
		{"mlir", func() (*ir.Module, error) { return stablehlo.Parse("r.mlir", []byte(replicasMLIR)) },
			"f32[2,3] [[504.0, 551.0, 600.0], [651.0, 704.0, 759.0]]"},
	} {
		want := replicaGrid(t, c.parse)
		if got := want[1][0].String(); got != c.first {
			t.Errorf("%s: the grid's first result in replica 1 is %s, want %s", c.name, got, c.first)
		}
		for _, b := range []backend.Backend{pb, cpu.Reference{}} {
			m, err := c.parse()
			if err != nil {
				t.Fatal(err)
			}
			exe, _, err := engine.Compile(m, engine.Config{Backend: b})
			if err != nil {
				t.Fatalf("%s on %s: %v", c.name, b.Name(), err)
			}
			if !strings.Contains(exe.HLO, "mhlo.num_replicas = 4 : i32") {
				t.Errorf("%s: the StableHLO does not say four replicas:\n%s", c.name, exe.HLO)
			}
			x := backend.New(ir.Tensor(ir.F32, 4, 2, 3))
			for i := range 24 {
				x.SetFloat64(i, replicaInput(i/6, i%6))
			}
			got, err := exe.Run([]*backend.Buffer{x})
			if err != nil {
				t.Fatalf("%s on %s: %v", c.name, b.Name(), err)
			}
			if len(got) != len(want[0]) {
				t.Fatalf("%s on %s: %d results, want %d", c.name, b.Name(), len(got), len(want[0]))
			}
			for i, g := range got {
				per := want[0][i].Type()
				if wt := ir.Tensor(per.DType, append([]int64{4}, per.Dims()...)...); g.Type().String() != wt.String() {
					t.Errorf("%s on %s: result %d is %s, want %s", c.name, b.Name(), i, g.Type(), wt)
					continue
				}
				n := len(g.Bytes()) / 4
				for r := range 4 {
					if w := want[r][i].Bytes(); !slices.Equal(g.Bytes()[r*n:(r+1)*n], w) {
						t.Errorf("%s on %s: replica %d result %d differs from the grid's %s (all: %s)", c.name, b.Name(), r, i, want[r][i], g)
					}
				}
			}
		}
	}
}

// replicaGrid runs the parsed program on the reference executor's 4 × 1
// grid, replica r with replicaInput(r, ·): want[r] is replica r's results.
func replicaGrid(t *testing.T, parse func() (*ir.Module, error)) [][]*backend.Buffer {
	m, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	f := m.Entry()
	fs := make([][]*ir.Func, 4)
	args := make([][][]*backend.Buffer, 4)
	for r := range 4 {
		x := backend.New(f.Params[0].Type)
		for j := range 6 {
			x.SetFloat64(j, replicaInput(r, j))
		}
		fs[r], args[r] = []*ir.Func{f}, [][]*backend.Buffer{{x}}
	}
	out, err := cpu.RunGrid(m, fs, args)
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]*backend.Buffer, 4)
	for r := range want {
		want[r] = out[r][0]
	}
	return want
}

// TestReplicasWrongArgument: an argument without a leading axis of the
// replicas is an error naming it, on both backends.
func TestReplicasWrongArgument(t *testing.T) {
	pb := growingBackend(t)
	for _, c := range []struct {
		b    backend.Backend
		want string
	}{
		{pb, "pjrt: @f: argument 0 is f32[2,3], but a program of 4 replicas takes f32[4,2,3] (f32[2,3] for each replica)"},
		{cpu.Reference{}, "@f: argument 0 is f32[2,3], but a program of 4 replicas takes f32[4,2,3] (f32[2,3] for each replica)"},
	} {
		m, err := tir.Parse("r.tir", []byte(replicasTIR))
		if err != nil {
			t.Fatal(err)
		}
		exe, _, err := engine.Compile(m, engine.Config{Backend: c.b})
		if err != nil {
			t.Fatal(err)
		}
		_, err = exe.Run([]*backend.Buffer{backend.New(ir.Tensor(ir.F32, 2, 3))})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.b.Name(), err, c.want)
		}
	}
}
