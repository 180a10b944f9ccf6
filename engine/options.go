package engine

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/lower/stablehlo"
)

// Version is the compiler version written into every cache key. It must
// change with every change that can change a compiled program for the same
// input (a pass, the pass list, constant folding, the lowering, the entry
// format), so that persistent entries of older compilers are never used:
// docs/CACHE.md says when, and TestVersionFingerprint fails when the
// compiler's output on its corpus changed and Version did not.
const Version = "tpucc-0.3.8" // 0.3.8: the cpu target keeps views and in-place updates row-major (assign-layout), ordered sub-byte values lowered in eight bits; 0.3.7: contract and moe-route inside regions, convolution and windows, complex and unsigned dtypes, bit ops

// Defaults, chosen as torch.compile's: 8 specialisations per function and a
// larger cap on everything a function may hold.
const (
	DefaultRecompileLimit = 8
	DefaultMaxPrograms    = 64
)

// Policy is what a Function does with a call that would need a compile past
// its limit.
type Policy uint8

const (
	// LimitError returns an error for every call that needs a new program.
	LimitError Policy = iota
	// LimitEager runs such calls eagerly (Program.Eager), uncompiled.
	LimitEager
	// LimitPanic panics with the error (torch's fail-on-recompile-limit).
	LimitPanic
)

func (p Policy) String() string {
	switch p {
	case LimitError:
		return "error"
	case LimitEager:
		return "eager"
	case LimitPanic:
		return "panic"
	}
	return fmt.Sprintf("Policy(%d)", uint8(p))
}

// DimRef names one dimension of one tensor argument (argument indices count
// every parameter, static ones included).
type DimRef struct{ Arg, Dim int }

func (d DimRef) String() string { return fmt.Sprintf("arg %d dim %d", d.Arg, d.Dim) }

// Options configure a Function. The zero value is usable: name from the
// program, target cpu, automatic dynamic dimensions with power-of-two
// buckets, limit 8 with LimitError, the process's default cache.
type Options struct {
	Name string // shown in logs; also part of the function's identity
	Pos  ir.Pos // where the function is defined, shown in logs as file:line
	// Identity distinguishes functions in the persistent key (the Go symbol
	// name, say); "" means Name. The key also holds the traced program's
	// hash, so a wrong identity can cost hits but never give a wrong result.
	Identity string
	Target   string // one of Targets(); "" is cpu
	// Backend names the backend that runs the compiled programs (backend.Names;
	// "" is the default device's: backend.CPUDefault on the cpu). Its name and fingerprint are part of the key.
	Backend string
	// Device names the device to run on instead (Devices: cpu, pjrt, tpu,
	// gpu): its backend is opened, and a device the machine lacks is an
	// error. Backend and Device are exclusive.
	Device  string
	backend backend.Backend // opened by check

	// KeepOnDevice leaves results in the device's memory, read back to the
	// host only when something reads them; passed to the next call they
	// are not copied. Backends that run on the host ignore it.
	KeepOnDevice bool
	// Donate lists tensor arguments (by position among all arguments) that
	// each call consumes: the device may reuse their memory, and using one
	// again is an error.
	Donate []int
	// Precision is the precision of every product on the device: "" or
	// "default", "high", "highest" (stablehlo.Options.Precision). XLA runs
	// f32 products of default precision in TF32 on an NVIDIA GPU and in one
	// bf16 pass on a TPU; "highest" keeps f32. Part of the key.
	Precision string

	// Mesh, when set, splits the function's programs over its devices:
	// each argument named in Shardings is split as it says, and each result
	// named in ResultShardings (Arg is then the result's position); the
	// others are replicated (docs/SHARDING.md). The pjrt backend runs them
	// on the mesh's devices; backends on one host run them whole. A result
	// fed back as an argument (a KV cache) should be split as that
	// argument is, so that it stays where it lies between calls.
	Mesh            *ir.Mesh
	Shardings       []ArgSharding
	ResultShardings []ArgSharding

	// Dynamic lists dimensions bucketed from the first call on.
	Dynamic []DimRef
	// NoAutoDynamic turns automatic dynamic dimensions off: every new size
	// is an exact-shape compile, as in a plain shape-keyed cache.
	NoAutoDynamic bool
	// Buckets are the sizes a dynamic dimension is padded up to, ascending;
	// nil means powers of two. A size above the last bucket is compiled exactly.
	Buckets []int64

	// RecompileLimit caps the specialisations of the function: programs
	// that differ in anything but the bucket of a dynamic dimension. 0 is
	// DefaultRecompileLimit; negative means no limit.
	RecompileLimit int
	// MaxPrograms caps all programs of the function, buckets included.
	// 0 is DefaultMaxPrograms; negative means no limit.
	MaxPrograms int
	OnLimit     Policy
	// MaxRoutes caps the exact call shapes the function remembers, each
	// with the program (and padding) that serves it; past it the least
	// recently used are forgotten and resolved again when they return.
	// 0 is DefaultMaxRoutes; negative means no limit.
	MaxRoutes int

	// Cache holds compiled programs across functions and processes; nil is
	// DefaultCache().
	Cache *Cache
	// Log receives one line per recompile (as TPUCC_LOGS=recompiles prints
	// them) when not nil; with TPUCC_LOGS set and Log nil, lines go to stderr.
	Log io.Writer
	// Warn receives warnings (the limit, corrupt cache entries); nil is stderr.
	Warn io.Writer
}

