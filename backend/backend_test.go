package backend

import (
	"errors"
	"testing"
)

// named is a backend that only has a name.
type named struct {
	Backend
	name string
}

func (n named) Name() string { return n.name }

// TestOpenCPU: the one fallback policy of the cpu device. This test binary
// links no real backend; the registry is saved and given fakes.
func TestOpenCPU(t *testing.T) {
	mu.Lock()
	saved := registry
	registry = map[string]func() (Backend, error){}
	mu.Unlock()
	defer func() { mu.Lock(); registry = saved; mu.Unlock() }()
	Register(CPUFallback, func() (Backend, error) { return named{name: CPUFallback}, nil })

	open := func(name string, ready func(Backend) error) (string, string, error) {
		var warned string
		b, err := OpenCPU(name, "programs", ready, func(line string) { warned += line })
		if err != nil {
			return "", warned, err
		}
		return b.Name(), warned, nil
	}
	// The default not linked in: the fallback, with the reason.
	got, warned, err := open("", nil)
	if want := "tpucc: warning: programs run on the reference executor, not llvm: unknown backend \"llvm\" (have reference)\n"; err != nil || got != CPUFallback || warned != want {
		t.Errorf("no llvm: %s, %q, %v; want reference, %q", got, warned, err, want)
	}
	Register(CPUDefault, func() (Backend, error) { return named{name: CPUDefault}, nil })
	for _, name := range []string{"", CPUDefault} {
		if got, warned, err := open(name, nil); err != nil || got != CPUDefault || warned != "" {
			t.Errorf("%q: %s, %q, %v; want llvm and no warning", name, got, warned, err)
		}
	}
	// Opened but not ready for the caller: the fallback, with ready's reason.
	notReady := func(Backend) error { return errors.New("clang failed") }
	got, warned, err = open("", notReady)
	if want := "tpucc: warning: programs run on the reference executor, not llvm: clang failed\n"; err != nil || got != CPUFallback || warned != want {
		t.Errorf("not ready: %s, %q, %v; want reference, %q", got, warned, err, want)
	}
	// The fallback by name: no warning, ready not asked.
	if got, warned, err := open(CPUFallback, notReady); err != nil || got != CPUFallback || warned != "" {
		t.Errorf("reference: %s, %q, %v", got, warned, err)
	}
	if _, _, err := open("pjrt", nil); err == nil || err.Error() != `unknown cpu backend "pjrt" (want llvm or reference)` {
		t.Errorf("pjrt: %v", err)
	}
}
