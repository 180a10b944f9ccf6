package llvm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ebitengine/purego"

	"github.com/tpucc/tpucc/internal/privdir"
)

// maxObject bounds what is read back from the cache: a kernel object is a
// few hundred KiB, so anything past this is not ours.
const maxObject = 256 << 20

// toolchain is the clang that builds kernels and what it builds for. Its
// description (clang's version line and the CPU's features) is part of every
// object's key: a new clang or another machine never loads an old object.
type toolchain struct {
	clang    string
	version  string
	features string
}

var (
	tcOnce sync.Once
	tc     *toolchain
	tcErr  error
)

// findToolchain locates clang once per process.
func findToolchain() (*toolchain, error) {
	tcOnce.Do(func() {
		path, err := exec.LookPath("clang")
		if err != nil {
			tcErr = fmt.Errorf("the llvm backend needs clang on PATH (make clang installs it): %v", err)
			return
		}
		out, err := exec.Command(path, "--version").Output()
		if err != nil {
			tcErr = fmt.Errorf("running %s --version: %v", path, err)
			return
		}
		first, _, _ := strings.Cut(string(out), "\n")
		tc = &toolchain{clang: path, version: strings.TrimSpace(first), features: cpuFeatures()}
	})
	return tc, tcErr
}

// cpuFeatures is the flags line of /proc/cpuinfo (sorted as the kernel
// writes it): -march=native code is only valid where they all hold.
func cpuFeatures() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// hasFlag reports whether the flags line lists flag.
func hasFlag(flags, flag string) bool {
	return slices.Contains(strings.Fields(flags), flag)
}

// clangFlags build a kernel module. libmvec (glibc's vector math, reached
// through -lm) lets loops calling exp, log, sin and cos vectorise; its
// results are within 4 ulps, inside the oracle's f32 tolerance.
var clangFlags = []string{"-O3", "-march=native", "-shared", "-fPIC", "-fveclib=libmvec", "-Wno-override-module"}

// objectKey names an object by everything that decides its bytes.
func (t *toolchain) objectKey(irText string) string {
	h := sha256.New()
	fmt.Fprintf(h, "tpucc-llvm 1\n%s\n%s\n%q\n", t.version, t.features, clangFlags)
	io.WriteString(h, irText)
	return hex.EncodeToString(h.Sum(nil))
}

// verifyIR makes every generated module pass LLVM's verifier (llvm-as)
// before clang builds it: set by this package's tests and by
// TPUCC_LLVM_VERIFY=1 (make test sets it for every package). Release builds of clang skip
// the verifier on their input (the driver passes -disable-llvm-verifier),
// so a module that uses a value where its definition does not dominate
// compiled without a word into wrong code (FuzzDifferential found one, in
// a dot's epilogue, 2026-12-05).
var verifyIR atomic.Bool

func init() { verifyIR.Store(os.Getenv("TPUCC_LLVM_VERIFY") == "1") }

// verifyModule runs llvm-as on the module at path when verifyIR is set and
// llvm-as is installed (Debian's clang recommends llvm, which has it).
func verifyModule(path string) error {
	if !verifyIR.Load() || !strings.HasSuffix(path, ".ll") {
		return nil
	}
	as, err := exec.LookPath("llvm-as")
	if err != nil {
		return nil
	}
	out, err := exec.Command(as, "-o", os.DevNull, path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("llvm: the generated module does not verify: %v\n%s", err, out)
	}
	return nil
}

// clangRuns counts clang's runs in this process (ClangRuns).
var clangRuns atomic.Int64

// ClangRuns is how many times this process has run clang to build an
// object: a test asserts that a program found in a persistent cache (the
// runtime's or this backend's) cost none.
func ClangRuns() int64 { return clangRuns.Load() }

// BuildTimes is what getting one program's object cost.
type BuildTimes struct {
	IRGen  time.Duration // generating the LLVM IR text
	Clang  time.Duration // clang (zero when the cache had the object)
	Load   time.Duration // hashing, dlopen and symbol lookup
	Cached bool          // the object came from the cache
}

// objectCache keeps built objects in a private directory: file KEY.so beside
// KEY.sha256, the object's own SHA-256 recorded when clang wrote it.
type objectCache struct{ dir string }

// defaultCacheDir is $TPUCC_LLVM_CACHE, else tpucc/llvm under the user's
// cache directory.
func defaultCacheDir() string {
	if d := os.Getenv("TPUCC_LLVM_CACHE"); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "tpucc", "llvm")
}

var (
	fallbackOnce sync.Once
	fallbackDir  string
	fallbackErr  error
)

// openCache returns the cache at dir, or, when dir is not private (see
// checkPrivate), a directory private to this process, with the reason dir
// was refused.
func openCache(dir string) (*objectCache, error) {
	err := ensurePrivate(dir)
	if err == nil {
		return &objectCache{dir: dir}, nil
	}
	fallbackOnce.Do(func() { fallbackDir, fallbackErr = os.MkdirTemp("", "tpucc-llvm-") })
	if fallbackErr != nil {
		return nil, fmt.Errorf("%v; and no private temporary directory: %v", err, fallbackErr)
	}
	return &objectCache{dir: fallbackDir}, err
}

