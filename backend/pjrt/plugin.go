package pjrt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The major version of the C API this package speaks. A plugin of another
// major version may have reordered the table or the structs.
const apiMajor = 0

// apiHeaderSize is the size of PJRT_Api's header before the function table:
// struct_size, extension_start and the 24-byte PJRT_Api_Version.
const apiHeaderSize = 40

// Plugin is a loaded PJRT plugin. It is never unloaded: plugins keep threads
// and global state alive after their last client is destroyed.
type Plugin struct {
	Path  string
	Major int
	Minor int

	api   uintptr
	nfn   int
	table []uintptr

	fd *os.File // the descriptor the library was opened through, kept open

	initOnce sync.Once
	initErr  error

	live atomic.Int64 // handles not yet closed
	// dropBuffer is destroyBuffer as a func value made once: a buffer's
	// cleanup takes it, so that wrapping a result allocates no closure.
	dropBuffer func(uintptr)
}

var (
	loadMu sync.Mutex
	loaded = map[string]*Plugin{}
	// openedFiles keeps open (and out of the collector's reach) the
	// descriptors of libraries opened but refused as plugins.
	openedFiles []*os.File
)

// EnvPlugin names the environment variable that selects a plugin's path.
const EnvPlugin = "TPUCC_PJRT_PLUGIN"

// LoadForCompile loads a TPU plugin to compile only (for topologies, with no
// chip driven). libtpu otherwise takes a multi-process lockfile, so that two
// processes never drive one chip, and refuses to load in a second process
// ("ABORTED: Internal error when accessing libtpu multi-process lockfile"):
// compiling drives no chip, so ALLOW_MULTIPLE_LIBTPU_LOAD=1 is set first, as
// the Python harness does, unless the environment already says otherwise.
func LoadForCompile(path string) (*Plugin, error) {
	if _, set := os.LookupEnv("ALLOW_MULTIPLE_LIBTPU_LOAD"); !set {
		os.Setenv("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")
	}
	return Load(path)
}

// Load opens the plugin at path (once per process and path) and checks its
// API version. Nothing of the file runs before it is checked: it must be a
// regular file owned by this user or root and writable by no one else; it
// is copied into the private directory (cacheBase/plugins), and the copy
// must be an ELF shared object for this machine that exports GetPjrtApi
// and, when $TPUCC_PJRT_PLUGIN_SHA256 is set, have that SHA-256; it is
// hashed again through the descriptor it is loaded from. libtpu is told not
// to query a cloud metadata server first, which otherwise stalls
// initialisation for minutes off a TPU VM.
func Load(path string) (*Plugin, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("pjrt: plugin %s: %w", path, err)
	}
	loadMu.Lock()
	p := loaded[abs]
	loadMu.Unlock()
	if p != nil {
		return p, nil
	}
	cp, sum, err := privateCopy(path)
	if err != nil {
		return nil, fmt.Errorf("pjrt: plugin %s: %w", path, err)
	}
	if want := os.Getenv(EnvPluginSHA256); want != "" && want != sum {
		return nil, fmt.Errorf("pjrt: plugin %s: SHA-256 %s, $%s wants %s: refusing to load it", path, sum, EnvPluginSHA256, want)
	}
	if err := checkELF(cp); err != nil {
		return nil, fmt.Errorf("pjrt: plugin %s: %w", path, err)
	}
	return loadVerified(cp, sum, path)
}

