package xlacheck

import (
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/internal/npy"
	"github.com/tpucc/tpucc/ir"
)

const header = `module @t attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {`

var (
	addModule = header + `
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>) -> tensor<2x3xf32> {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }
}
`
	bf16Module = header + `
  func.func public @main(%arg0: tensor<3xbf16>) -> (tensor<3xbf16>, tensor<3xf32>) {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<3xbf16>
    %1 = stablehlo.convert %arg0 : (tensor<3xbf16>) -> tensor<3xf32>
    return %0, %1 : tensor<3xbf16>, tensor<3xf32>
  }
}
`
	i1Module = header + `
  func.func public @main(%arg0: tensor<4xi32>, %arg1: tensor<4xi32>, %arg2: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi32>) {
    %0 = stablehlo.compare  GT, %arg0, %arg1,  SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %1 = stablehlo.xor %0, %arg2 : tensor<4xi1>
    %2 = stablehlo.select %0, %arg0, %arg1 : tensor<4xi1>, tensor<4xi32>
    return %1, %2 : tensor<4xi1>, tensor<4xi32>
  }
}
`
	// Several results of several dtypes, rank-0 ones among them.
	multiModule = header + `
  func.func public @main(%arg0: tensor<2x2xf64>, %arg1: tensor<i64>, %arg2: tensor<3xui8>) -> (tensor<f64>, tensor<2xi64>, tensor<ui32>, tensor<3xui8>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f64>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x2xf64>, tensor<f64>) -> tensor<f64>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<i64>) -> tensor<2xi64>
    %2 = stablehlo.iota dim = 0 : tensor<2xi64>
    %3 = stablehlo.multiply %1, %2 : tensor<2xi64>
    %c = stablehlo.constant dense<4000000000> : tensor<ui32>
    %4 = stablehlo.add %arg2, %arg2 : tensor<3xui8>
    return %0, %3, %c, %4 : tensor<f64>, tensor<2xi64>, tensor<ui32>, tensor<3xui8>
  }
}
`
	// Line 4 lacks the '>' of its type.
	malformedModule = header + `
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
    %1 = stablehlo.add %0, %0 : tensor<2xf32
    return %1 : tensor<2xf32>
  }
}
`
	// Parses, but stablehlo.add's verifier wants equal shapes.
	unverifiedModule = header + `
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<3xf32> {
    %0 = stablehlo.add %arg0, %arg0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
`
	// Verifies, but XLA:CPU knows no such custom call.
	uncompilableModule = header + `
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.custom_call @tpucc_no_such_target(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
`
)

// harness fails the test, never skips it, when the oracle is missing: a skipped oracle
// test is a failure by project rule.
func harness(t *testing.T) *Harness {
	t.Helper()
	h, err := Find()
	if err != nil {
		t.Fatalf("the XLA oracle is required: %v", err)
	}
	return h
}

func bf16(vs ...float32) []uint16 {
	out := make([]uint16, len(vs))
	for i, v := range vs {
		out[i] = ir.Float32ToBF16(v)
	}
	return out
}

