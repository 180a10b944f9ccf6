package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/passes"
	"github.com/tpucc/tpucc/target"
)

// layerSrc is a small bf16 layer whose 64 output features fill half of v5e's 128-wide
// MXU and an eighth of v6e's 256-wide one.
const layerSrc = `// A small layer: a bf16 matmul into 64 features, a bias, gelu, and a row sum in f32.
func @layer(%x: bf16[8,128], %w: bf16[128,64], %b: bf16[64]) -> (bf16[8,64], f32[8]) {
  %h = matmul %x, %w : bf16[8,64]
  %hb = add %h, %b
  %a = gelu %hb
  %a32 = convert %a : f32[8,64]
  %s = reduce_sum %a32 {axes=[1]}
  return %a, %s
}
`

// The reports, checked by hand:
//   - %h: 2*8*64*128 = 131072 FLOPs; the MXU pads N=64 to 128 on v5e (50%) and N and
//     K to 256 on v6e (12.5%). It reads x bf16[8,128] (2048 bytes under (8,128)(2,1)) and
//     w bf16[128,64] (128 rows of a 128-lane tile: 32768 bytes, half padding) and writes
//     bf16[8,64] (2048, half padding): 36864 bytes, 17408 of them padding; 45 ns at
//     819 GB/s.
//   - %0 is the parser's broadcast of %b: bf16[64] is one T(256) tile (512 bytes).
//   - %s: 8*64-8 = 504 combines; f32[8] is one T(128) tile (512 bytes).
//   - parameters 2048+32768+512 = 35328; the peak holds %a, %a32 and %s (2048+4096+512).
const layerV5e = `cost report: @layer on tpu-v5e
target: TPU v5e: 1 TensorCore x 4 MXUs of 128x128, VMEM 128 MiB per core; 16 GiB HBM at 819 GB/s; peaks 197 TFLOP/s bf16, 197 TFLOP/s f32 matmul (1 bf16 pass), 393 TOP/s int8, 3.08 TFLOP/s vector
#  group  op           result       FLOPs  transc  bytes    pad    MXU     time  bound
1  %h     dot_general  bf16[8,64]  131072       0  36864  17408  50.0%    45 ns  memory
2  %0     broadcast    bf16[8,64]       0       0   2560   1408      -  3.13 ns  memory
3  %hb    add          bf16[8,64]     512       0   6144   3072      -   7.5 ns  memory
4  %a     gelu         bf16[8,64]    2048     512   4096   2048      -     5 ns  memory
5  %a32   convert      f32[8,64]      512       0   6144   3072      -   7.5 ns  memory
6  %s     reduce_sum   f32[8]         504       0   4608   2528      -  5.63 ns  memory
   total  6 groups                 134648     512  60416  29536  50.0%  73.8 ns  0 compute, 6 memory
traffic: 48.9% of 60416 bytes are tile padding; the MXU runs 262144 FLOPs for 131072 useful
memory: parameters 35328 + constants 0 + peak activations 6656 = 41984 bytes (41 KiB) of 16 GiB HBM
`

const layerV6e = `cost report: @layer on tpu-v6e
target: TPU v6e (Trillium): 1 TensorCore x 2 MXUs of 256x256, VMEM 128 MiB per core; 32 GiB HBM at 1638 GB/s; peaks 918 TFLOP/s bf16, 918 TFLOP/s f32 matmul (1 bf16 pass), 1836 TOP/s int8, 7.17 TFLOP/s vector
#  group  op           result       FLOPs  transc  bytes    pad    MXU     time  bound
1  %h     dot_general  bf16[8,64]  131072       0  36864  17408  12.5%  22.5 ns  memory
2  %0     broadcast    bf16[8,64]       0       0   2560   1408      -  1.56 ns  memory
3  %hb    add          bf16[8,64]     512       0   6144   3072      -  3.75 ns  memory
4  %a     gelu         bf16[8,64]    2048     512   4096   2048      -   2.5 ns  memory
5  %a32   convert      f32[8,64]      512       0   6144   3072      -  3.75 ns  memory
6  %s     reduce_sum   f32[8]         504       0   4608   2528      -  2.81 ns  memory
   total  6 groups                 134648     512  60416  29536  12.5%  36.9 ns  0 compute, 6 memory
traffic: 48.9% of 60416 bytes are tile padding; the MXU runs 1048576 FLOPs for 131072 useful
memory: parameters 35328 + constants 0 + peak activations 6656 = 41984 bytes (41 KiB) of 32 GiB HBM
`