// loadAs opens the file at open and registers it under the name path. The
// plugin keeps keep, the descriptor open names, open; keep is closed when
// no plugin is made of it.
func loadAs(open, path string, keep *os.File) (_ *Plugin, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		keep.Close()
		return nil, fmt.Errorf("pjrt: plugin %s: %w", path, err)
	}
	loadMu.Lock()
	defer loadMu.Unlock()
	if p, ok := loaded[abs]; ok {
		keep.Close()
		return p, nil
	}
	opened := false
	defer func() {
		switch {
		case err != nil && !opened:
			keep.Close()
		case err != nil && keep != nil: // an opened library stays loaded, so must the name it has
			openedFiles = append(openedFiles, keep)
		}
	}()
	st, err := os.Stat(open)
	if err != nil {
		return nil, fmt.Errorf("pjrt: plugin %s: %w", path, errors.Unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("pjrt: plugin %s: not a regular file", path)
	}
	if os.Getenv("TPU_SKIP_MDS_QUERY") == "" {
		os.Setenv("TPU_SKIP_MDS_QUERY", "1")
	}
	lib, err := purego.Dlopen(open, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("pjrt: plugin %s: %v", path, err)
	}
	opened = true
	sym, err := purego.Dlsym(lib, "GetPjrtApi")
	if err != nil {
		return nil, fmt.Errorf("pjrt: plugin %s: no GetPjrtApi: not a PJRT plugin", path)
	}
	api, _, _ := purego.SyscallN(sym)
	p, err := newPlugin(abs, api)
	if err != nil {
		return nil, fmt.Errorf("pjrt: plugin %s: %w", path, err)
	}
	p.fd = keep
	loaded[abs] = p
	return p, nil
}

// newPlugin reads the PJRT_Api table at api and checks its version.
func newPlugin(path string, api uintptr) (*Plugin, error) {
	if api == 0 {
		return nil, errors.New("GetPjrtApi returned no table")
	}
	hdr := (*[5]uintptr)(cPtr(api))
	size := int(hdr[0])
	if size < apiHeaderSize+8*int(fnErrorGetCode+1) || size > 1<<16 {
		return nil, fmt.Errorf("PJRT_Api struct_size %d is not plausible", size)
	}
	ver := (*[2]int32)(cPtr(api + 32))
	p := &Plugin{Path: path, Major: int(ver[0]), Minor: int(ver[1]), api: api}
	if p.Major != apiMajor {
		return nil, fmt.Errorf("PJRT API version %d.%d, this client speaks %d.x", p.Major, p.Minor, apiMajor)
	}
	p.nfn = (size - apiHeaderSize) / 8
	p.table = unsafe.Slice((*uintptr)(cPtr(api+apiHeaderSize)), p.nfn)
	p.dropBuffer = p.destroyBuffer
	return p, nil
}

// Version is the plugin's API version as "major.minor".
func (p *Plugin) Version() string { return fmt.Sprintf("%d.%d", p.Major, p.Minor) }

// Functions is the number of entries in the plugin's function table.
func (p *Plugin) Functions() int { return p.nfn }

// Live is the number of handles from this plugin not yet closed.
func (p *Plugin) Live() int64 { return p.live.Load() }

// rawCall calls f with args and returns the PJRT_Error* as is. Only the
// error functions use it; they exist in every version.
func (p *Plugin) rawCall(f fnIndex, args unsafe.Pointer) uintptr {
	r, _, _ := purego.SyscallN(p.table[f], uintptr(args))
	return r
}

// call calls f with args, converting a returned PJRT_Error into an *Error.
// A function past the end of the plugin's table, or left empty, is an error
// rather than a jump into the unknown.
func (p *Plugin) call(f fnIndex, args unsafe.Pointer) error {
	if int(f) >= p.nfn || p.table[f] == 0 {
		return fmt.Errorf("pjrt: %s: not provided by plugin %s (API %s, %d functions)",
			f, filepath.Base(p.Path), p.Version(), p.nfn)
	}
	r, _, _ := purego.SyscallN(p.table[f], uintptr(args))
	runtime.KeepAlive(args)
	if r != 0 {
		return p.takeError(f, r)
	}
	return nil
}

// Initialize runs PJRT_Plugin_Initialize once; every entry point that
// creates an object calls it first.
func (p *Plugin) Initialize() error {
	p.initOnce.Do(func() {
		a := &pluginInitializeArgs{structSize: unsafe.Sizeof(pluginInitializeArgs{})}
		p.initErr = p.call(fnPluginInitialize, unsafe.Pointer(a))
	})
	return p.initErr
}
