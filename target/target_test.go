package target_test

import (
	"math"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/target"
)

// reference is ../shared/reference/tpu.md's table of TPU generations, per chip, as
// written there (HBM "GB" read as GiB: see generations.go), with int8 where it
// gives one.
var reference = []struct {
	name          string
	cores, mxus   int   // MXUs per TensorCore
	mxuSize       int64 // 128 or 256
	bf16, int8    float64
	hbmGiB        int64
	bandwidthGBps float64
	vmemMiB       int64
	ridge         float64 // "~" figure: ours must round to within 2%
}{
	{"tpu-v4", 2, 4, 128, 275e12, 0, 32, 1200, 16, 230},
	{"tpu-v5e", 1, 4, 128, 197e12, 393e12, 16, 819, 128, 240},
	{"tpu-v5p", 2, 4, 128, 459e12, 0, 95, 2765, 64, 166},
	{"tpu-v6e", 1, 2, 256, 918e12, 1836e12, 32, 1638, 128, 560},
	{"tpu-v7x", 2, 2, 256, 2307e12, 0, 192, 7400, 64, 312},
}

func TestTargetsMatchReference(t *testing.T) {
	for _, r := range reference {
		tg, ok := target.Lookup(r.name)
		if !ok {
			t.Fatalf("Lookup(%q) failed", r.name)
		}
		if tg.Name() != r.name || tg.Kind != target.KindTPU {
			t.Errorf("%s: name %q kind %d", r.name, tg.Name(), tg.Kind)
		}
		if tg.Cores != r.cores || tg.MXUs != r.mxus || tg.MXUSize != r.mxuSize {
			t.Errorf("%s: %d cores x %d MXUs of %d, want %d x %d of %d", r.name, tg.Cores, tg.MXUs, tg.MXUSize, r.cores, r.mxus, r.mxuSize)
		}
		if tg.MatmulBF16 != r.bf16 {
			t.Errorf("%s: bf16 peak %g, want %g", r.name, tg.MatmulBF16, r.bf16)
		}
		if r.int8 != 0 && tg.MatmulInt8 != r.int8 {
			t.Errorf("%s: int8 peak %g, want %g", r.name, tg.MatmulInt8, r.int8)
		}
		if tg.Memory != r.hbmGiB<<30 || tg.MemoryName != "HBM" {
			t.Errorf("%s: %s %d bytes, want HBM %d GiB", r.name, tg.MemoryName, tg.Memory, r.hbmGiB)
		}
		// v7x: the reference says ~7.4 TB/s; the Cloud page, 7380 GB/s.
		if math.Abs(tg.Bandwidth-r.bandwidthGBps*1e9) > 0.01*r.bandwidthGBps*1e9 {
			t.Errorf("%s: bandwidth %g, want %g GB/s", r.name, tg.Bandwidth, r.bandwidthGBps)
		}
		if tg.LocalBytes != r.vmemMiB<<20 {
			t.Errorf("%s: VMEM %d, want %d MiB", r.name, tg.LocalBytes, r.vmemMiB)
		}
		if math.Abs(tg.Ridge()-r.ridge) > 0.02*r.ridge {
			t.Errorf("%s: ridge %.1f FLOP/byte, want ~%g", r.name, tg.Ridge(), r.ridge)
		}
		// f32 matmuls run as one bf16 pass; the vector unit is the derived 2048 ops a
		// cycle per core at the MXU's clock.
		if tg.F32Passes != 1 || tg.MatmulF32 != tg.MatmulBF16 {
			t.Errorf("%s: f32 matmul %g in %d passes", r.name, tg.MatmulF32, tg.F32Passes)
		}
		clock := tg.MatmulBF16 / float64(int64(tg.Cores*tg.MXUs)*tg.MXUSize*tg.MXUSize*2)
		if want := float64(tg.Cores) * 2048 * clock; math.Abs(tg.Vector-want) > 1e-6*want {
			t.Errorf("%s: vector rate %g, want %g", r.name, tg.Vector, want)
		}
	}
}