// TestBuildReport: the report goes to standard error, exactly (of the unfused
// program, whose rows the comment above checks; TestBuildReportFused has the
// default pipeline's); the StableHLO is what
// build writes without --report, on standard output or in the -o file.
func TestBuildReport(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "layer.tir", []byte(layerSrc))
	hlo := lowered(t, layerSrc, "", passes.Options{})
	for _, c := range []struct{ target, want string }{{"tpu-v5e", layerV5e}, {"tpu-v6e", layerV6e}} {
		r := tpucc(t, "", "build", model, "--target", c.target, "--report", "--disable", "fuse")
		if r.code != 0 || r.stdout != hlo || r.stderr != c.want {
			t.Errorf("%s: status %d, stdout == HLO: %v, stderr:\n%s\nwant:\n%s", c.target, r.code, r.stdout == hlo, r.stderr, c.want)
		}
		out := filepath.Join(dir, "out.hlo")
		r = tpucc(t, "", "build", "--report", model, "-o", out, "--target="+c.target, "--disable=fuse")
		if got, _ := os.ReadFile(out); r.code != 0 || r.stdout != "" || r.stderr != c.want || string(got) != hlo {
			t.Errorf("%s -o: status %d, stdout %q, file == HLO: %v, stderr:\n%s", c.target, r.code, r.stdout, string(got) == hlo, r.stderr)
		}
	}
	// Without --report (or with --report=false) nothing goes to standard error.
	tpucc(t, "", "build", model, "--target", "tpu-v5e").want(t, 0, hlo, "")
	tpucc(t, "", "build", model, "--target", "tpu-v5e", "--report=false").want(t, 0, hlo, "")
}

// TestReportEveryTarget: every target reports; the default is the CPU, which pads nothing.
func TestReportEveryTarget(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "layer.tir", []byte(layerSrc))
	for _, target := range targets {
		r := tpucc(t, "", "build", model, "--target", target, "--report")
		if r.code != 0 || !strings.HasPrefix(r.stderr, "cost report: @layer on "+target+"\n") {
			t.Errorf("%s: status %d, stderr:\n%s", target, r.code, r.stderr)
		}
	}
	r := tpucc(t, "", "build", model, "--report", "--disable", "fuse")
	lines := strings.Split(r.stderr, "\n")
	// The cpu target is this machine, as backend/cpu measures it: the line
	// says what was measured (the reference host of target's tests
	// gives "2 cores, 512-bit SIMD, L1d 48 KiB per core, L2 1 MiB per
	// core, L3 32 MiB shared; 23.5 GiB RAM at 28 GB/s; peaks 453 GFLOP/s
	// f32 matmul, 226 GFLOP/s vector").
	host := target.Host()
	var caches []string
	for _, c := range host.Caches {
		scope := " per core"
		if c.Shared {
			scope = " shared"
		}
		caches = append(caches, c.Name+" "+binary(c.Bytes)+scope)
	}
	want := []string{
		"cost report: @layer on cpu",
		fmt.Sprintf("target: %s: %d cores, %d-bit SIMD, %s; %s RAM at %s; peaks %s f32 matmul, %s vector",
			host.Chip, host.Cores, host.SIMDBits, strings.Join(caches, ", "), binary(host.Memory),
			decimal(host.Bandwidth, "B/s", 1e9), decimal(host.MatmulF32, "FLOP/s", 1e12), decimal(host.Vector, "FLOP/s", 1e12)),
	}
	if len(lines) < 12 || lines[0] != want[0] || lines[1] != want[1] {
		t.Fatalf("cpu report:\n%s\nwant the target line\n%s", r.stderr, want[1])
	}
	// Unpadded sizes: x 2048 + w 16384 read, h 1024 written, at the host's
	// bandwidth, against 131072 FLOPs at its FMA peak; no MXU.
	mem, comp := 19456/host.Bandwidth, 131072/host.MatmulF32
	kind := "memory"
	if comp > mem {
		kind = "compute"
	}
	row := fmt.Sprintf("1  %%h     dot_general  bf16[8,64]  131072       0  19456    0    -  %7s  %s", seconds(max(mem, comp)), kind)
	if got := lines[3]; got != row {
		t.Errorf("cpu row 1:\n%s\nwant\n%s", got, row)
	}
	// 19456 + 1152 (broadcast) + 3072 (add) + 2048 (gelu) + 3072 (convert) + 2080 (sum).
	if got := lines[10]; got != "traffic: 0.0% of 30880 bytes are tile padding" {
		t.Errorf("cpu traffic line:\n%s", got)
	}
}

