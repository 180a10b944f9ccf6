package runtime

import (
	"bytes"
	"sync"
	"testing"

	"github.com/tpucc/tpucc/backend"
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
