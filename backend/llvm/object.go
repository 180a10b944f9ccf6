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
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
	// ld is the link clang runs for -shared, with markers for the output
	// and the inputs (link.go), asked in the background; nil or no line:
	// links run through clang.
	ld *linker
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
		cmd := exec.Command(path, "--version")
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := runTool(cmd); err != nil {
			tcErr = fmt.Errorf("running %s --version: %v", path, err)
			return
		}
		first, _, _ := strings.Cut(out.String(), "\n")
		tc = &toolchain{clang: path, version: strings.TrimSpace(first), features: cpuFeatures(), ld: startLinker(path)}
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

// clangFlags compile a kernel module to an object file, and linkFlags link
// it into a shared object. libmvec (glibc's vector math, reached through
// -lm) lets loops calling exp, log, sin and cos vectorise; its results are
// within 4 ulps, inside the oracle's f32 tolerance. Compiling and linking
// are two runs of clang because clang compiles in its own process only
// when it has one job: given both, it spawns a separate cc1, which the
// parent-death signal (childAttr) does not reach, and which ran on for
// seconds after a killed run.
var (
	clangFlags = []string{"-O3", "-fno-unroll-loops", "-march=native", "-fPIC", "-fveclib=libmvec", "-Wno-override-module"}
	linkFlags  = []string{"-shared"}
)