// TestReportDoesNotFit: a 40 GB parameter does not fit one v5e; a v5p holds it.
func TestReportDoesNotFit(t *testing.T) {
	src := "func @f(%x: f32[100000,100000]) -> f32[100000,100000] {\n  %y = neg %x\n  return %y\n}\n"
	dir := t.TempDir()
	model := writeFile(t, dir, "big.tir", []byte(src))
	r := tpucc(t, "", "build", model, "--target", "tpu-v5e", "--report", "-o", filepath.Join(dir, "big.hlo"))
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	// f32[100000,100000] pads its columns to 100096: 40038400000 bytes, for the parameter
	// and again for the result.
	want := []string{
		"memory: parameters 40038400000 + constants 0 + peak activations 40038400000 = 80076800000 bytes (74.6 GiB) of 16 GiB HBM",
		"warning: @f needs 74.6 GiB of HBM, more than one tpu-v5e chip has (16 GiB)",
	}
	if r.code != 0 || len(lines) < 2 || lines[len(lines)-2] != want[0] || lines[len(lines)-1] != want[1] {
		t.Errorf("status %d, stderr:\n%s", r.code, r.stderr)
	}
	if got := lines[2] + "\n" + lines[3]; got != "#  group  op       result                    FLOPs  transc        bytes       pad  MXU     time  bound\n"+
		"1  %y     neg      f32[100000,100000]  10000000000       0  80076800000  76800000    -  97.8 ms  memory" {
		t.Errorf("table:\n%s", got)
	}
	r = tpucc(t, "", "build", model, "--target", "tpu-v5p", "--report", "-o", filepath.Join(dir, "big.hlo"))
	if r.code != 0 || strings.Contains(r.stderr, "warning") {
		t.Errorf("v5p: status %d, stderr:\n%s", r.code, r.stderr)
	}
}

func TestHelpBuildDescribesReport(t *testing.T) {
	r := tpucc(t, "", "help", "build")
	for _, s := range []string{"--report writes a cost table to standard error", "  MXU     useful share", "docs/TARGETS.md"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("tpucc help build lacks %q:\n%s", s, r.stdout)
		}
	}
}

// TestBuildReportFused: with fuse in the pipeline the report has one row per
// fusion, named by kind and root. The output fusion reads x, w and b
// (2048+32768+512) and writes %a (2048): 37376 bytes where the unfused dot,
// broadcast, add and gelu moved 36864+2560+6144+4096; the input fusion reads %a
// and writes %s (2048+512).
func TestBuildReportFused(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "layer.tir", []byte(layerSrc))
	hlo := lowered(t, layerSrc, "", passes.Options{})
	want := `cost report: @layer on tpu-v6e
target: TPU v6e (Trillium): 1 TensorCore x 2 MXUs of 256x256, VMEM 128 MiB per core; 32 GiB HBM at 1638 GB/s; peaks 918 TFLOP/s bf16, 918 TFLOP/s f32 matmul (1 bf16 pass), 1836 TOP/s int8, 7.17 TFLOP/s vector
#  group  op                    result       FLOPs  transc  bytes    pad    MXU     time  bound
1  %a     output:dot_general+3  bf16[8,64]  133632     512  37376  17792  12.5%  22.8 ns  memory
2  %s     input:reduce_sum+1    f32[8]        1016       0   2560   1504      -  1.56 ns  memory
   total  2 groups                          134648     512  39936  19296  12.5%  24.4 ns  0 compute, 2 memory
traffic: 48.3% of 39936 bytes are tile padding; the MXU runs 1048576 FLOPs for 131072 useful
memory: parameters 35328 + constants 0 + peak activations 2560 = 37888 bytes (37 KiB) of 32 GiB HBM
`
	r := tpucc(t, "", "build", model, "--target", "tpu-v6e", "--report")
	if r.code != 0 || r.stdout != hlo || r.stderr != want {
		t.Errorf("status %d, stdout == HLO: %v, stderr:\n%s\nwant:\n%s", r.code, r.stdout == hlo, r.stderr, want)
	}
}

// TestReportPrecision: --precision highest costs an f32 product at six bf16
// passes on a TPU (150 us -> 898 us for 2*4096^3 FLOPs on v6e), and the
// target line says so.
func TestReportPrecision(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "mm.tir", []byte("func @mm(%x: f32[4096,4096], %w: f32[4096,4096]) -> f32[4096,4096] {\n  %y = matmul %x, %w : f32[4096,4096]\n  return %y\n}\n"))
	const target = "target: TPU v6e (Trillium): 1 TensorCore x 2 MXUs of 256x256, VMEM 128 MiB per core; 32 GiB HBM at 1638 GB/s; peaks 918 TFLOP/s bf16, %s f32 matmul (%s), 1836 TOP/s int8, 7.17 TFLOP/s vector"
	const row = "1  %%y     dot_general  f32[4096,4096]  137438953472       0  201326592    0  100.0%%  %s  compute"
	for _, c := range []struct{ precision, rate, passes, time string }{
		{"default", "918 TFLOP/s", "1 bf16 pass", "150 us"},
		{"highest", "153 TFLOP/s", "6 bf16 passes", "898 us"},
	} {
		r := tpucc(t, "", "build", model, "--target", "tpu-v6e", "--report", "--precision", c.precision, "-o", filepath.Join(dir, "out.hlo"))
		lines := strings.Split(r.stderr, "\n")
		if r.code != 0 || len(lines) < 4 || lines[1] != fmt.Sprintf(target, c.rate, c.passes) || lines[3] != fmt.Sprintf(row, c.time) {
			t.Errorf("--precision %s: status %d, report:\n%s", c.precision, r.code, r.stderr)
		}
	}
}

