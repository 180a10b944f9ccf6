package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend/pjrt"
)

// TestPallasCompilesForV6e: the Pallas kernels jax exported for the TPU
// platform (tools/jaxexport/pallas.py: an elementwise add and a bf16 matmul,
// each a stablehlo.custom_call @tpu_custom_call carrying its Mosaic module in
// backend_config) are imported, lowered again with the backend_config byte
// for byte, and compiled for v6e through libtpu's compile-only client. The
// kernel itself is compiled: the same module with its Mosaic bytes damaged
// is refused by Mosaic's parser. On this CPU they are refused by name.
func TestPallasCompilesForV6e(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles for TPU")
	}
	dir := t.TempDir()
	for _, name := range []string{"pallas_add", "pallas_matmul"} {
		in := filepath.Join("..", "..", "testdata", "jax-tpu", name, "model.mlir")
		src, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		hlo := tpucc(t, "", "build", in, "--target", "tpu-v6e")
		if hlo.code != 0 {
			t.Fatalf("%s: build: %s", name, hlo.stderr)
		}
		if cfg := backendConfig(string(src)); cfg == "" || backendConfig(hlo.stdout) != cfg {
			t.Errorf("%s: the lowering's backend_config is not the export's, byte for byte", name)
		}
		out := filepath.Join(dir, name+".pjrt")
		tpucc(t, "", "build", in, "--target", "tpu-v6e", "--topology", "v6e:2x2", "--emit=executable", "-o", out).want(t, 0, "", "")
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		a, err := pjrt.ReadArtifact(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if a.Manifest.DeviceKind != "TPU v6 lite" || a.Manifest.StableHLOSHA256 != pjrt.SHA256([]byte(hlo.stdout)) {
			t.Errorf("%s: manifest %+v", name, a.Manifest)
		}
		r := tpucc(t, "", "run", "--backend", "llvm", in)
		want := in + ":5:10: error: custom_call @tpu_custom_call has no fallback: it runs only on a backend that has the kernel\n"
		if r.code != 1 || r.stderr != want {
			t.Errorf("%s: run on the cpu: status %d, stderr %q, want 1 and %q", name, r.code, r.stderr, want)
		}
	}

	add, err := os.ReadFile(filepath.Join("..", "..", "testdata", "jax-tpu", "pallas_add", "model.mlir"))
	if err != nil {
		t.Fatal(err)
	}
	// MLIR bytecode opens with "ML\xefR", base64 TUzvUg: replace the magic.
	bad := strings.Replace(string(add), `\22body\22: \22TUzvUg`, `\22body\22: \22AAAAAA`, 1)
	if bad == string(add) {
		t.Fatal("the export's kernel does not start with MLIR bytecode's magic")
	}
	in := writeFile(t, dir, "bad.mlir", []byte(bad))
	r := tpucc(t, "", "build", in, "--target", "tpu-v6e", "--topology", "v6e:2x2", "--emit=executable", "-o", filepath.Join(dir, "bad.pjrt"))
	if r.code != 1 || !strings.Contains(r.stderr, "Failed to parse the Mosaic module") {
		t.Errorf("a damaged kernel: status %d, stderr %q; want 1 and Mosaic's parse error", r.code, r.stderr)
	}
}

// backendConfig is the backend_config string of text's custom_call, as written.
func backendConfig(text string) string {
	_, rest, ok := strings.Cut(text, `backend_config = "`)
	if !ok {
		return ""
	}
	cfg, _, _ := strings.Cut(rest, `"`)
	return cfg
}

// TestCustomCallBackends: a custom_call XLA:CPU knows (@Sharding, the
// identity on one device) runs there through PJRT, and the reference
// executor and llvm run its fallback, all three to the same numbers; a
// target XLA:CPU lacks is refused by XLA, by name, while the CPU backends
// still run the fallback.
func TestCustomCallBackends(t *testing.T) {
	dir := t.TempDir()
	const src = `func @f(%x: f32[4]) -> f32[4] {
  %s = custom_call @TARGET(%x) {fallback=@id} : f32[4]
  %r = add %s, %x
  return %r
}

func @id(%a: f32[4]) -> f32[4] {
  return %a
}
`
	known := writeFile(t, dir, "known.tir", []byte(strings.Replace(src, "TARGET", "Sharding", 1)))
	unknown := writeFile(t, dir, "unknown.tir", []byte(strings.Replace(src, "TARGET", "tpucc_no_such_kernel", 1)))
	ref := tpucc(t, "", "run", "--backend", "reference", known)
	if ref.code != 0 || !strings.HasPrefix(ref.stdout, "result0: f32[4] = [") {
		t.Fatalf("reference: status %d: %s%s", ref.code, ref.stdout, ref.stderr)
	}
	for _, b := range []string{"pjrt", "llvm"} {
		tpucc(t, "", "run", "--backend", b, known).want(t, 0, ref.stdout, "")
	}
	tpucc(t, "", "run", "--backend", "llvm", unknown).want(t, 0, ref.stdout, "")
	r := tpucc(t, "", "run", "--backend", "pjrt", unknown)
	want := unknown + ": error: backend pjrt: pjrt: PJRT_Client_Compile: NOT_FOUND: No registered implementation for untyped custom call to tpucc_no_such_kernel for Host\n"
	if r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Errorf("pjrt, a target XLA lacks: status %d, stdout %q, stderr %q; want 1 and %q", r.code, r.stdout, r.stderr, want)
	}
}