// check validates o and fills in defaults.
func (o Options) check() (Options, error) {
	if o.Target == "" {
		o.Target = "cpu"
	}
	if _, err := LookupTarget(o.Target); err != nil {
		return o, err
	}
	var b backend.Backend
	var err error
	switch {
	case o.Device != "" && o.Backend != "":
		return o, fmt.Errorf("both a backend (%s) and a device (%s) are given", o.Backend, o.Device)
	case o.Device != "":
		b, err = OpenDevice(o.Device)
	default:
		b, err = OpenBackend(o.Backend)
	}
	if err != nil {
		return o, err
	}
	o.backend, o.Backend = b, b.Name()
	if o.Name == "" {
		o.Name = "fn"
	}
	if o.Identity == "" {
		o.Identity = o.Name
	}
	for i, b := range o.Buckets {
		if b < 1 || (i > 0 && b <= o.Buckets[i-1]) {
			return o, fmt.Errorf("buckets must be positive and ascending, got %v", o.Buckets)
		}
	}
	if err := stablehlo.CheckPrecision(o.Precision); err != nil {
		return o, err
	}
	for _, i := range o.Donate {
		if i < 0 {
			return o, fmt.Errorf("donated argument %d: want an argument's position", i)
		}
	}
	if o.Mesh == nil && len(o.Shardings) > 0 {
		return o, fmt.Errorf("argument %d is sharded, but no mesh is given", o.Shardings[0].Arg)
	}
	if o.Mesh == nil && len(o.ResultShardings) > 0 {
		return o, fmt.Errorf("result %d is sharded, but no mesh is given", o.ResultShardings[0].Arg)
	}
	for _, d := range o.Dynamic {
		if d.Arg < 0 || d.Dim < 0 {
			return o, fmt.Errorf("bad dynamic dimension %s", d)
		}
	}
	switch {
	case o.RecompileLimit == 0:
		o.RecompileLimit = DefaultRecompileLimit
	case o.RecompileLimit < 0:
		o.RecompileLimit = int(^uint(0) >> 1)
	}
	switch {
	case o.MaxPrograms == 0:
		o.MaxPrograms = DefaultMaxPrograms
	case o.MaxPrograms < 0:
		o.MaxPrograms = int(^uint(0) >> 1)
	}
	if o.MaxRoutes == 0 {
		o.MaxRoutes = DefaultMaxRoutes
	}
	if o.OnLimit > LimitPanic {
		return o, fmt.Errorf("unknown limit policy %d", o.OnLimit)
	}
	if o.Cache == nil {
		o.Cache = DefaultCache()
	}
	if o.Warn == nil {
		o.Warn = stderr
	}
	// The cache topic prints every explain line, the recompiles among them.
	if o.Log == nil && logTopic("recompiles") && !logTopic("cache") {
		o.Log = stderr
	}
	return o, nil
}

// stderr is where TPUCC_LOGS lines and warnings go by default (a variable
// so that tests can capture it).
var stderr io.Writer = os.Stderr

// logTopics are the words TPUCC_LOGS (a comma-separated list, as
// TORCH_LOGS) takes: recompiles, cache, fallback, and all for every one.
var logTopics = []string{"recompiles", "cache", "fallback", "all"}

// logTopic reports whether TPUCC_LOGS names topic (or all). A word that is
// not a topic is ignored after one warning per process naming the valid
// ones: a log setting should not stop a program from running.
func logTopic(topic string) bool {
	on := false
	for t := range strings.SplitSeq(os.Getenv("TPUCC_LOGS"), ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "+")
		switch {
		case t == topic || t == "all":
			on = true
		case t != "" && !slices.Contains(logTopics, t):
			warnLogWord(t)
		}
	}
	return on
}

var (
	logWarnMu sync.Mutex
	logWarned = map[string]bool{}
)

func warnLogWord(w string) {
	logWarnMu.Lock()
	defer logWarnMu.Unlock()
	if logWarned[w] {
		return
	}
	logWarned[w] = true
	fmt.Fprintf(stderr, "tpucc: warning: TPUCC_LOGS: unknown word %q ignored (valid: %s)\n", w, strings.Join(logTopics, ", "))
}

// bucket returns the size a dynamic dimension of size n is padded to, or
// ok=false when no bucket holds it.
func (o *Options) bucket(n int64) (int64, bool) {
	if o.Buckets == nil {
		b := int64(1)
		for b < n {
			if b > 1<<61 {
				return 0, false
			}
			b <<= 1
		}
		return b, true
	}
	for _, b := range o.Buckets {
		if b >= n {
			return b, true
		}
	}
	return 0, false
}

func (o *Options) isDynamic(arg, dim int) bool {
	return slices.Contains(o.Dynamic, DimRef{arg, dim})
}
