package main

import (
	enc "encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/pjrt"
	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/internal/oracle"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

// jaxSrc is StableHLO as jax.jit(f).lower(x, y).as_text(debug_info=True)
// prints it for f(x, y) = (x * y + 1, jnp.sum(x)): locations, result
// attributes and JAX's value names.
const jaxSrc = `#loc1 = loc("x")
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32> loc("x"), %arg1: tensor<3xf32> loc("y")) -> (tensor<3xf32> {jax.result_info = "result[0]"}, tensor<f32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<3xf32> loc(#loc5)
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32> loc(#loc)
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<3xf32> loc(#loc6)
    %2 = stablehlo.add %0, %1 : tensor<3xf32> loc(#loc6)
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32> loc(#loc)
    %3 = stablehlo.reduce(%arg0 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32> loc(#loc7)
    return %2, %3 : tensor<3xf32>, tensor<f32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc5 = loc("/tmp/f.py":3:11 to :16)
#loc6 = loc("/tmp/f.py":3:11 to :20)
#loc7 = loc("/tmp/f.py":3:22 to :32)
`

func f32NPY(vals ...float32) *npy.Array {
	data := make([]byte, 4*len(vals))
	for i, v := range vals {
		enc.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
	}
	return &npy.Array{DType: "f32", Shape: []int64{int64(len(vals))}, Data: data}
}

// TestMlirRun: a .mlir file runs with its parameters named as JAX names them.
func TestMlirRun(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "f.mlir", []byte(jaxSrc))
	x := writeNPY(t, dir, "x.npy", f32NPY(1, 2, 3))
	y := writeNPY(t, dir, "y.npy", f32NPY(0.5, -1, 4))
	tpucc(t, "", "run", model, "--input", "arg0="+x, "--input", "arg1="+y).want(t, 0,
		"result0: f32[3] = [1.5, -1.0, 13.0]\nresult1: f32[] = 6.0\n", "")
	tpucc(t, "", "check", model).want(t, 0, "", "")
}

// TestMlirRefused: an op tpucc lacks is refused by name at its position.
func TestMlirRefused(t *testing.T) {
	dir := t.TempDir()
	src := strings.Replace(jaxSrc, "stablehlo.multiply %arg0, %arg1 : tensor<3xf32>", "stablehlo.rng %arg0, %arg1 : tensor<3xf32>", 1)
	model := writeFile(t, dir, "f.mlir", []byte(src))
	for _, cmd := range []string{"check", "run", "build"} {
		tpucc(t, "", cmd, model).want(t, exitProgram, "", model+":4:10: error: unsupported op stablehlo.rng")
	}
}

// TestMlirBuild: a .mlir file builds for TPU like a .tir file.
func TestMlirBuild(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "f.mlir", []byte(jaxSrc))
	out := filepath.Join(dir, "f.hlo")
	tpucc(t, "", "build", "--target", "tpu-v6e", model, "-o", out).want(t, 0, "", "")
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	for _, want := range []string{"stablehlo.multiply %arg0, %arg1", "func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the build output lacks %q:\n%s", want, got)
		}
	}
}

// jaxRefused are the exports that use an op tpucc lacks, with the refusal.
var jaxRefused = map[string]string{}

// jaxBF16 are results that pass through bf16 in the program but are returned
// as f32: XLA:CPU elides the rounding to bf16 between a dot and its convert
// to f32 (excess precision, which XLA allows), and keeps a bf16 cumulative
// sum's running total wider than bf16 (bf16_train: every result, a
// transformer's layers scanned in bf16 and its gradient); tpucc rounds as
// the program says, so the two agree within bf16's tolerance, not f32's.
var jaxBF16 = map[string]bool{"bf16_matmul/result1.npy": true, "cum_more/result1.npy": true, "bf16_train": true}

// jaxBackends are the ways TestMlirJAX runs each export: the llvm backend,
// the reference executor, and XLA:CPU through PJRT (the StableHLO tpucc
// builds from the import, compiled by XLA).
var jaxBackends = [][]string{{"--backend", "llvm"}, {"--backend", "reference"}, {"--device", "pjrt"}}

