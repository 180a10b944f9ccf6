package pjrt

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// projectVenvs is the virtual environment of the project (ProjectRoot)
// that holds each kind: .venv-tpu is `make venv-tpu`'s, .venv `make venv`'s,
// where JAX and, on a GPU machine, its CUDA plugin are installed.
var projectVenvs = map[Kind]string{KindTPU: ".venv-tpu", KindCUDA: ".venv"}

// ProjectModule is the module path whose go.mod marks ProjectRoot.
const ProjectModule = "github.com/tpucc/tpucc"

// Find returns the path of a plugin of kind from the places the user named
// and no others: $TPUCC_PJRT_PLUGIN when it is set; else the first match in
// the site-packages of the active virtual environment ($VIRTUAL_ENV, an
// absolute path), then of the project's own environment (.venv-tpu for TPU,
// .venv for CUDA, in ProjectRoot). Load checks the file it returns before
// any of it runs.
func Find(kind Kind) (string, error) {
	if p := os.Getenv(EnvPlugin); p != "" {
		return p, nil
	}
	files, ok := pluginFiles[kind]
	if !ok {
		return "", fmt.Errorf("pjrt: no known plugin of kind %q", kind)
	}
	var venvs []string
	if v := os.Getenv("VIRTUAL_ENV"); filepath.IsAbs(v) {
		venvs = append(venvs, v)
	}
	if root, err := ProjectRoot(); err == nil {
		venvs = append(venvs, filepath.Join(root, projectVenvs[kind]))
	}
	for _, v := range venvs {
		sites, _ := filepath.Glob(filepath.Join(v, "lib", "python3*", "site-packages"))
		for _, sp := range sites {
			for _, f := range files {
				p := filepath.Join(sp, f)
				if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
					return p, nil
				}
			}
		}
	}
	return "", fmt.Errorf("pjrt: no %s plugin found in $VIRTUAL_ENV or the project's %s; set %s to its path (%s inside a Python environment)",
		kind, projectVenvs[kind], EnvPlugin, strings.Join(files, ", "))
}

// ProjectRoot is the tpucc checkout the working directory is in: the
// nearest directory at or above it that holds a go.mod, provided that
// go.mod declares the module github.com/tpucc/tpucc and both it and its
// directory are owned by this user and writable by no one else (no write
// permission for others, nor for a group but the user's primary group). A go.mod
// planted in a shared parent (/tmp/go.mod) is someone else's file, or in a
// directory others can write, and makes no project.
func ProjectRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		mod := filepath.Join(dir, "go.mod")
		if _, err := os.Lstat(mod); err == nil {
			return dir, checkProject(dir, mod)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = parent
	}
}

// checkProject checks the ownership and module of the go.mod found.
func checkProject(dir, mod string) error {
	for _, p := range []string{dir, mod} {
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if uid := int(st.Sys().(*syscall.Stat_t).Uid); uid != os.Getuid() {
			return fmt.Errorf("%s: owned by user %d, not by this user (%d)", p, uid, os.Getuid())
		}
		if writableByOthers(st) || (p == mod && !st.Mode().IsRegular()) {
			return fmt.Errorf("%s: not a regular file or directory writable only by its owner (mode %s)", p, st.Mode())
		}
	}
	f, err := os.Open(mod)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<16))
	for sc.Scan() {
		if name, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			if strings.Trim(strings.TrimSpace(name), `"`) == ProjectModule {
				return nil
			}
			return fmt.Errorf("%s: module %s, not %s", mod, strings.TrimSpace(name), ProjectModule)
		}
	}
	return fmt.Errorf("%s: declares no module", mod)
}
