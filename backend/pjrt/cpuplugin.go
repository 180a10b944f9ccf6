package pjrt

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// The XLA:CPU plugin the tests run on: one pinned build, fetched by `make
// pjrt-cpu-plugin` (tools/pjrtcpu/fetch.sh; docs/PJRT.md has its
// provenance). The hash is checked again here, on the file as opened,
// before it is loaded.
const (
	CPUPluginVersion = "0.11.2"
	cpuPluginFile    = "pjrt_c_api_cpu_plugin.so"
	cpuPluginSHA256  = "ad1309ac822b1b24d51b7f9947c7c9fa9ef5d67f390584cbc3d1fa2428fed9c2"
)

// CPUPluginDir is the private directory `make pjrt-cpu-plugin` fills:
// $TPUCC_PJRT_CACHE, else $XDG_CACHE_HOME/tpucc-pjrt, else
// ~/.cache/tpucc-pjrt, then cpu-VERSION.
func CPUPluginDir() (string, error) {
	base, err := cacheBase()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "cpu-"+CPUPluginVersion), nil
}

// LoadCPU loads the pinned XLA:CPU plugin from CPUPluginDir after checking
// that the directory is private (owned by this user, mode 0700), that the
// plugin is a regular file owned by this user and not writable by others, and
// that its SHA-256 is the pinned one.
func LoadCPU() (*Plugin, error) {
	dir, err := CPUPluginDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, cpuPluginFile)
	if err := checkPrivate(dir, true); err != nil {
		return nil, fmt.Errorf("pjrt: CPU plugin: %w (run make pjrt-cpu-plugin)", err)
	}
	if err := checkPrivate(path, false); err != nil {
		return nil, fmt.Errorf("pjrt: CPU plugin: %w", err)
	}
	return LoadVerified(path, cpuPluginSHA256)
}

// checkPrivate refuses a path not owned by this user or writable by others;
// a directory must have mode 0700 exactly.
func checkPrivate(path string, isDir bool) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if isDir != st.IsDir() || (!isDir && !st.Mode().IsRegular()) {
		return fmt.Errorf("%s: not a regular %s", path, map[bool]string{true: "directory", false: "file"}[isDir])
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return fmt.Errorf("%s: owned by user %d, not by this user (%d)", path, sys.Uid, os.Getuid())
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s: writable by others (mode %#o)", path, st.Mode().Perm())
	}
	if isDir && st.Mode().Perm() != 0o700 {
		return fmt.Errorf("%s: mode %#o, want 0700", path, st.Mode().Perm())
	}
	return nil
}

// LoadVerified loads the plugin at path only if its SHA-256 is want. The
// file is hashed through an open descriptor and loaded through the same
// descriptor (/proc/self/fd), so what is loaded is what was hashed.
func LoadVerified(path, want string) (*Plugin, error) {
	return loadVerified(path, want, path)
}

// loadVerified is LoadVerified of the file at path, registered and named
// in errors as name. The descriptor stays open once the plugin is loaded:
// the dynamic loader knows a library by the name it was opened by, and a
// later /proc/self/fd/N of a reused descriptor number would be taken for
// this plugin (plugins are never unloaded anyway).
func loadVerified(path, want, name string) (*Plugin, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pjrt: plugin %s: %w", name, errors.Unwrap(err))
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		f.Close()
		return nil, fmt.Errorf("pjrt: plugin %s: %v", name, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		f.Close()
		return nil, fmt.Errorf("pjrt: plugin %s: SHA-256 %s, want %s: refusing to load it", name, got, want)
	}
	fdPath := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	if _, err := os.Stat(fdPath); err != nil {
		fdPath = path // no /proc: the private directory is the guard
	}
	return loadAs(fdPath, name, f)
}
