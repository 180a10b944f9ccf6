package engine

import (
	"bytes"
	"sync"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/frontend/tir"
)

// TestCPUFallsBackToReference: where the default backend cannot open (this
// test binary does not link backend/llvm, as a machine without clang cannot
// build with it), the cpu device runs on the reference executor and says so
// once, with the reason; a backend named explicitly never falls back.
func TestCPUFallsBackToReference(t *testing.T) {
	if _, err := backend.Lookup(backend.CPUDefault); err == nil {
		t.Skip("the default backend opens here; the fallback is not reachable")
	}
	var warn bytes.Buffer
	saved := fallbackWarn
	fallbackWarn, fallbackOnce = &warn, sync.Once{}
	defer func() { fallbackWarn, fallbackOnce = saved, sync.Once{} }()
	for _, open := range []func() (backend.Backend, error){
		func() (backend.Backend, error) { return OpenDevice("cpu") },
		func() (backend.Backend, error) { return OpenDevice("") },
		func() (backend.Backend, error) { return OpenBackend("") },
	} {
		b, err := open()
		if err != nil {
			t.Fatal(err)
		}
		if b.Name() != backend.CPUFallback {
			t.Errorf("backend %s, want %s", b.Name(), backend.CPUFallback)
		}
	}
	want := `tpucc: warning: programs run on the reference executor, not llvm: unknown backend "llvm" (have reference)` + "\n"
	if warn.String() != want {
		t.Errorf("warning %q, want %q", warn.String(), want)
	}
	if _, err := OpenBackend(backend.CPUDefault); err == nil {
		t.Errorf("OpenBackend(%q) opened a backend that does not exist", backend.CPUDefault)
	}
}

// listing is a backend whose executables report fallbacks.
type listing struct{ lines []string }

func (l listing) Name() string                                         { return "listing" }
func (l listing) Fingerprint() string                                  { return "listing" }
func (l listing) Compile(*backend.Program) (backend.Executable, error) { return l, nil }
func (l listing) Run([]*backend.Buffer) ([]*backend.Buffer, error)     { return nil, nil }
func (l listing) Fallbacks() []string                                  { return l.lines }

// TestFallbackLog: TPUCC_LOGS=fallback (or all) prints each instruction a
// compiled program leaves to another executor, as the backend lists them.
func TestFallbackLog(t *testing.T) {
	old := stderr
	defer func() { stderr = old }()
	b := listing{lines: []string{"f.tir:3:3: convert f32[4] -> i32[4] runs on the reference executor: float to integer converts saturate on the reference executor"}}
	for _, tc := range []struct{ env, want string }{
		{"", ""},
		{"recompiles", ""},
		{"fallback", "tpucc: fallback: " + b.lines[0] + "\n"},
		{"all", "tpucc: fallback: " + b.lines[0] + "\n"},
	} {
		t.Setenv("TPUCC_LOGS", tc.env)
		var buf bytes.Buffer
		stderr = &buf
		m, err := tir.Parse("f.tir", []byte("func @f(%x: f32[4]) -> f32[4] {\n  %y = neg %x\n  return %y\n}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := Compile(m, Config{Target: "cpu", Backend: b}); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tc.want {
			t.Errorf("TPUCC_LOGS=%s: %q, want %q", tc.env, buf.String(), tc.want)
		}
	}
}
