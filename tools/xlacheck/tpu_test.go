package xlacheck

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// tpuHarness fails the test, never skips it, when the TPU compile-only venv is missing.
func tpuHarness(t *testing.T) *Harness {
	t.Helper()
	h, err := FindTPU()
	if err != nil {
		t.Fatalf("the TPU compile-only harness is required: %v", err)
	}
	return h
}

func readTestdata(t *testing.T, name string) TPUModule {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return TPUModule{ID: name, Text: string(b)}
}

// TestCompileTPU compiles the testdata modules and a malformed one for both default
// topologies in one process: a dot on bf16, a 4-way sharded module (which needs 4 chips
// of the slice), an unknown custom call that XLA:TPU rejects, and a parse error, whose
// diagnostic names the module by its ID.
func TestCompileTPU(t *testing.T) {
	h := tpuHarness(t)
	modules := []TPUModule{
		readTestdata(t, "dot_bf16.hlo"),
		readTestdata(t, "sharded_tanh.hlo"),
		readTestdata(t, "unknown_custom_call.hlo"),
		{ID: "malformed", Text: malformedModule},
	}
	rs, err := h.CompileTPU(modules, nil)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		id, topology, kind, error string
	}
	const customCall = "compile: INVALID_ARGUMENT: Custom emitter for tpucc_no_such_target not found"
	const parse = "parse: malformed:4:45: error: expected '>' in tensor type"
	wants := []want{
		{"dot_bf16.hlo", "v5e:2x2", "TPU v5 lite", ""},
		{"dot_bf16.hlo", "v6e:2x2", "TPU v6 lite", ""},
		{"sharded_tanh.hlo", "v5e:2x2", "TPU v5 lite", ""},
		{"sharded_tanh.hlo", "v6e:2x2", "TPU v6 lite", ""},
		{"unknown_custom_call.hlo", "v5e:2x2", "TPU v5 lite", customCall},
		{"unknown_custom_call.hlo", "v6e:2x2", "TPU v6 lite", customCall},
		{"malformed", "v5e:2x2", "TPU v5 lite", parse},
		{"malformed", "v6e:2x2", "TPU v6 lite", parse},
	}
	if len(rs) != len(wants) {
		t.Fatalf("%d results, want %d: %+v", len(rs), len(wants), rs)
	}
	for i, w := range wants {
		r := rs[i]
		if r.ID != w.id || r.Topology != w.topology || r.DeviceKind != w.kind {
			t.Errorf("result %d is %s on %s (%s), want %s on %s (%s)", i, r.ID, r.Topology, r.DeviceKind, w.id, w.topology, w.kind)
		}
		if r.OK != (w.error == "") || r.Error != w.error {
			t.Errorf("%s on %s: OK=%v error %q, want error %q", r.ID, r.Topology, r.OK, r.Error, w.error)
		}
		if (r.CodeBytes > 0) != r.OK {
			t.Errorf("%s on %s: OK=%v with %d bytes of code", r.ID, r.Topology, r.OK, r.CodeBytes)
		}
	}
	// v5e and v6e are different targets: the same module gives different code.
	if rs[0].CodeBytes == rs[1].CodeBytes {
		t.Errorf("dot_bf16.hlo: %d bytes of code on both v5e and v6e", rs[0].CodeBytes)
	}
}

// TestCompileTPUConcurrent: two compiler processes at once both work. libtpu's
// multi-process lockfile would refuse the second, and `go test ./...` runs this package's
// tests beside internal/tpucompile's.
func TestCompileTPUConcurrent(t *testing.T) {
	h := tpuHarness(t)
	m := readTestdata(t, "dot_bf16.hlo")
	var wg sync.WaitGroup
	results := make([][]TPUResult, 2)
	errs := make([]error, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = h.CompileTPU([]TPUModule{m}, []string{"v5e:2x2"})
		}()
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil || len(results[i]) != 1 || !results[i][0].OK {
			t.Errorf("process %d: %v %+v", i, errs[i], results[i])
		}
	}
}

