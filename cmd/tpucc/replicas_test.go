package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/internal/oracle"
	"github.com/tpucc/tpucc/ir"
)

// replicaSrc runs as four replicas: a sum over all of them, and a gather.
const replicaSrc = `replicas = 4

func @f(%x: f32[2,3]) -> (f32[2,3], f32[8,3]) {
  %s = all_reduce %x {groups=[[0,1,2,3]], kind=sum} : f32[2,3]
  %g = all_gather %x {dim=0, groups=[[0,1,2,3]]} : f32[8,3]
  return %s, %g
}
`

// replicaMLIR is the same program as StableHLO of four replicas.
const replicaMLIR = `module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 4 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<8x3xf32>) {
    %0 = "stablehlo.all_reduce"(%arg0) <{replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = "stablehlo.all_gather"(%arg0) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>}> : (tensor<2x3xf32>) -> tensor<8x3xf32>
    return %0, %1 : tensor<2x3xf32>, tensor<8x3xf32>
  }
}
`

// TestRunReplicas: tpucc run takes, as JAX's pmap does, each input with a
// leading axis of the replicas (replica r gets slice r) and writes each
// result with one: from .tir and from .mlir, on four XLA:CPU devices
// (--device pjrt) and on the reference executor's process grid, the same
// files, whose values are the sum over the replicas in every replica and
// the replicas' inputs gathered in every replica. The process's PJRT
// client must be opened without a cpu_device_count (it then makes one of
// four devices for the replicas) or with at least four.
func TestRunReplicas(t *testing.T) {
	dir := t.TempDir()
	tirFile := writeFile(t, dir, "r.tir", []byte(replicaSrc))
	mlirFile := writeFile(t, dir, "r.mlir", []byte(replicaMLIR))
	x := backend.New(ir.Tensor(ir.F32, 4, 2, 3))
	for i := range 24 {
		x.SetFloat64(i, float64(i))
	}
	xFile := filepath.Join(dir, "x.npy")
	if err := backend.WriteNPYFile(xFile, x); err != nil {
		t.Fatal(err)
	}
	var first map[string][]byte
	for _, c := range [][]string{
		{tirFile, "x", "--device", "pjrt"},
		{tirFile, "x", "--backend", "reference"},
		{mlirFile, "arg0", "--device", "pjrt"},
		{mlirFile, "arg0", "--backend", "reference"},
	} {
		out := filepath.Join(dir, "out")
		tpucc(t, "", "run", c[0], "--input", c[1]+"="+xFile, c[2], c[3], "--output-dir", out).want(t, 0, "", "")
		files := map[string][]byte{}
		for _, name := range []string{"result0.npy", "result1.npy", "tpucc-outputs.txt"} {
			data, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				t.Fatal(err)
			}
			files[name] = data
		}
		if first == nil {
			first = files
			checkReplicaResults(t, out)
			continue
		}
		for name, data := range files {
			if string(data) != string(first[name]) {
				t.Errorf("%s %s %s: %s differs from the first run's", filepath.Base(c[0]), c[2], c[3], name)
			}
		}
	}
}

func checkReplicaResults(t *testing.T, out string) {
	t.Helper()
	for name, want := range map[string]string{
		"result0.npy": "f32[4,2,3] [[[36.0, 40.0, 44.0], [48.0, 52.0, 56.0]], [[36.0, 40.0, 44.0], [48.0, 52.0, 56.0]], " +
			"[[36.0, 40.0, 44.0], [48.0, 52.0, 56.0]], [[36.0, 40.0, 44.0], [48.0, 52.0, 56.0]]]",
	} {
		b, err := backend.ReadNPYFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	b, err := backend.ReadNPYFile(filepath.Join(out, "result1.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if b.Type().String() != "f32[4,8,3]" {
		t.Fatalf("result1.npy is %s, want f32[4,8,3]", b.Type())
	}
	for r := range 4 { // every replica holds the 24 inputs in replica order
		for i := range 24 {
			if got := b.Float64At(r*24 + i); got != float64(i) {
				t.Fatalf("result1.npy: replica %d element %d is %v, want %d", r, i, got, i)
			}
		}
	}
}

// TestRunReplicasErrors: an input whose leading axis is not one per
// replica is refused by its file's name, and the llvm backend (the
// default) refuses a program of several replicas by name, exit status 1
// and no output.
func TestRunReplicasErrors(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "r.tir", []byte(replicaSrc))
	for _, typ := range []ir.Type{ir.Tensor(ir.F32, 3, 2, 3), ir.Tensor(ir.F32, 2, 3), ir.Scalar(ir.F32)} {
		bad := filepath.Join(dir, "bad.npy")
		if err := backend.WriteNPYFile(bad, backend.New(typ)); err != nil {
			t.Fatal(err)
		}
		tpucc(t, "", "run", in, "--input", "x="+bad, "--device", "pjrt").want(t, 1, "",
			bad+": error: input %x: @f runs as 4 replicas, so its leading axis is one per replica: want f32[4,2,3], file has "+typ.String())
	}
	out := filepath.Join(dir, "out")
	tpucc(t, "", "run", in, "--output-dir", out).want(t, 1, "",
		in+": error: backend llvm: @f runs as 4 replicas, and the llvm backend runs one: the pjrt and reference backends run replicas")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s: %v", out, err)
	}
}

// TestBuildExecutableReplicas: an executable file holds a program of one
// replica, so build --emit=executable refuses one of several by name,
// writing nothing.
func TestBuildExecutableReplicas(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "r.tir", []byte(replicaSrc))
	out := filepath.Join(dir, "r.pjrt")
	tpucc(t, "", "build", in, "--emit=executable", "-o", out).want(t, 1, "",
		in+": error: @f runs as 4 replicas, and an executable file holds a program of one: tpucc run runs the program itself")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed build left %s: %v", out, err)
	}
}

// TestRunReplicasJAX: testdata/jax-pmap/collectives/model.tir is, per
// replica, what tools/jaxexport/pmap.py's function computes under jax.pmap
// over four devices (psum, a tiled all_gather, pmax, a ring ppermute and
// axis_index); run on four XLA:CPU devices and on the reference grid with
// JAX's input, it gives JAX's stacked results within the oracle's
// tolerance (f32: 1e-5; u32 exactly).
func TestRunReplicasJAX(t *testing.T) {
	d := filepath.Join("..", "..", "testdata", "jax-pmap", "collectives")
	for _, on := range [][]string{{"--device", "pjrt"}, {"--backend", "reference"}} {
		out := t.TempDir()
		tpucc(t, "", "run", filepath.Join(d, "model.tir"), "--input", "x="+filepath.Join(d, "arg0.npy"),
			on[0], on[1], "--output-dir", out).want(t, 0, "", "")
		wants, _ := filepath.Glob(filepath.Join(d, "result*.npy"))
		if len(wants) != 5 {
			t.Fatalf("want JAX's 5 results in %s, found %d", d, len(wants))
		}
		for _, w := range wants {
			want := readNPYFile(t, w)
			got := readNPYFile(t, filepath.Join(out, filepath.Base(w)))
			if err := oracle.CompareWithin(want, got, oracle.For(want.Type().DType)); err != nil {
				t.Errorf("%s %s: %s: %v", on[0], on[1], filepath.Base(w), err)
			}
		}
	}
}