// TestVectorClock: the clocks the vector rates imply are the published ones where a
// source gives one (v4 1050 MHz, v5e 1.5 GHz).
func TestVectorClock(t *testing.T) {
	for _, c := range []struct {
		t   *target.Target
		ghz float64
	}{{target.V4, 1.05}, {target.V5e, 1.5}} {
		got := c.t.Vector / (float64(c.t.Cores) * 2048) / 1e9
		if math.Abs(got-c.ghz) > 0.01 {
			t.Errorf("%s: implied clock %.3f GHz, want %.2f", c.t.Name(), got, c.ghz)
		}
	}
}

// TestCPUTarget: target.CPU names a description "cpu" and makes it a CPU, whose
// every matmul dtype runs at the f32 FMA peak off the matrix unit.
func TestCPUTarget(t *testing.T) {
	c := refCPU
	if c.Name() != "cpu" || c.Kind != target.KindCPU {
		t.Fatalf("tpu.CPU gives %q of kind %d", c.Name(), c.Kind)
	}
	if tg, ok := target.Lookup("cpu"); ok {
		t.Errorf("Lookup(cpu) = %v: the host is backend/cpu's", tg)
	}
	for _, dt := range []ir.DType{ir.F32, ir.BF16, ir.F16, ir.I8} {
		if rate, mxu := c.MatmulPeak(dt); rate != 453e9 || mxu {
			t.Errorf("cpu: MatmulPeak(%s) = %g, %v", dt, rate, mxu)
		}
	}
}

func TestLookupAndNames(t *testing.T) {
	if got := strings.Join(target.Names(), " "); got != "tpu-v4 tpu-v5e tpu-v5p tpu-v6e tpu-v7x" {
		t.Errorf("Names() = %s", got)
	}
	for _, name := range []string{"tpu-v9", "v5e", "TPU-V5E", ""} {
		if tg, ok := target.Lookup(name); ok {
			t.Errorf("Lookup(%q) = %s", name, tg.Name())
		}
	}
}

func TestMatmulPeak(t *testing.T) {
	cases := []struct {
		dt   ir.DType
		rate float64
		mxu  bool
	}{
		{ir.BF16, 197e12, true}, {ir.F16, 197e12, true}, {ir.F32, 197e12, true},
		{ir.I8, 393e12, true}, {ir.U8, 393e12, true},
		{ir.I32, target.V5e.Vector, false}, {ir.F64, target.V5e.Vector, false},
	}
	for _, c := range cases {
		if rate, mxu := target.V5e.MatmulPeak(c.dt); rate != c.rate || mxu != c.mxu {
			t.Errorf("v5e MatmulPeak(%s) = %g, %v; want %g, %v", c.dt, rate, mxu, c.rate, c.mxu)
		}
	}
}

// TestWithPrecision: an f32 product at HIGH takes 3 bf16 passes on a TPU
// and at HIGHEST 6; the default one; the host CPU is unchanged by any.
func TestWithPrecision(t *testing.T) {
	for p, passes := range map[string]int{"": 1, "default": 1, "high": 3, "highest": 6} {
		got := target.V6e.WithPrecision(p)
		if got.F32Passes != passes || got.MatmulF32 != target.V6e.MatmulBF16/float64(passes) || got.MatmulBF16 != target.V6e.MatmulBF16 {
			t.Errorf("v6e at %q: %d passes, f32 %g FLOP/s; want %d and %g", p, got.F32Passes, got.MatmulF32, passes, target.V6e.MatmulBF16/float64(passes))
		}
	}
	if target.V6e.F32Passes != 1 || target.V6e.MatmulF32 != target.V6e.MatmulBF16 {
		t.Error("WithPrecision changed target.V6e itself")
	}
	host := &target.Target{Kind: target.KindCPU, MatmulF32: 1e11}
	if host.WithPrecision("highest") != host {
		t.Error("a CPU target changed with the precision")
	}
}
