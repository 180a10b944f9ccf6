package target

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// writeTree writes files (path relative to root: content) under a new root.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestHostFromSystem: the 2-core AVX-512 EPYC of docs/TARGETS.md, with two
// hyperthreads per core, as /proc and /sys describe it, gives the figures
// once written by hand for it: 453 GFLOP/s, 28 GB/s, L2 1 MiB.
func TestHostFromSystem(t *testing.T) {
	proc := ""
	for _, p := range []struct{ core, mhz string }{{"0", "3540.000"}, {"1", "3540.000"}, {"0", "1200.000"}, {"1", "3540.000"}} {
		proc += "processor\t: x\nmodel name\t: AMD EPYC 7B13\nphysical id\t: 0\ncore id\t\t: " + p.core +
			"\ncpu MHz\t\t: " + p.mhz + "\nflags\t\t: fpu sse2 avx avx2 fma avx512f avx512bw\n\n"
	}
	cache := "sys/devices/system/cpu/cpu0/cache/"
	root := writeTree(t, map[string]string{
		"proc/cpuinfo":                   proc,
		"proc/meminfo":                   "MemTotal:       24683584 kB\nMemFree: 1 kB\n",
		cache + "index0/level":           "1\n",
		cache + "index0/type":            "Data\n",
		cache + "index0/size":            "48K\n",
		cache + "index0/shared_cpu_list": "0,2\n",
		cache + "index1/level":           "1\n",
		cache + "index1/type":            "Instruction\n",
		cache + "index1/size":            "32K\n",
		cache + "index2/level":           "2\n",
		cache + "index2/type":            "Unified\n",
		cache + "index2/size":            "1024K\n",
		cache + "index2/shared_cpu_list": "0\n",
		cache + "index3/level":           "3\n",
		cache + "index3/type":            "Unified\n",
		cache + "index3/size":            "32M\n",
		cache + "index3/shared_cpu_list": "0-3\n",
	})
	h := describeHost(readHost(root, "amd64", 4))
	if h.Name() != "cpu" || h.Kind != KindCPU || h.Chip != "host CPU (AMD EPYC 7B13, 2 cores, AVX-512)" {
		t.Errorf("%s: %q, kind %d", h.Name(), h.Chip, h.Kind)
	}
	if h.Cores != 2 || h.SIMDBits != 512 || math.Abs(h.MatmulF32-453.12e9) > 1e6 || h.Vector != h.MatmulF32/2 ||
		h.MatmulBF16 != h.MatmulF32 || h.Bandwidth != 28e9 || h.Memory != 24683584*1024 {
		t.Errorf("%d cores, %d-bit SIMD, %g FLOP/s, %g vector, %g B/s, %d bytes", h.Cores, h.SIMDBits, h.MatmulF32, h.Vector, h.Bandwidth, h.Memory)
	}
	want := []Cache{{Name: "L1d", Bytes: 48 << 10, Shared: true}, {Name: "L2", Bytes: 1 << 20}, {Name: "L3", Bytes: 32 << 20, Shared: true}}
	if len(h.Caches) != len(want) || h.LocalBytes != 1<<20 {
		t.Fatalf("caches %+v, local %d", h.Caches, h.LocalBytes)
	}
	for i := range want {
		if h.Caches[i] != want[i] {
			t.Errorf("cache %d: %+v, want %+v", i, h.Caches[i], want[i])
		}
	}
	// A process allowed one CPU counts one core.
	if got := readHost(root, "amd64", 1).cores; got != 1 {
		t.Errorf("one allowed CPU: %d cores", got)
	}
}

// TestHostBare: where the system says nothing, the architecture's baseline
// and the documented defaults.
func TestHostBare(t *testing.T) {
	root := t.TempDir()
	h := describeHost(readHost(root, "arm64", 8))
	if h.Chip != "host CPU (arm64, 8 cores, NEON)" || h.SIMDBits != 128 || h.LocalBytes != 1<<20 || len(h.Caches) != 0 || h.Memory != 0 {
		t.Errorf("%q: %d-bit SIMD, local %d, caches %v, memory %d", h.Chip, h.SIMDBits, h.LocalBytes, h.Caches, h.Memory)
	}
	// 8 cores x 3 GHz x 4 lanes x 2 FLOPs x 2 FMA pipes.
	if h.MatmulF32 != 384e9 || h.Bandwidth != 112e9 {
		t.Errorf("%g FLOP/s, %g B/s", h.MatmulF32, h.Bandwidth)
	}
	x := describeHost(readHost(root, "amd64", 2))
	if x.Chip != "host CPU (amd64, 2 cores, SSE2)" || x.MatmulF32 != 2*3e9*4*2 {
		t.Errorf("amd64 without /proc: %q, %g FLOP/s", x.Chip, x.MatmulF32)
	}
}

// TestHostIsThisMachine: Host is measured once and agrees with the system.
func TestHostIsThisMachine(t *testing.T) {
	h := Host()
	if Host() != h || h.Name() != "cpu" || h.Cores < 1 || h.SIMDBits < 128 || h.MatmulF32 <= 0 || h.LocalBytes <= 0 {
		t.Errorf("Host() = %+v", *h)
	}
}