func TestRun(t *testing.T) {
	h := harness(t)
	cases := []Case{
		{ID: "malformed", Module: malformedModule},
		{ID: "add", Module: addModule, Inputs: []*npy.Array{
			npy.Of([]int64{2, 3}, []float32{0, 1, 2, 3, 4, 5}),
			npy.Of([]int64{3}, []float32{10, 20, 30}),
		}},
		{ID: "unverified", Module: unverifiedModule, Inputs: []*npy.Array{npy.Of([]int64{2}, []float32{1, 2})}},
		{ID: "bf16", Module: bf16Module, Inputs: []*npy.Array{npy.OfBits("bf16", []int64{3}, bf16(1.5, -2, 3))}},
		{ID: "uncompilable", Module: uncompilableModule, Inputs: []*npy.Array{npy.Of([]int64{4}, []float32{1, 2, 3, 4})}},
		{ID: "i1", Module: i1Module, Inputs: []*npy.Array{
			npy.Of([]int64{4}, []int32{1, 5, -3, 7}),
			npy.Of([]int64{4}, []int32{2, 4, -3, -8}),
			npy.Of([]int64{4}, []bool{false, false, true, true}),
		}},
		{ID: "wrong inputs", Module: addModule, Inputs: []*npy.Array{npy.Of([]int64{3}, []float32{1, 2, 3})}},
		{ID: "multi", Module: multiModule, Inputs: []*npy.Array{
			npy.Of([]int64{2, 2}, []float64{0.5, 1.25, -2, 1e-300}),
			npy.Of([]int64{}, []int64{1 << 40}),
			npy.Of([]int64{3}, []uint8{1, 100, 200}),
		}},
	}
	results, err := h.Run(cases)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(cases) {
		t.Fatalf("%d results for %d cases", len(results), len(cases))
	}
	byID := map[string]Result{}
	for i, r := range results {
		if r.ID != cases[i].ID {
			t.Errorf("result %d has ID %q, want %q", i, r.ID, cases[i].ID)
		}
		byID[r.ID] = r
	}

	ok := func(id string, n int) []*npy.Array {
		t.Helper()
		r := byID[id]
		if !r.OK {
			t.Fatalf("%s: %s: %s\nrepro: %s", id, r.Stage, r.Error, r.Repro)
		}
		if len(r.Outputs) != n {
			t.Fatalf("%s: %d outputs, want %d", id, len(r.Outputs), n)
		}
		return r.Outputs
	}
	check := func(id string, got *npy.Array, wantType string, want *npy.Array) {
		t.Helper()
		if got.String() != wantType || string(got.Data) != string(want.Data) {
			t.Errorf("%s: got %s %x, want %s %x", id, got, got.Data, wantType, want.Data)
		}
	}

	out := ok("add", 1)
	check("add", out[0], "f32[2,3]", npy.Of([]int64{2, 3}, []float32{10, 21, 32, 13, 24, 35}))

	out = ok("bf16", 2)
	check("bf16", out[0], "bf16[3]", npy.OfBits("bf16", []int64{3}, bf16(2.25, 4, 9)))
	check("bf16", out[1], "f32[3]", npy.Of([]int64{3}, []float32{1.5, -2, 3}))

	out = ok("i1", 2)
	check("i1", out[0], "i1[4]", npy.Of([]int64{4}, []bool{false, true, true, false}))
	check("i1", out[1], "i32[4]", npy.Of([]int64{4}, []int32{2, 5, -3, 7}))

	out = ok("multi", 4)
	check("multi", out[0], "f64[]", npy.Of([]int64{}, []float64{0.5 + 1.25 - 2 + 1e-300}))
	check("multi", out[1], "i64[2]", npy.Of([]int64{2}, []int64{0, 1 << 40}))
	check("multi", out[2], "u32[]", npy.Of([]int64{}, []uint32{4000000000}))
	check("multi", out[3], "u8[3]", npy.Of([]int64{3}, []uint8{2, 200, 144}))

	failed := func(id, stage string, mention ...string) {
		t.Helper()
		r := byID[id]
		if r.OK || r.Stage != stage {
			t.Errorf("%s: OK=%v stage %q (%s), want stage %q", id, r.OK, r.Stage, r.Error, stage)
		}
		for _, m := range mention {
			if !strings.Contains(r.Error, m) {
				t.Errorf("%s: error %q does not mention %q", id, r.Error, m)
			}
		}
		if r.Dir == "" || !strings.Contains(r.Repro, "xlacheck.py run-one") {
			t.Errorf("%s: no kept files or repro command (Dir %q, Repro %q)", id, r.Dir, r.Repro)
		}
	}
	failed("malformed", "parse", "module.hlo:4:45: error: expected '>' in tensor type")
	failed("unverified", "verify", "module.hlo:3:10: error: 'stablehlo.add' op requires the same shape")
	failed("uncompilable", "compile", "tpucc_no_such_target")
	failed("wrong inputs", "run", "@main takes 2 arguments, 1 inputs given")

	for _, r := range results {
		if r.Dir != "" {
			os.RemoveAll(filepath.Dir(r.Dir))
			break
		}
	}
}

// TestRepro runs the repro command's pieces as a person would and gets the same verdict.
func TestRepro(t *testing.T) {
	h := harness(t)
	r, err := h.RunOne(Case{ID: "bad", Module: malformedModule})
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(filepath.Dir(r.Dir))
	want := "cd " + h.Root + " && .venv/bin/python tools/xlacheck/xlacheck.py run-one " +
		filepath.Join(r.Dir, "module.hlo") + " --outdir " + filepath.Join(r.Dir, "out")
	if r.Repro != want {
		t.Fatalf("Repro:\n got %s\nwant %s", r.Repro, want)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "module.hlo")); err != nil {
		t.Errorf("failed case's module was not kept: %v", err)
	}
}

