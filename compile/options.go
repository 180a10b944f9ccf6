package compile

import (
	"io"
	"strings"
	"sync"

	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// Option configures New and Func.
type Option func(*engine.Options)

// Policy is what a compiled function does with a call past its limit.
type Policy = engine.Policy

// The limit policies (see engine.Policy).
const (
	LimitError = engine.LimitError // the call fails (Func: panics unless f returns an error)
	LimitEager = engine.LimitEager // the call runs f eagerly, uncompiled
	LimitPanic = engine.LimitPanic // the call panics
)

// Name names the function in logs and in the cache key (default: the Go
// function's name, "mlp" for main.mlp).
func Name(name string) Option { return func(o *engine.Options) { o.Name = name } }

// Target selects the target ("cpu", the default, or a TPU generation such
// as "tpu-v5e"): what the passes optimise for (layouts, fusion) and what
// Lower's module is for. The target is part of the key.
func Target(target string) Option { return func(o *engine.Options) { o.Target = target } }

// Backend selects the backend that runs the compiled programs by its
// registered name: "llvm" (native code built by clang, the cpu device's
// default, backend.CPUDefault), "reference" (the reference executor, exact
// and slow), or a PJRT backend ("pjrt", "pjrt-tpu", "pjrt-gpu"). A backend
// named here never falls back; an unknown name is an error of New. The
// backend is part of the key.
func Backend(name string) Option { return func(o *engine.Options) { o.Backend = name } }

// Device selects the device that runs the compiled programs: "cpu" (this
// host: the llvm backend, or the reference executor with one warning where
// clang is missing; backend.OpenCPU), "pjrt" (XLA:CPU through PJRT), "tpu" or
// "gpu" (through their PJRT plugins). Without Device or Backend the default
// is a TPU when the machine has TPU chips, else the CPU. A device the
// machine lacks is an error of New ("device tpu: no TPU device on this
// machine ..."). The device's backend is part of the key.
func Device(name string) Option { return func(o *engine.Options) { o.Device = name } }

// KeepOnDevice leaves the results of calls in the device's memory: the
// tensors returned are copied to the host only when read (Float32s, String,
// an eager op), and passed to the next call they are not copied at all.
// Backends that run on the host (cpu) ignore it.
func KeepOnDevice() Option { return func(o *engine.Options) { o.KeepOnDevice = true } }

// Donate marks the arguments at the given positions consumed by each call,
// as JAX's donate_argnums does: the StableHLO marks them as donors, so that
// on a PJRT device XLA writes a result of the same type into a donated
// argument's memory (docs/PJRT.md); after the call their device memory is
// released, and using such a tensor again (as an argument, or reading it)
// is an error that names the call it was donated to. On the cpu device the
// llvm backend writes a dynamic_update_slice of a donated argument (a KV
// cache) into the argument's storage and returns it (docs/CPU_BACKEND.md);
// the reference backend ignores the marks.
func Donate(args ...int) Option {
	return func(o *engine.Options) { o.Donate = append(o.Donate, args...) }
}

// Precision sets the precision of every matrix product on the device, as
// JAX's default_matmul_precision: "default", "high" or "highest". XLA runs
// an f32 product of default precision in TF32 on an NVIDIA GPU and in one
// bf16 pass on a TPU (JAX's defaults too); "highest" computes it in f32
// there (six bf16 passes on a TPU). tpucc's CPU backends compute f32
// products in f32 whatever it says. An unknown name is an error of New.
func Precision(p string) Option { return func(o *engine.Options) { o.Precision = p } }

// Dynamic marks dimension dim of parameter arg dynamic from the first call:
// calls are padded up to a bucket where that is provably safe.
func Dynamic(arg, dim int) Option {
	return func(o *engine.Options) { o.Dynamic = append(o.Dynamic, engine.DimRef{Arg: arg, Dim: dim}) }
}

// Buckets sets the sizes dynamic dimensions are padded up to (ascending);
// the default is powers of two.
func Buckets(sizes ...int64) Option {
	return func(o *engine.Options) { o.Buckets = append([]int64(nil), sizes...) }
}

// NoAutoDynamic keeps every dimension static: each new shape compiles
// exactly, as in a plain shape-keyed cache.
func NoAutoDynamic() Option { return func(o *engine.Options) { o.NoAutoDynamic = true } }

// RecompileLimit caps the function's specialisations (programs that differ
// in more than the bucket of a dynamic dimension); the default is 8, and a
// negative limit means none.
func RecompileLimit(n int) Option { return func(o *engine.Options) { o.RecompileLimit = n } }

// MaxPrograms caps all of the function's programs, buckets included
// (default 64; negative: no cap).
func MaxPrograms(n int) Option { return func(o *engine.Options) { o.MaxPrograms = n } }

// OnLimit chooses what happens past a limit (default LimitError).
func OnLimit(p Policy) Option { return func(o *engine.Options) { o.OnLimit = p } }

// CacheDir keeps compiled programs in dir, shared by every function of the
// process that uses the same dir and by later processes; "" keeps them in
// memory only. The default is engine.DefaultDir() ($XDG_CACHE_HOME/tpucc).
func CacheDir(dir string) Option {
	c := cacheFor(dir)
	return func(o *engine.Options) { o.Cache = c }
}

// Cache uses c to hold compiled programs.
func Cache(c *engine.Cache) Option { return func(o *engine.Options) { o.Cache = c } }

// Log writes one line per recompile to w, as TPUCC_LOGS=recompiles does to
// stderr.
func Log(w io.Writer) Option { return func(o *engine.Options) { o.Log = w } }

// Warnings sends warnings (the limit, corrupt cache entries) to w instead
// of stderr.
func Warnings(w io.Writer) Option { return func(o *engine.Options) { o.Warn = w } }

var (
	cachesMu sync.Mutex
	caches   = map[string]*engine.Cache{}
)

// cacheFor returns the process's one Cache for dir, so that functions
// compiled with the same directory share programs in memory too.
func cacheFor(dir string) *engine.Cache {
	cachesMu.Lock()
	defer cachesMu.Unlock()
	if c, ok := caches[dir]; ok {
		return c
	}
	c := engine.NewCache(dir, engine.CacheOptions{})
	caches[dir] = c
	return c
}

// Axis is one axis of a device mesh: its name and its number of devices.
type Axis = ir.MeshAxis

// Mesh splits the function's programs over a mesh of devices with the
// given axes (Mesh(Axis{"dp", 2}, Axis{"tp", 2}): four devices, numbered
// row-major), as a JAX Mesh does. Shard says how each argument is split;
// the other arguments and every result are replicated. On the pjrt device
// the program runs on the mesh's devices (the XLA:CPU plugin gives N with
// TPUCC_PJRT_OPTIONS=cpu_device_count=N); on the cpu device it runs whole.
// The mesh and the shardings are part of the cache key. docs/SHARDING.md.
func Mesh(axes ...Axis) Option {
	return func(o *engine.Options) {
		o.Mesh = &ir.Mesh{Name: tensor.MeshName, Axes: append([]ir.MeshAxis(nil), axes...)}
	}
}

// Shard splits argument arg over the Mesh's axes, as a JAX PartitionSpec:
// one string per dimension naming the axes that split it, comma-separated
// and major first ("dp", "dp,tp"), or "" to keep the dimension whole.
// Shard(0, "dp", "") splits a matrix's rows over dp.
func Shard(arg int, dims ...string) Option {
	return func(o *engine.Options) { o.Shardings = append(o.Shardings, shardSpec(arg, dims)) }
}

// ShardResult splits result res over the Mesh's axes as Shard splits an
// argument (JAX's out_shardings): the result is held that way on the
// devices (with KeepOnDevice, as pieces a later call takes as they are)
// rather than replicated. ShardResult(0, "dp", "") keeps a matrix's rows
// split over dp.
func ShardResult(res int, dims ...string) Option {
	return func(o *engine.Options) { o.ResultShardings = append(o.ResultShardings, shardSpec(res, dims)) }
}

// shardSpec is position i split by dims, Shard's spelling.
func shardSpec(i int, dims []string) engine.ArgSharding {
	s := engine.ArgSharding{Arg: i, Dims: make([][]string, len(dims))}
	for d, spec := range dims {
		s.Dims[d] = []string{}
		if spec != "" {
			s.Dims[d] = strings.Split(spec, ",")
		}
	}
	return s
}