// TestMlirJAX runs every function tools/jaxexport exported (testdata/jax/NAME:
// model.mlir as JAX printed it, argN.npy, and JAX's resultN.npy; export.py's
// and loops.py's) through tpucc run on each of jaxBackends, with JAX's
// inputs, and compares with JAX's results within the oracle's tolerance of
// each dtype (f32: 1e-5 relative and absolute; integers and i1 exactly).
func TestMlirJAX(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "jax", "*"))
	if err != nil || len(dirs) < 15 {
		t.Fatalf("want the JAX exports in testdata/jax: %d found, %v", len(dirs), err)
	}
	plugin, err := pjrt.CPUPluginDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TPUCC_PJRT_CACHE", filepath.Dir(plugin))
	for _, d := range dirs {
		name := filepath.Base(d)
		t.Run(name, func(t *testing.T) {
			model := filepath.Join(d, "model.mlir")
			if want, ok := jaxRefused[name]; ok {
				tpucc(t, "", "check", model).want(t, exitProgram, "", model+want)
				return
			}
			for _, backend := range jaxBackends {
				runJAXExport(t, d, name, backend)
			}
		})
	}
}

// runJAXExport runs export d on one backend and compares with JAX's results.
func runJAXExport(t *testing.T, d, name string, backend []string) {
	t.Helper()
	out := t.TempDir()
	args := append([]string{"run", filepath.Join(d, "model.mlir"), "--output-dir", out}, backend...)
	ins, _ := filepath.Glob(filepath.Join(d, "arg*.npy"))
	for _, in := range ins {
		args = append(args, "--input", strings.TrimSuffix(filepath.Base(in), ".npy")+"="+in)
	}
	tpucc(t, "", args...).want(t, 0, "", "")
	wants, _ := filepath.Glob(filepath.Join(d, "result*.npy"))
	if gots, _ := filepath.Glob(filepath.Join(out, "result*.npy")); len(wants) == 0 || len(gots) != len(wants) {
		t.Fatalf("%v: tpucc wrote %d results, JAX %d", backend, len(gots), len(wants))
	}
	for _, w := range wants {
		want := readNPYFile(t, w)
		got := readNPYFile(t, filepath.Join(out, filepath.Base(w)))
		tol := oracle.For(want.Type().DType)
		if jaxBF16[name+"/"+filepath.Base(w)] || jaxBF16[name] {
			tol = oracle.For(ir.BF16)
		}
		if err := oracle.CompareWithin(want, got, tol); err != nil {
			t.Errorf("%v: %s: %v", backend, filepath.Base(w), err)
		}
	}
}

func readNPYFile(t *testing.T, path string) *backend.Buffer {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := backend.ReadNPY(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// TestMlirJAXCompilesForTPU: every JAX export tpucc runs also builds with
// --target tpu-v6e, and libtpu's compile-only client compiles the result for
// a v6e slice.
func TestMlirJAXCompilesForTPU(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles for TPU")
	}
	h, err := xlacheck.FindTPU()
	if err != nil {
		t.Fatalf("the TPU compile-only harness is required: %v", err)
	}
	dirs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "jax", "*"))
	if err != nil || len(dirs) < 15 {
		t.Fatalf("want the JAX exports in testdata/jax: %d found, %v", len(dirs), err)
	}
	var mods []xlacheck.TPUModule
	for _, d := range dirs {
		name := filepath.Base(d)
		if jaxRefused[name] != "" {
			continue
		}
		out := filepath.Join(t.TempDir(), name+".hlo")
		tpucc(t, "", "build", "--target", "tpu-v6e", filepath.Join(d, "model.mlir"), "-o", out).want(t, 0, "", "")
		text, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		mods = append(mods, xlacheck.TPUModule{ID: name, Text: string(text)})
	}
	res, err := h.CompileTPU(mods, []string{"v6e:2x2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(mods) {
		t.Fatalf("%d results for %d modules", len(res), len(mods))
	}
	for _, r := range res {
		if !r.OK {
			t.Errorf("%s on %s: %s", r.ID, r.Topology, r.Error)
		}
	}
}