// TestCompileTPUTopology: a topology libtpu does not know fails the whole process (it
// is a harness error, not a module's), and every pair is then a crash result.
func TestCompileTPUTopology(t *testing.T) {
	h := tpuHarness(t)
	rs, err := h.CompileTPU([]TPUModule{readTestdata(t, "dot_bf16.hlo")}, []string{"v5e:2x2", "v7x:2x2"})
	if err == nil || !strings.Contains(err.Error(), "exit status 2") ||
		!strings.Contains(err.Error(), "tpu_compile: cannot get the TPU compile-only client: ") ||
		!strings.Contains(err.Error(), "Invalid TPU external name: TPU v7x") {
		t.Errorf("err = %v", err)
	}
	want := []TPUResult{
		{ID: "dot_bf16.hlo", Topology: "v5e:2x2", Error: "crash: tpu_compile.py stopped before it reported this module"},
		{ID: "dot_bf16.hlo", Topology: "v7x:2x2", Error: "crash: tpu_compile.py stopped before it reported this module"},
	}
	if len(rs) != len(want) || rs[0] != want[0] || rs[1] != want[1] {
		t.Errorf("results %+v, want %+v", rs, want)
	}
}

// TestCompileTPUDies: when the compiler process dies part way, CompileTPU says so and
// keeps what it reported; the pairs it did not reach are crash results.
func TestCompileTPUDies(t *testing.T) {
	root := t.TempDir()
	script := filepath.Join(root, tpuScriptPath)
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	body := `cat > /dev/null
echo '{"id": "a", "topology": "v5e:2x2", "device_kind": "TPU v5 lite", "ok": true, "error": "", "generated_code_bytes": 1024}'
echo '{"id": "a", "topology": "v6e:2x2", "device_kind": "TPU v6 lite", "ok": false, "error": "compile: no"}'
echo "Segmentation fault" >&2
exit 139
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	h := &Harness{Root: root, Python: "/bin/sh"}
	rs, err := h.CompileTPU([]TPUModule{{ID: "a", Text: "x"}, {ID: "b", Text: "y"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "exit status 139") || !strings.Contains(err.Error(), "Segmentation fault") {
		t.Errorf("err = %v", err)
	}
	crash := "crash: tpu_compile.py stopped before it reported this module"
	want := []TPUResult{
		{ID: "a", Topology: "v5e:2x2", DeviceKind: "TPU v5 lite", OK: true, CodeBytes: 1024},
		{ID: "a", Topology: "v6e:2x2", DeviceKind: "TPU v6 lite", Error: "compile: no"},
		{ID: "b", Topology: "v5e:2x2", Error: crash},
		{ID: "b", Topology: "v6e:2x2", Error: crash},
	}
	if len(rs) != len(want) {
		t.Fatalf("%d results: %+v", len(rs), rs)
	}
	for i := range want {
		if rs[i] != want[i] {
			t.Errorf("result %d: %+v, want %+v", i, rs[i], want[i])
		}
	}
}

// TestCompileTPUOutOfOrder: a result for a pair other than the next one expected is a
// protocol error, not a result to file under the wrong module.
func TestCompileTPUOutOfOrder(t *testing.T) {
	root := t.TempDir()
	script := filepath.Join(root, tpuScriptPath)
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	body := `cat > /dev/null
echo '{"id": "b", "topology": "v5e:2x2", "device_kind": "TPU v5 lite", "ok": true, "error": "", "generated_code_bytes": 1024}'
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	h := &Harness{Root: root, Python: "/bin/sh"}
	rs, err := h.CompileTPU([]TPUModule{{ID: "a", Text: "x"}, {ID: "b", Text: "y"}}, []string{"v5e:2x2"})
	want := "xlacheck: tpu_compile.py result 0 is b on v5e:2x2, want a on v5e:2x2\n"
	if err == nil || err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	if len(rs) != 2 || rs[0].Error != "crash: tpu_compile.py stopped before it reported this module" || rs[1].ID != "b" {
		t.Errorf("results %+v", rs)
	}
}

func TestFindTPUMissing(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "a")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := findTPUFrom(sub)
	want := "xlacheck: the TPU compile-only Python is missing (" + filepath.Join(root, ".venv-tpu/bin/python") + "): run `make venv-tpu` in " + root
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestCompileTPUEmpty(t *testing.T) {
	rs, err := (&Harness{}).CompileTPU(nil, nil)
	if rs != nil || err != nil {
		t.Errorf("CompileTPU(nil) = %v, %v", rs, err)
	}
}
