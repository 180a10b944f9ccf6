package tensor_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/internal/oracle"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// haveClang is whether the llvm backend can build its eager library here.
func haveClang() bool {
	_, err := exec.LookPath("clang")
	return err == nil
}

// TestSetEagerBackend: eager ops run on the llvm backend's kernels by
// default (the reference executor without clang); an unknown backend is
// refused and leaves the choice as it was.
func TestSetEagerBackend(t *testing.T) {
	want := "llvm"
	if !haveClang() || os.Getenv(tensor.EagerEnv) == "reference" {
		want = "reference"
	}
	if got := tensor.EagerBackend(); got != want {
		t.Fatalf("default eager backend %q, want %s", got, want)
	}
	defer tensor.SetEagerBackend(want)
	err := tensor.SetEagerBackend("nope")
	if want := `unknown backend "nope" (have llvm, reference)`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if err := tensor.SetEagerBackend("reference"); err != nil {
		t.Fatal(err)
	}
	if got := tensor.Full(2, ir.F32, 3).Add(tensor.Full(1, ir.F32, 3)).Float64s(); got[0] != 3 || len(got) != 3 {
		t.Errorf("2+1 = %v", got)
	}
}

// eagerMLP is the MLP of the docs with odd sizes, broadcasting the bias,
// and a reduction and a transpose on the way out.
func eagerMLP(x, w1, b1, w2 *tensor.Tensor) *tensor.Tensor {
	h := x.MatMul(w1).Add(b1).Relu().MatMul(w2)
	return h.Exp().Sum(1).Add(h.Transpose(1, 0).Sum(0))
}

// TestEagerLLVMMatchesReference: the same eager code on the llvm kernels
// and on the reference executor agree within the oracle's f32 tolerance.
func TestEagerLLVMMatchesReference(t *testing.T) {
	if !haveClang() {
		t.Skip("no clang: eager ops run on the reference executor")
	}
	defer tensor.SetEagerBackend(tensor.EagerBackend())
	x, w1 := tensor.Random(1, ir.F32, 7, 33), tensor.Random(2, ir.F32, 33, 65)
	b1, w2 := tensor.Random(3, ir.F32, 65), tensor.Random(4, ir.F32, 65, 5)
	run := func(name string) *tensor.Tensor {
		if err := tensor.SetEagerBackend(name); err != nil {
			t.Fatal(err)
		}
		return eagerMLP(x, w1, b1, w2)
	}
	want, got := run("reference"), run("llvm")
	if err := oracle.CompareWithin(want.Buffer(), got.Buffer(), oracle.For(ir.F32)); err != nil {
		t.Error(err)
	}
}

// TestDefaultEagerChild runs this test binary as a child that reports its
// default eager backend and what it printed on stderr.
func TestDefaultEagerChild(t *testing.T) {
	if os.Getenv("TPUCC_TEST_EAGER_CHILD") == "" {
		t.Skip("run by TestDefaultEager")
	}
	x := tensor.Full(2, ir.F32, 3).Add(tensor.Full(1, ir.F32, 3)).Float64s()
	fmt.Printf("child: backend=%s sum=%v\n", tensor.EagerBackend(), x)
}

// TestDefaultEager: the environment selects the reference executor or llvm,
// and a refused object cache directory keeps llvm with one warning.
func TestDefaultEager(t *testing.T) {
	if !haveClang() {
		t.Skip("no clang")
	}
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	// The child's temporary and user cache directories are the test's: the
	// llvm backend falls back to the user's default object cache (else one
	// in TMPDIR) when it refuses the shared one, and keeps running eager ops.
	tmp := t.TempDir()
	cases := []struct{ env, want string }{
		{tensor.EagerEnv + "=reference", "child: backend=reference sum=[3 3 3]\n"},
		{"TPUCC_LLVM_CACHE=" + shared, "tpucc: warning: llvm cache directory: " + shared +
			" is writable by others (mode 0777): refusing to load code from it; using " + filepath.Join(tmp, "tpucc", "llvm") + " instead\nchild: backend=llvm sum=[3 3 3]\n"},
		{tensor.EagerEnv + "=llvm", "child: backend=llvm sum=[3 3 3]\n"},
	}
	for _, c := range cases {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDefaultEagerChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TPUCC_TEST_EAGER_CHILD=1", "TMPDIR="+tmp, "XDG_CACHE_HOME="+tmp, c.env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.env, err, out)
		}
		got := strings.TrimSuffix(string(out), "PASS\n")
		if got != c.want {
			t.Errorf("%s:\n%s\nwant:\n%s", c.env, got, c.want)
		}
	}
}