// TestMlirTestStableHLO: test-stablehlo prints a line per failed or
// unsupported test and the summary last; a failure is exit status 1.
func TestMlirTestStableHLO(t *testing.T) {
	dir := t.TempDir()
	ok := `func.func @ok() {
  %0 = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<2xf32>
  check.expect_almost_eq_const %1, dense<[2.25, 4.0]> : tensor<2xf32>
  func.return
}
`
	bad := ok + `
// -----

func.func @wrong() {
  %0 = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  %1 = stablehlo.subtract %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[0, 1]> : tensor<2xi32>
  func.return
}

// -----

func.func @lacking() {
  %0 = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  %1 = "chlo.erfc"(%0) : (tensor<2xi32>) -> tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 1]> : tensor<2xi32>
  func.return
}
`
	good := writeFile(t, dir, "good.mlir", []byte(ok))
	tpucc(t, "", "test-stablehlo", good).want(t, 0, "stablehlo-interpret: passed=1 failed=0 unsupported=0 total=1\n", "")
	mixed := writeFile(t, dir, "mixed.mlir", []byte(bad))
	tpucc(t, "", "test-stablehlo", mixed, good).want(t, exitProgram,
		mixed+":10: @wrong: FAILED: 13:3: element 1 is 0, want 1\n"+
			mixed+":19: @lacking: unsupported: 21:8: error: unsupported op chlo.erfc\n"+
			"stablehlo-interpret: passed=2 failed=1 unsupported=1 total=4\n",
		"stablehlo-interpret: 1 tests failed")
	tpucc(t, "", "test-stablehlo").want(t, exitUsage, "", "tpucc test-stablehlo: missing the files or directories to run")
}

// TestMlirRunUnsigned: ui64 and i4 parameters read from .npy files (numpy's
// '<u8', ml_dtypes' 'int4'), results printed as unsigned and written back in
// the same forms.
func TestMlirRunUnsigned(t *testing.T) {
	dir := t.TempDir()
	src := `func.func @main(%arg0: tensor<2xui64>, %arg1: tensor<3xi4>) -> (tensor<2xui64>, tensor<3xi4>, tensor<2xi1>) {
  %0 = stablehlo.constant dense<[1, 18446744073709551615]> : tensor<2xui64>
  %1 = stablehlo.subtract %arg0, %0 : tensor<2xui64>
  %2 = stablehlo.add %arg1, %arg1 : tensor<3xi4>
  %3 = stablehlo.compare LT, %arg0, %0, UNSIGNED : (tensor<2xui64>, tensor<2xui64>) -> tensor<2xi1>
  return %1, %2, %3 : tensor<2xui64>, tensor<3xi4>, tensor<2xi1>
}
`
	model := writeFile(t, dir, "u.mlir", []byte(src))
	a := npy.Of([]int64{2}, []uint64{0, 1 << 63})
	b := &npy.Array{DType: "i4", Shape: []int64{3}, Data: []byte{0x7, 0x8, 0xf}} // 7, -8, -1
	x := writeNPY(t, dir, "a.npy", a)
	y := writeNPY(t, dir, "b.npy", b)
	out := filepath.Join(dir, "out")
	tpucc(t, "", "run", model, "--input", "arg0="+x, "--input", "arg1="+y).want(t, 0,
		"result0: u64[2] = [18446744073709551615, 9223372036854775809]\nresult1: i4[3] = [-2, 0, -2]\nresult2: i1[2] = [true, true]\n", "")
	tpucc(t, "", "run", model, "--input", "arg0="+x, "--input", "arg1="+y, "--output-dir", out).want(t, 0, "", "")
	got, err := npy.ReadFile(filepath.Join(out, "result1.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if got.DType != "i4" || string(got.Data) != "\x0e\x00\x0e" {
		t.Errorf("result1.npy holds %s %x, want i4 0e000e", got.DType, got.Data)
	}
}
