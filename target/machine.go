package target

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Host is the machine this process runs on, described as the "cpu" target:
// its cores, SIMD width, data caches, memory and clock are read from the
// operating system once (Linux's /proc and /sys; elsewhere the core count and
// the architecture's baseline), and its rates follow from them:
//
//   - f32 FMA peak = cores x clock x f32 lanes x 2 FLOPs x 2 FMA pipes (one
//     pipe without FMA): server x86 cores since Haswell and Zen, and arm64's
//     Neoverse, issue two vector FMAs a cycle. On the 2-core AVX-512 EPYC at
//     3.54 GHz that docs/TARGETS.md once measured, this is its 453 GFLOP/s.
//     Every matmul dtype is costed at it (tpucc computes bf16 in f32); the
//     vector rate is half (one op per lane where an FMA counts two).
//   - memory bandwidth = 14 GB/s per core, an estimate: the operating system
//     does not say, and timing a copy at start-up would make cost reports and
//     fusion choices change from run to run. The 2-core EPYC streamed 28 GB/s.
//   - LocalBytes is the L2 per core.
//
// The description is the same for every call in a process.
func Host() *Target {
	hostOnce.Do(func() { host = describeHost(readHost("/", runtime.GOARCH, runtime.NumCPU())) })
	return host
}

var (
	hostOnce sync.Once
	host     *Target
)

// hostFacts is what the operating system says about the machine.
type hostFacts struct {
	model    string  // "AMD EPYC", or the architecture if the system does not say
	cores    int     // physical cores this process may use
	simd     string  // the widest vector extension: "AVX-512", "AVX2", "NEON", ...
	simdBits int     // its register width
	fma      bool    // fused multiply-add
	ghz      float64 // clock
	caches   []Cache // data and unified caches, innermost first
	memory   int64   // physical memory, bytes
}

// The figures Host derives the rates with (see Host).
const (
	defaultGHz   = 3.0     // where the system gives no clock
	defaultL2    = 1 << 20 // where it lists no per-core L2
	bytesPerCore = 14e9    // streaming bandwidth per core, an estimate
	fmaPipes     = 2       // vector FMAs issued per cycle
	// A vectorised exp or log is a range reduction and a polynomial of about
	// ten multiply-adds (as LLVM's and XLA:CPU's are): an estimate.
	transcendOps = 10
)

// readHost gathers the facts under root ("/" but in tests) for arch, on a
// machine where this process may use ncpu logical CPUs.
func readHost(root, arch string, ncpu int) hostFacts {
	h := hostFacts{cores: ncpu, ghz: defaultGHz, memory: meminfo(filepath.Join(root, "proc/meminfo"))}
	switch arch {
	case "amd64", "386":
		h.simd, h.simdBits = "SSE2", 128
	case "arm64":
		h.simd, h.simdBits, h.fma = "NEON", 128, true
	default:
		h.simd, h.simdBits = arch, 128
	}
	if data, err := os.ReadFile(filepath.Join(root, "proc/cpuinfo")); err == nil {
		h.cpuinfo(string(data))
	}
	if b, err := os.ReadFile(filepath.Join(root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")); err == nil {
		if khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && khz > 0 {
			h.ghz = khz / 1e6
		}
	}
	h.caches = readCaches(filepath.Join(root, "sys/devices/system/cpu/cpu0/cache"))
	if h.model == "" {
		h.model = arch
	}
	return h
}

// cpuinfo reads the first processor's model, clock and vector features, and
// counts physical cores: hyperthreads share a core's FMA pipes, so the
// cores are the distinct (physical id, core id) pairs, at most the CPUs this
// process may use.
func (h *hostFacts) cpuinfo(text string) {
	seen := map[string]bool{}
	physical, pkg := map[string]bool{}, ""
	for _, line := range strings.Split(text, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "physical id":
			pkg = val
		case "core id":
			physical[pkg+"/"+val] = true
		case "model name":
			if h.model == "" {
				h.model = val
			}
		case "cpu MHz":
			if mhz, err := strconv.ParseFloat(val, 64); err == nil && mhz > 0 && !seen[key] {
				h.ghz = mhz / 1000
			}
		case "flags", "Features":
			if seen[key] {
				continue
			}
			flags := strings.Fields(val)
			for _, f := range []struct{ flag, name string }{{"avx", "AVX"}, {"avx2", "AVX2"}, {"avx512f", "AVX-512"}} {
				if slices.Contains(flags, f.flag) {
					h.simd = f.name
				}
			}
			switch h.simd {
			case "AVX", "AVX2":
				h.simdBits = 256
			case "AVX-512":
				h.simdBits = 512
			}
			h.fma = h.fma || slices.Contains(flags, "fma") || slices.Contains(flags, "asimd")
		}
		seen[key] = true
	}
	if n := len(physical); n > 0 && n < h.cores {
		h.cores = n
	}
}

// readCaches lists cpu0's data and unified caches from sysfs, innermost
// first: L1d, L2, L3. A cache whose shared_cpu_list names more than one CPU
// is shared.
func readCaches(dir string) []Cache {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	type level struct {
		n int
		c Cache
	}
	var found []level
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "index") {
			continue
		}
		read := func(name string) string {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name(), name))
			return strings.TrimSpace(string(b))
		}
		typ := read("type")
		n, err := strconv.Atoi(read("level"))
		size := cacheSize(read("size"))
		if err != nil || size <= 0 || (typ != "Data" && typ != "Unified") {
			continue
		}
		name := "L" + strconv.Itoa(n)
		if typ == "Data" {
			name += "d"
		}
		shared := strings.ContainsAny(read("shared_cpu_list"), ",-")
		found = append(found, level{n, Cache{Name: name, Bytes: size, Shared: shared}})
	}
	slices.SortFunc(found, func(a, b level) int { return a.n - b.n })
	var out []Cache
	for _, l := range found {
		out = append(out, l.c)
	}
	return out
}

// cacheSize parses sysfs sizes: "32K", "1024K", "32M", or bytes.
func cacheSize(s string) int64 {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n * mult
}

// meminfo reads MemTotal from a /proc/meminfo file; 0 where there is none.
func meminfo(path string) int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || kb <= 0 {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// describeHost turns the facts into the target description (see Host).
func describeHost(h hostFacts) *Target {
	pipes := 1
	if h.fma {
		pipes = fmaPipes
	}
	lanes := float64(h.simdBits / 32)
	peak := float64(h.cores) * h.ghz * 1e9 * lanes * 2 * float64(pipes) // an FMA is 2 FLOPs
	local := int64(defaultL2)
	for _, c := range h.caches {
		if c.Name == "L2" && !c.Shared {
			local = c.Bytes
		}
	}
	return CPU(Target{
		Chip:              fmt.Sprintf("host CPU (%s, %d cores, %s)", h.model, h.cores, h.simd),
		Cores:             h.cores,
		MemoryName:        "RAM",
		Memory:            h.memory,
		Bandwidth:         bytesPerCore * float64(h.cores),
		LocalBytes:        local,
		Caches:            h.caches,
		SIMDBits:          h.simdBits,
		MatmulBF16:        peak,
		MatmulInt8:        peak,
		MatmulF32:         peak,
		Vector:            peak / 2, // one op per lane where an FMA counts two
		TranscendentalOps: transcendOps,
	})
}