// objectKey names an object by everything that decides its bytes.
func (t *toolchain) objectKey(irText string) string {
	h := sha256.New()
	fmt.Fprintf(h, "tpucc-llvm 1\n%s\n%s\n%q\n%q\n", t.version, t.features, clangFlags, linkFlags)
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
	cmd := exec.Command(as, "-o", os.DevNull, path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := runTool(cmd); err != nil {
		return fmt.Errorf("llvm: the generated module does not verify: %v\n%s", err, out.String())
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
	// Kernels is how many distinct kernels the program's object has, and
	// KernelsCached how many of them a cached part had, when it was
	// linked from parts (split.go); Parts is how many parts clang
	// compiled for it. All are zero when the object came whole from the
	// cache or was built whole.
	Kernels, KernelsCached, Parts int
	// ClangCPU is the CPU time clang (and the linker) took, all parts
	// together: Clang over it is how much of a core each run had.
	ClangCPU time.Duration
}

// toolCPU adds up the CPU time of build tools run at once.
type toolCPU struct{ atomic.Int64 }

func (c *toolCPU) get() time.Duration { return time.Duration(c.Load()) }

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

// openCache returns the cache at dir, swept of what dead builds left
// (sweep). When dir is not private (see ensurePrivate) it returns a
// fallback directory of this user's instead (fallbackDirs), with the
// reason dir was refused.
func openCache(dir string) (*objectCache, error) {
	err := ensurePrivate(dir)
	if err == nil {
		sweep(dir)
		return &objectCache{dir: dir}, nil
	}
	why := []string{err.Error()}
	for _, fb := range fallbackDirs(dir) {
		ferr := ensurePrivate(fb)
		if ferr == nil {
			sweep(fb)
			return &objectCache{dir: fb}, err
		}
		why = append(why, ferr.Error())
	}
	return nil, errors.New(strings.Join(why, "; and the fallback "))
}

// fallbackDirs are where objects go when the configured directory is
// refused, in order: the default directory (unless it is the one refused),
// then tpucc-llvm-UID in the temporary directory. Both are the same on
// every run, so a refused directory costs one warning, not a clang run
// and a leaked directory per run.
func fallbackDirs(refused string) []string {
	var dirs []string
	if base, err := os.UserCacheDir(); err == nil {
		if d := filepath.Join(base, "tpucc", "llvm"); filepath.Clean(d) != filepath.Clean(refused) {
			dirs = append(dirs, d)
		}
	}
	return append(dirs, filepath.Join(os.TempDir(), fmt.Sprintf("tpucc-llvm-%d", os.Getuid())))
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
// name (LLVM IR as name.ll, C as name.c), built once per key (once;
// lockFile says what happens when the lock cannot be had).
func (c *objectCache) build(t *toolchain, key, name, source string, times *BuildTimes) ([]byte, error) {
	return c.once(key, name, times, func(tmp string, cpu *toolCPU) ([]byte, error) {
		return clangBuild(t, tmp, name, source, cpu)
	})
}

// once returns key's verified object from the cache, else makes it with
// produce in a build directory of its own (clang's time counted in times) and
// installs it (produce writes the source there as name). Processes (and
// goroutines) that miss the same key make it once: the first takes
// KEY.lock, the others wait for it and find its object.
func (c *objectCache) once(key, name string, times *BuildTimes, produce func(tmp string, cpu *toolCPU) ([]byte, error)) ([]byte, error) {
	so := filepath.Join(c.dir, key+".so")
	sum := filepath.Join(c.dir, key+".sha256")
	if data, ok := c.cached(so, sum, times); ok {
		return data, nil
	}
	if release := lockFile(filepath.Join(c.dir, key+".lock"), lockTimeout); release != nil {
		defer release()
		if data, ok := c.cached(so, sum, times); ok {
			return data, nil
		}
	}
	t0 := time.Now()
	var cpu toolCPU
	defer func() { times.Clang += time.Since(t0); times.ClangCPU += cpu.get() }()
	tmp, done, err := buildDir(c.dir)
	if err != nil {
		return nil, fmt.Errorf("llvm: %v", err)
	}
	defer done()
	data, err := produce(tmp, &cpu)
	if err != nil {
		return nil, err
	}
	if err := c.install(tmp, key, name, data); err != nil {
		return nil, err
	}
	// data is what this build produced and hashed, read from a directory
	// only this call writes; the cache's copy may already be another's.
	return data, nil
}

// cached returns the cache's verified object, if it has one.
func (c *objectCache) cached(so, sum string, times *BuildTimes) ([]byte, bool) {
	tv := time.Now()
	data, err := verifyObject(so, sum)
	if err != nil {
		return nil, false
	}
	times.Cached = true
	times.Load += time.Since(tv)
	return data, true
}

// clangBuild writes source to name in the build directory tmp and builds
// it into tmp/kernels.so, whose bytes it returns.
func clangBuild(t *toolchain, tmp, name, source string, cpu *toolCPU) ([]byte, error) {
	ll := filepath.Join(tmp, name)
	out := filepath.Join(tmp, "kernels.so")
	if err := os.WriteFile(ll, []byte(source), 0o600); err != nil {
		return nil, fmt.Errorf("llvm: %v", err)
	}
	if err := verifyModule(ll); err != nil {
		return nil, err
	}
	obj := filepath.Join(tmp, "kernels.o")
	clangRuns.Add(1)
	if err := runClang(t, compileArgs(obj, ll), cpu); err != nil {
		return nil, err
	}
	if err := linkObjects(t, out, []string{obj}, nil, cpu); err != nil {
		return nil, err
	}
	data, err := readRegular(out, maxObject)
	if err != nil {
		return nil, fmt.Errorf("llvm: %v", err)
	}
	return data, nil
}

// compileArgs is clang's command line compiling src to the object file obj.
func compileArgs(obj, src string) []string {
	return append(append([]string{}, clangFlags...), "-c", "-o", obj, src)
}

// runClang runs clang with args, adding the CPU time it took to cpu.
func runClang(t *toolchain, args []string, cpu *toolCPU) error {
	return runBuild(t.clang, args, cpu)
}

// linkObjects links objs into the shared object out, defining defsyms
// (NAME=SYMBOL), adding the CPU time it took to cpu (linkCommand).
func linkObjects(t *toolchain, out string, objs, defsyms []string, cpu *toolCPU) error {
	prog, args := t.linkCommand(out, objs, defsyms)
	return runBuild(prog, args, cpu)
}

// runBuild runs the build tool prog (clang, the linker) with args, adding
// the CPU time it took (with any child it ran) to cpu.
func runBuild(prog string, args []string, cpu *toolCPU) error {
	cmd := exec.Command(prog, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := runTool(cmd)
	if ps := cmd.ProcessState; ps != nil {
		cpu.Add(int64(ps.UserTime() + ps.SystemTime()))
	}
	if err != nil {
		return fmt.Errorf("llvm: %s failed: %v\n%s", filepath.Base(prog), toolError(err), stderr.String())
	}
	return nil
}

// toolError is a build tool's failure as the user should read it: a tool
// killed for writing past the file size limit (SIGXFSZ, a full quota) says
// that a file was too large, as a write of Go's own does; clang's driver
// said so for the linker it ran, and the linker is now run directly.
func toolError(err error) error {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGXFSZ {
			return fmt.Errorf("%v: a file it wrote grew past the file size limit: file too large", err)
		}
	}
	return err
}

// install moves a build's object (hashed as data), its record and its
// source from tmp into the cache under key. The record is written in the
// build's own directory and both files are renamed into place: compiles of
// one key may run at once (a process whose lock wait timed out, say), and
// a shared temporary name let one rename away the other's record. Renames
// replace atomically; should two builds leave an object and a record that
// do not match, the next reader rebuilds, as for any corrupt object.
// Whatever is not a regular file at the key's names (a directory, a FIFO)
// is removed first, or the renames would fail.
func (c *objectCache) install(tmp, key, name string, data []byte) error {
	h := sha256.Sum256(data)
	tmpSum := filepath.Join(tmp, "kernels.sha256")
	if err := os.WriteFile(tmpSum, []byte(hex.EncodeToString(h[:])), 0o600); err != nil {
		return fmt.Errorf("llvm: %v", err)
	}
	so := filepath.Join(c.dir, key+".so")
	sum := filepath.Join(c.dir, key+".sha256")
	src := filepath.Join(c.dir, key+filepath.Ext(name))
	for _, p := range []string{so, sum, src} {
		clearOdd(p)
	}
	// The source stays beside its object, for reading what was generated.
	_ = os.Rename(filepath.Join(tmp, name), src)
	if err := os.Rename(filepath.Join(tmp, "kernels.so"), so); err != nil {
		return fmt.Errorf("llvm: %v", err)
	}
	if err := os.Rename(tmpSum, sum); err != nil {
		return fmt.Errorf("llvm: %v", err)
	}
	return nil
}

// runTool runs a build tool (clang, llvm-as) as a child that dies with
// this process (childAttr). Linux sends the parent-death signal when the
// starting thread exits, and Go may end a thread at any time: the
// goroutine keeps its thread until the child is done.
func runTool(cmd *exec.Cmd) error {
	cmd.SysProcAttr = childAttr()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return cmd.Run()
}

// verifyObject reads so and its record sum (each a regular file of bounded
// size, see readRegular) and returns the object's bytes if their SHA-256
// is the one recorded.
func verifyObject(so, sum string) ([]byte, error) {
	want, err := readRegular(sum, maxRecord)
	if err != nil {
		return nil, err
	}
	data, err := readRegular(so, maxObject)
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
	leave := enterGate(c.dir) // until the copy is removed: see gateFile
	defer leave()
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
