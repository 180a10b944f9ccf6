package pjrt

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFindOnPath finds the CUDA plugin of the Python environment whose
// python3 is first on $PATH (a machine image's JAX), the CUDA 13 package
// before the CUDA 12 one, and names both places when neither is there.
func TestFindOnPath(t *testing.T) {
	env := t.TempDir()
	site := filepath.Join(env, "lib", "python3.12", "site-packages")
	bin := filepath.Join(env, "bin")
	for _, f := range []string{
		filepath.Join(bin, "python3"),
		filepath.Join(site, "jax_plugins", "xla_cuda12", "xla_cuda_plugin.so"),
		filepath.Join(site, "jax_plugins", "xla_cuda13", "xla_cuda_plugin.so"),
	} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(EnvPlugin, "")
	t.Setenv("VIRTUAL_ENV", "")
	t.Setenv("PATH", bin)
	t.Chdir(t.TempDir())
	got, err := Find(KindCUDA)
	if want := filepath.Join(site, "jax_plugins", "xla_cuda13", "xla_cuda_plugin.so"); err != nil || got != want {
		t.Errorf("Find(cuda) = %q, %v; want %q", got, err, want)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = Find(KindCUDA)
	if want := "pjrt: no cuda plugin found; set TPUCC_PJRT_PLUGIN to its path (jax_plugins/xla_cuda13/xla_cuda_plugin.so, jax_plugins/xla_cuda12/xla_cuda_plugin.so inside a Python environment)"; err == nil || err.Error() != want {
		t.Errorf("Find(cuda) with no plugin: %v; want %s", err, want)
	}
}
