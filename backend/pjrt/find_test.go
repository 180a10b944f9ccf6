package pjrt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plant writes an empty file at each path, making its directories.
func plant(t *testing.T, mode os.FileMode, paths ...string) {
	t.Helper()
	for _, f := range paths {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFindPlaces: a plugin is found in $VIRTUAL_ENV and in the project's
// own environment only: never in a .venv-tpu of a parent that is no tpucc
// checkout of this user's (a library planted in /tmp/.venv-tpu), nor in the
// environment of the python3 on $PATH; CUDA 13's before CUDA 12's.
func TestFindPlaces(t *testing.T) {
	top := t.TempDir()
	site := func(venv string) string { return filepath.Join(venv, "lib", "python3.12", "site-packages") }
	planted := filepath.Join(site(filepath.Join(top, ".venv-tpu")), "libtpu", "libtpu.so")
	onPath := filepath.Join(top, "py")
	plant(t, 0o755, planted, filepath.Join(onPath, "bin", "python3"),
		filepath.Join(site(onPath), "libtpu", "libtpu.so"))
	work := filepath.Join(top, "a", "b")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvPlugin, "")
	t.Setenv("VIRTUAL_ENV", "")
	t.Setenv("PATH", filepath.Join(onPath, "bin"))
	t.Chdir(work)
	want := "pjrt: no tpu plugin found in $VIRTUAL_ENV or the project's .venv-tpu; set TPUCC_PJRT_PLUGIN to its path (libtpu/libtpu.so inside a Python environment)"
	if got, err := Find(KindTPU); err == nil || err.Error() != want {
		t.Errorf("Find(tpu) below a planted /tmp/.venv-tpu = %q, %v; want %s", got, err, want)
	}

	// The same parent with tpucc's go.mod, owned by this user, is the project.
	mod := filepath.Join(top, "go.mod")
	if err := os.WriteFile(mod, []byte("// tpucc\nmodule github.com/tpucc/tpucc\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(KindTPU); err != nil || got != planted {
		t.Errorf("Find(tpu) in the project = %q, %v; want %s", got, err, planted)
	}
	for _, c := range []struct {
		mode os.FileMode
		text string
		why  string
	}{
		{0o666, "module github.com/tpucc/tpucc\n", mod + ": not a regular file or directory writable only by its owner (mode -rw-rw-rw-)"},
		{0o644, "module example.com/other\n", mod + ": module example.com/other, not github.com/tpucc/tpucc"},
	} {
		os.WriteFile(mod, []byte(c.text), c.mode)
		os.Chmod(mod, c.mode)
		if _, err := ProjectRoot(); err == nil || err.Error() != c.why {
			t.Errorf("ProjectRoot with go.mod %q mode %v: %v, want %s", c.text, c.mode, err, c.why)
		}
		if got, err := Find(KindTPU); err == nil || err.Error() != want {
			t.Errorf("Find(tpu) with go.mod %q mode %v = %q, %v; want %s", c.text, c.mode, got, err, want)
		}
	}
	// Group-writable in this user's own group, as a umask of 002 makes it.
	os.WriteFile(mod, []byte("module github.com/tpucc/tpucc\n"), 0o664)
	os.Chmod(mod, 0o664)
	if got, err := Find(KindTPU); err != nil || got != planted {
		t.Errorf("Find(tpu) with go.mod mode 0664 = %q, %v; want %s", got, err, planted)
	}
	os.Chmod(top, 0o777)
	os.WriteFile(mod, []byte("module github.com/tpucc/tpucc\n"), 0o644)
	if _, err := ProjectRoot(); err == nil || !strings.Contains(err.Error(), "writable only by its owner") {
		t.Errorf("ProjectRoot in a directory anyone can write: %v", err)
	}
	os.Chmod(top, 0o700)

	venv := filepath.Join(t.TempDir(), "env")
	cuda := filepath.Join(site(venv), "jax_plugins")
	plant(t, 0o755, filepath.Join(cuda, "xla_cuda12", "xla_cuda_plugin.so"), filepath.Join(cuda, "xla_cuda13", "xla_cuda_plugin.so"))
	t.Setenv("VIRTUAL_ENV", venv)
	if got, err := Find(KindCUDA); err != nil || got != filepath.Join(cuda, "xla_cuda13", "xla_cuda_plugin.so") {
		t.Errorf("Find(cuda) in $VIRTUAL_ENV = %q, %v", got, err)
	}
	t.Setenv(EnvPlugin, "/x/named.so")
	if got, err := Find(KindCUDA); err != nil || got != "/x/named.so" {
		t.Errorf("Find(cuda) with $%s = %q, %v", EnvPlugin, got, err)
	}
}