// ensurePrivate creates dir 0700 if needed and refuses it unless it is
// private (internal/privdir's rules: a real directory, ours, writable by
// no one else): loading an object runs its code, so nobody else may be
// able to put one there.
func ensurePrivate(dir string) error {
	if err := privdir.Ensure(dir); err != nil {
		return fmt.Errorf("llvm cache directory: %v: refusing to load code from it", err)
	}
	return nil
}

// object returns the bytes of a verified object for irText, building it
// with clang when the cache has none or holds one whose hash does not match
// the recorded one (a corrupt object is rebuilt, never loaded). A cached
// object's hash is checked on the very bytes returned, which are what gets
// loaded; a built one is returned as clang wrote it in this call's own
// directory.
func (c *objectCache) object(t *toolchain, key, irText string, times *BuildTimes) ([]byte, error) {
	return c.build(t, key, "kernels.ll", irText, times)
}

// build is object for a source of any language clang takes by its file
// name (LLVM IR as name.ll, C as name.c).
func (c *objectCache) build(t *toolchain, key, name, source string, times *BuildTimes) ([]byte, error) {
	so := filepath.Join(c.dir, key+".so")
	sum := filepath.Join(c.dir, key+".sha256")
	tv := time.Now()
	if data, err := verifyObject(so, sum); err == nil {
		times.Cached = true
		times.Load += time.Since(tv)
		return data, nil
	}
	t0 := time.Now()
	defer func() { times.Clang += time.Since(t0) }()
	tmp, err := os.MkdirTemp(c.dir, "build-")
	if err != nil {
		return nil, fmt.Errorf("llvm: %v", err)
	}
	defer os.RemoveAll(tmp)
	ll := filepath.Join(tmp, name)
	out := filepath.Join(tmp, "kernels.so")
	if err := os.WriteFile(ll, []byte(source), 0o600); err != nil {
		return nil, fmt.Errorf("llvm: %v", err)
	}
	if err := verifyModule(ll); err != nil {
		return nil, err
	}
	args := append(append([]string{}, clangFlags...), "-o", out, ll, "-lm")
	clangRuns.Add(1)
	cmd := exec.Command(t.clang, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("llvm: clang failed: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("llvm: %v", err)
	}
	h := sha256.Sum256(data)
	// The record is written in this build's own directory and both files
	// are renamed into place: compiles of one key may run at once (in this
	// process or another), and a shared temporary name let one rename away
	// the other's record. Renames replace atomically; should two builds
	// leave an object and a record that do not match, the next reader
	// rebuilds, as for any corrupt object.
	tmpSum := filepath.Join(tmp, "kernels.sha256")
	if err := os.WriteFile(tmpSum, []byte(hex.EncodeToString(h[:])), 0o600); err != nil {
		return nil, fmt.Errorf("llvm: %v", err)
	}
	// The IR stays beside its object, for reading what was generated.
	_ = os.Rename(ll, filepath.Join(c.dir, key+filepath.Ext(name)))
	if err := os.Rename(out, so); err != nil {
		return nil, fmt.Errorf("llvm: %v", err)
	}
	if err := os.Rename(tmpSum, sum); err != nil {
		return nil, fmt.Errorf("llvm: %v", err)
	}
	// data is what this build produced and hashed, read from a directory
	// only this call writes; the cache's copy may already be another's.
	return data, nil
}

// verifyObject reads so, a regular file of bounded size, and returns its
// bytes if their SHA-256 is the one recorded in sum.
func verifyObject(so, sum string) ([]byte, error) {
	want, err := os.ReadFile(sum)
	if err != nil {
		return nil, err
	}
	fi, err := os.Lstat(so)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxObject {
		return nil, fmt.Errorf("llvm: %s is not a regular file of at most %d bytes", so, maxObject)
	}
	data, err := os.ReadFile(so)
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(data)
	if hex.EncodeToString(h[:]) != strings.TrimSpace(string(want)) {
		return nil, errors.New("llvm: object hash does not match its record")
	}
	return data, nil
}

// open dlopens verified object bytes from a private copy (loadable), which
// it removes once loaded; what names the object in an error.
func (c *objectCache) open(data []byte, what string) (uintptr, error) {
	so, err := c.loadable(data)
	if err != nil {
		return 0, err
	}
	defer os.Remove(so)
	lib, err := purego.Dlopen(so, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return 0, fmt.Errorf("llvm: loading %s: %v", what, err)
	}
	return lib, nil
}

// loadable writes verified object bytes to a new file of its own in the
// private directory, for dlopen: each load gets a fresh path (so the
// loader never hands back an older object of the same name), and nothing
// done to the cache afterwards reaches code already loaded. The file is
// removed by the caller once loaded.
func (c *objectCache) loadable(data []byte) (string, error) {
	f, err := os.CreateTemp(c.dir, "load-*.so")
	if err != nil {
		return "", fmt.Errorf("llvm: %v", err)
	}
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("llvm: %v", werr)
	}
	return f.Name(), nil
}