func TestReproCommandQuoting(t *testing.T) {
	h := &Harness{Root: "/src/tp ucc"}
	got := h.ReproCommand("/tmp/a b/m.hlo", []string{"/tmp/x.npy", "it's.npy"}, "out")
	want := `cd '/src/tp ucc' && .venv/bin/python tools/xlacheck/xlacheck.py run-one '/tmp/a b/m.hlo' --input /tmp/x.npy --input 'it'\''s.npy' --outdir out`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestFindMissing(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := findFrom(sub)
	want := "xlacheck: the oracle's Python is missing (" + filepath.Join(root, ".venv/bin/python") + "): run `make venv` in " + root
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestRunEmpty(t *testing.T) {
	rs, err := (&Harness{}).Run(nil)
	if rs != nil || err != nil {
		t.Errorf("Run(nil) = %v, %v", rs, err)
	}
}

// TestHarnessDies: when the harness process dies, Run says so, and still returns what the
// cases it reached reported; the others are "crash".
func TestHarnessDies(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "fake.sh")
	body := `d=$(dirname "$2")
echo '{"ok": false, "stage": "verify", "error": "bad op"}' > "$d/case0000/out/status.json"
echo "Segmentation fault" >&2
exit 139
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	h := &Harness{Root: dir, Python: "/bin/sh", Script: script}
	rs, err := h.Run([]Case{{ID: "a", Module: "x"}, {ID: "b", Module: "y"}})
	if err == nil || !strings.Contains(err.Error(), "exit status 139") || !strings.Contains(err.Error(), "Segmentation fault") {
		t.Errorf("err = %v", err)
	}
	if len(rs) != 2 {
		t.Fatalf("%d results", len(rs))
	}
	if rs[0].Stage != "verify" || rs[0].Error != "bad op" {
		t.Errorf("case a: %+v", rs[0])
	}
	if rs[1].Stage != "crash" || rs[1].Error != "no status.json: the harness never reached this case" {
		t.Errorf("case b: %+v", rs[1])
	}
	os.RemoveAll(filepath.Dir(rs[0].Dir))
}

// roundingModule computes bf16 (a*b + a) and returns it as f32. tpucc rounds the product
// to bf16 before the add; XLA:CPU keeps it in f32 unless --xla_allow_excess_precision=false
// is in force, which xlacheck.py must see to without the caller's help.
const roundingModule = header + `
  func.func public @main(%arg0: tensor<64xbf16>, %arg1: tensor<64xbf16>) -> tensor<64xf32> {
    %0 = stablehlo.multiply %arg0, %arg1 : tensor<64xbf16>
    %1 = stablehlo.add %0, %arg0 : tensor<64xbf16>
    %2 = stablehlo.convert %1 : (tensor<64xbf16>) -> tensor<64xf32>
    return %2 : tensor<64xf32>
  }
}
`

// roundingCase returns the inputs of roundingModule and the result of rounding each op
// to bf16, as docs/ops.md specifies.
func roundingCase() (a, b []uint16, want []float32) {
	for i := 0; i < 64; i++ {
		x := ir.Float32ToBF16(float32(i-32) * 0.1371)
		y := ir.Float32ToBF16(0.3 + float32(i)*0.0173)
		a, b = append(a, x), append(b, y)
		xf, yf := ir.BF16ToFloat32(x), ir.BF16ToFloat32(y)
		p := ir.BF16ToFloat32(ir.Float32ToBF16(xf * yf))
		want = append(want, ir.BF16ToFloat32(ir.Float32ToBF16(p+xf)))
	}
	return a, b, want
}

func checkRounding(t *testing.T, how string, got *npy.Array, want []float32) {
	t.Helper()
	if got.String() != "f32[64]" {
		t.Fatalf("%s: result is %s, want f32[64]", how, got)
	}
	for i, w := range want {
		g := math.Float32frombits(binary.LittleEndian.Uint32(got.Data[4*i:]))
		if g != w {
			t.Errorf("%s: element %d is %v, want %v: XLA did not round each bf16 op to bf16 (is --xla_allow_excess_precision=false in force?)",
				how, i, g, w)
			return
		}
	}
}

// TestExcessPrecision runs a bf16 program with XLA_FLAGS empty, as the README's recipe
// and make demo do, through both the Go driver (mode run) and run-one.
func TestExcessPrecision(t *testing.T) {
	h := harness(t)
	t.Setenv("XLA_FLAGS", "")
	a, b, want := roundingCase()
	in := []*npy.Array{npy.OfBits("bf16", []int64{64}, a), npy.OfBits("bf16", []int64{64}, b)}
	r, err := h.RunOne(Case{ID: "rounding", Module: roundingModule, Inputs: in})
	if err != nil || !r.OK {
		t.Fatalf("run: %v %s %s", err, r.Stage, r.Error)
	}
	checkRounding(t, "run", r.Outputs[0], want)

	dir := t.TempDir()
	args := []string{h.Script, "run-one", filepath.Join(dir, "m.hlo"), "--outdir", filepath.Join(dir, "out")}
	if err := os.WriteFile(args[2], []byte(roundingModule), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, x := range in {
		p := filepath.Join(dir, inputName(i))
		if err := npy.WriteFile(p, x); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--input", p)
	}
	cmd := exec.Command(h.Python, args...)
	cmd.Dir = h.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run-one: %v\n%s", err, out)
	}
	got, err := npy.ReadFile(filepath.Join(dir, "out", "result0.npy"))
	if err != nil {
		t.Fatal(err)
	}
	checkRounding(t, "run-one", got, want)
}
