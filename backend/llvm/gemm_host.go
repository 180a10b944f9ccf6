package llvm

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
)

// gemmHost is what the blocked product's parameters are chosen from: the
// host's caches as the kernel reports them (sysfs), its vector width and
// FMA flags (/proc/cpuinfo). The model name only keys the calibration
// record (gemmRecord); no parameter is looked up by it.
type gemmHost struct {
	Model string // /proc/cpuinfo's model name
	Flags string // the flags that decide code generation: avx512f, avx2, fma
	// L1D and L2 are one core's data caches, L3 a core's share of the
	// last level (its size over the CPUs sharing it), in bytes; 0 when
	// unknown.
	L1D, L2, L3 int64
	Wide        bool // avx512f: the micro-kernel may keep <16 x float>
}

// gemmFlags are the CPU flags a gemmHost keeps: those that change the
// kernels' code or their speed.
var gemmFlags = []string{"avx2", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "amx_tile", "fma"}

// readGemmHost reads this machine's gemmHost from /proc/cpuinfo and
// /sys/devices/system/cpu/cpu0/cache.
func readGemmHost() gemmHost {
	info, _ := os.ReadFile("/proc/cpuinfo")
	h := parseCPUInfo(string(info))
	h.L1D, h.L2, h.L3 = cacheSizes(os.DirFS("/sys/devices/system/cpu/cpu0/cache"))
	return h
}

// parseCPUInfo takes the first processor's model name and flags from the
// text of /proc/cpuinfo.
func parseCPUInfo(text string) gemmHost {
	var h gemmHost
	var flags []string
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch k = strings.TrimSpace(k); {
		case k == "model name" && h.Model == "":
			h.Model = strings.TrimSpace(v)
		case k == "flags" && flags == nil:
			flags = strings.Fields(v)
			if flags == nil {
				flags = []string{}
			}
		}
	}
	var kept []string
	for _, f := range gemmFlags {
		if hasFlag(strings.Join(flags, " "), f) {
			kept = append(kept, f)
		}
	}
	h.Flags = strings.Join(kept, " ")
	h.Wide = hasFlag(h.Flags, "avx512f")
	return h
}

// cacheSizes reads one core's L1 data, L2 and share of L3 from a sysfs
// cache directory (index0, index1, ... each with level, type, size and
// shared_cpu_list). A cache it cannot read is 0.
func cacheSizes(dir fs.FS) (l1d, l2, l3 int64) {
	entries, _ := fs.ReadDir(dir, ".")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "index") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		read := func(f string) string {
			b, _ := fs.ReadFile(dir, path.Join(n, f))
			return strings.TrimSpace(string(b))
		}
		size, err := parseCacheSize(read("size"))
		if err != nil || read("type") == "Instruction" {
			continue
		}
		switch read("level") {
		case "1":
			l1d = size
		case "2":
			l2 = size
		case "3":
			l3 = size / max(cpuCount(read("shared_cpu_list")), 1)
		}
	}
	return l1d, l2, l3
}

// parseCacheSize reads sysfs's size, "32K", "1024K" or "32M", in bytes.
func parseCacheSize(s string) (int64, error) {
	unit := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		unit, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		unit, s = 1<<20, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("bad cache size %q", s)
	}
	return n * unit, nil
}

// cpuCount counts the CPUs of a list like "0-3,8,10-11"; 0 when it
// cannot be read.
func cpuCount(list string) int64 {
	var n int64
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseInt(lo, 10, 64)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(hi, 10, 64); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

// key names the host for the calibration record: everything gemmHost
// holds, so a record made on other hardware (or a VM given other caches)
// does not apply.
func (h gemmHost) key() string {
	return fmt.Sprintf("%s|%s|l1d=%d l2=%d l3=%d", h.Model, h.Flags, h.L1D, h.L2, h.L3)
}
