package pjrt

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Kind names a family of plugins Find knows where to look for.
type Kind string

const (
	KindTPU  Kind = "tpu"  // libtpu, from the libtpu pip package
	KindCUDA Kind = "cuda" // xla_cuda_plugin.so, from jax-cuda13-pjrt or jax-cuda12-pjrt
)

// pluginFiles is where each kind lives inside a Python site-packages.
var pluginFiles = map[Kind][]string{
	KindTPU:  {"libtpu/libtpu.so"},
	KindCUDA: {"jax_plugins/xla_cuda13/xla_cuda_plugin.so", "jax_plugins/xla_cuda12/xla_cuda_plugin.so"},
}

// Find returns the path of a plugin of kind: $TPUCC_PJRT_PLUGIN when set,
// else the first match in the site-packages of the virtual environments
// .venv-tpu and .venv under the working directory and its parents, of
// $VIRTUAL_ENV, and of the environment of the python3 on $PATH (where a
// machine's image keeps JAX and its plugins).
func Find(kind Kind) (string, error) {
	if p := os.Getenv(EnvPlugin); p != "" {
		return p, nil
	}
	files, ok := pluginFiles[kind]
	if !ok {
		return "", fmt.Errorf("pjrt: no known plugin of kind %q", kind)
	}
	for _, sp := range sitePackages() {
		for _, f := range files {
			p := filepath.Join(sp, f)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
		}
	}
	return "", errors.New("pjrt: no " + string(kind) + " plugin found; set " + EnvPlugin +
		" to its path (" + strings.Join(files, ", ") + " inside a Python environment)")
}

// sitePackages lists candidate site-packages directories, nearest first.
func sitePackages() []string {
	var venvs []string
	if v := os.Getenv("VIRTUAL_ENV"); v != "" {
		venvs = append(venvs, v)
	}
	if dir, err := os.Getwd(); err == nil {
		for {
			venvs = append(venvs, filepath.Join(dir, ".venv-tpu"), filepath.Join(dir, ".venv"))
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	if py, err := exec.LookPath("python3"); err == nil {
		// Not resolved through symbolic links: a virtual environment's
		// python3 links to the system's, whose prefix holds none of its
		// packages.
		venvs = append(venvs, filepath.Dir(filepath.Dir(py)))
	}
	var out []string
	for _, v := range venvs {
		m, _ := filepath.Glob(filepath.Join(v, "lib", "python3*", "site-packages"))
		out = append(out, m...)
	}
	return out
}