// countedLoop runs a layer over 3 stacked weights: a counted loop.
const countedLoop = `func @main(%w: f32[3,256,256], %x0: f32[8,256], %k: i32[]) -> (f32[8,256], f32[8,256]) {
  %z = constant 0 : i32[]
  %n, %x, %ww = while %z, %x0, %w cond (%l: i32[], %x: f32[8,256], %w: f32[3,256,256]) {
      %three = constant 3 : i32[]
      %go = compare %l, %three {dir=lt}
      return %go
    } do (%l: i32[], %x: f32[8,256], %w: f32[3,256,256]) {
      %zero = constant 0 : i32[]
      %ws = dynamic_slice %w, %l, %zero, %zero {sizes=[1, 256, 256]}
      %wl = reshape %ws : f32[256,256]
      %y = dot_general %x, %wl {lhs_contract=[1], rhs_contract=[0]}
      %x1 = tanh %y
      %one = constant 1 : i32[]
      %l1 = add %l, %one
      return %l1, %x1, %w
    }
  %m, %v, %kk = while %z, %x0, %k cond (%i: i32[], %u: f32[8,256], %lim: i32[]) {
      %go = compare %i, %lim {dir=lt}
      return %go
    } do (%i: i32[], %u: f32[8,256], %lim: i32[]) {
      %e = exp %u
      %one = constant 1 : i32[]
      %i1 = add %i, %one
      return %i1, %e, %lim
    }
  return %x, %v
}
`

// TestReportLoops: a counted loop's body is costed its trip count times
// (3 x 2*8*256*256 matmul FLOPs, 3 x 2048 tanh, the counter's 3 adds and
// 4 compares), and the report says so; a loop whose count depends on the
// data is costed once, and the report says that.
func TestReportLoops(t *testing.T) {
	dir := t.TempDir()
	model := writeFile(t, dir, "loop.tir", []byte(countedLoop))
	r := tpucc(t, "", "build", model, "--target", "tpu-v6e", "--report", "-o", filepath.Join(dir, "out.hlo"))
	if r.code != 0 {
		t.Fatalf("status %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"loop %n (" + model + ":3:3): runs 3 times; its body is counted 3 times\n",
		"loop %m (" + model + ":17:3): the trip count depends on the data; its body is counted once\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the report lacks %q:\n%s", want, r.stderr)
		}
	}
	row := ""
	for _, line := range strings.Split(r.stderr, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "1" && f[1] == "%n" {
			row = line
		}
	}
	if !strings.Contains(row, " while ") || !strings.Contains(row, " 3145735 ") || !strings.Contains(row, " 6144 ") {
		t.Errorf("the first loop's row is %q, want a while with 3145735 FLOPs and 6144 transcendentals:\n%s", row, r.stderr)
	}
}

// TestReportCustomCall: a custom_call's FLOPs are its cost attribute, and 0
// without one; the report says which.
func TestReportCustomCall(t *testing.T) {
	dir := t.TempDir()
	src := `func @f(%x: f32[4], %y: f32[4]) -> f32[4] {
  %r = custom_call @my_add(%x, %y) {cost=1000, fallback=@g} : f32[4]
  %t = custom_call @my_add(%x, %r) {has_side_effect=true} : f32[4]
  return %t
}

func @g(%a: f32[4], %b: f32[4]) -> f32[4] {
  %s = add %a, %b
  return %s
}
`
	model := writeFile(t, dir, "cc.tir", []byte(src))
	r := tpucc(t, "", "build", model, "--target", "tpu-v6e", "--report", "-o", filepath.Join(dir, "out.hlo"))
	if r.code != 0 {
		t.Fatalf("status %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"%r = custom_call @my_add (" + model + ":2:3): 1000 FLOPs, from its cost attribute\n",
		"%t = custom_call @my_add (" + model + ":3:3): no cost attribute; counted as 0 FLOPs\n",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the report lacks %q:\n%s", want, r.stderr)
		}
	}
	flops := map[string]string{}
	for _, line := range strings.Split(r.stderr, "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[2] == "custom_call" {
			flops[f[1]] = f[4]
		}
	}
	if flops["%r"] != "1000" || flops["%t"] != "0" {
		t.Errorf("custom_call FLOPs are %v, want %%r 1000 and %%t 0:\n%s", flops, r.stderr)
	}
}
