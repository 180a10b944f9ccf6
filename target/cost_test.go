package target_test

import (
	"math"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/target"
)

// opCase is one instruction, the last before the return of a small function, and
// its cost on v5e counted by hand.
type opCase struct {
	name   string
	params string // the function's parameters
	body   string // instructions; the last one's result is returned
	flops  int64
	transc int64
	read   int64
	write  int64
	// padded is PaddedMatmulFLOPs (0 for no matmul).
	padded int64
}

// f32[64,256] is 64*256*4 = 65536 bytes, tiled (8,128) without padding.
const x64x256 = 65536

var opCases = []opCase{
	// Elementwise: one FLOP per element; read both operands, write the result.
	{"add", "%x: f32[64,256], %y: f32[64,256]", "%r = add %x, %y", 16384, 0, 2 * x64x256, x64x256, 0},
	// Transcendentals are counted apart from FLOPs.
	{"exp", "%x: f32[64,256]", "%r = exp %x", 0, 16384, x64x256, x64x256, 0},
	{"rsqrt", "%x: f32[64,256]", "%r = rsqrt %x", 0, 16384, x64x256, x64x256, 0},
	{"clamp", "%lo: f32[64,256], %x: f32[64,256], %hi: f32[64,256]", "%r = clamp %lo, %x, %hi", 2 * 16384, 0, 3 * x64x256, x64x256, 0},
	// A splat constant is an immediate: only %x is read.
	{"mul-splat", "%x: f32[64,256]", "%c = constant 2.0 : f32[64,256]\n  %r = mul %x, %c", 16384, 0, x64x256, x64x256, 0},
	// A dense constant is read at its tiled size: f32[2] is one T(128) tile, 512 bytes.
	{"add-dense", "%x: f32[2]", "%c = constant [1.0, 2.0] : f32[2]\n  %r = add %x, %c", 2, 0, 2 * 512, 512, 0},
	// compare writes i1, one byte an element: i1[64,64] under T(32,128)(4,1) is 64*128.
	{"compare", "%x: i32[64,64], %y: i32[64,64]", "%r = compare %x, %y {dir=ge}", 4096, 0, 2 * 64 * 128 * 4, 64 * 128, 0},
	// dot_general: 2*M*N*K; M=64, N=512, K=256 fill the MXU (128 wide on v5e).
	{"matmul", "%x: f32[64,256], %w: f32[256,512]", "%r = matmul %x, %w : f32[64,512]", 2 * 64 * 512 * 256, 0, x64x256 + 256*512*4, 2 * x64x256, 2 * 64 * 512 * 256},
	// Batched attention scores with head dim 64: K=64 and N=64 pad to 128 on v5e,
	// so the MXU does 4x the useful work; 64 of 128 lanes are padding in every operand.
	{"scores", "%q: f32[4,64,64], %k: f32[4,64,64]", "%r = dot_general %q, %k {lhs_batch=[0], rhs_batch=[0], lhs_contract=[2], rhs_contract=[2]} : f32[4,64,64]",
		2 * 4 * 64 * 64 * 64, 0, 2 * 4 * 64 * 128 * 4, 4 * 64 * 128 * 4, 2 * 4 * 64 * 128 * 128},
	// A bf16 matvec-like dot with M=3: M pads to 8 sublanes, N=64 and K=100 to 128.
	{"bf16-dot", "%x: bf16[3,100], %w: bf16[100,64]", "%r = matmul %x, %w : bf16[3,64]",
		2 * 3 * 64 * 100, 0, 4*128*2 + 104*128*2, 4 * 128 * 2, 2 * 8 * 128 * 128},
	// ragged_contract (ragged_dot's weight gradient): 2*M*K*N over the rows of
	// every group, M=64 rows, K=256, N=128; on the MXU the 64 rows pad as
	// ragged_dot's, each of 4 groups its last 8-row tile: 64 + 4*7 = 92.
	{"ragged_contract", "%x: f32[64,256], %dy: f32[64,128], %s: i32[4]", "%r = ragged_contract %x, %dy, %s",
		2 * 64 * 256 * 128, 0, x64x256 + 64*128*4 + 512, 4 * 256 * 128 * 4, 2 * 92 * 128 * 256},
	// Reductions: one combine per input element beyond the first of each output.
	{"reduce_sum", "%x: f32[64,256]", "%r = reduce_sum %x {axes=[1]}", 64*256 - 64, 0, x64x256, 512, 0},
	{"reduce_max-all", "%x: f32[64,256]", "%r = reduce_max %x {axes=[0,1]}", 64*256 - 1, 0, x64x256, 512, 0},
	{"argmax", "%x: f32[64,256]", "%r = argmax %x {axis=1}", 2 * (64*256 - 64), 0, x64x256, 512, 0},
	// softmax over 64 rows of 256: max and sum (2*(n-rows)), x-max and a divide (2n), exp (n).
	{"softmax", "%x: f32[64,256]", "%r = softmax %x {axis=1}", 2*16384 + 2*(16384-64), 16384, x64x256, x64x256, 0},
	{"log_softmax", "%x: f32[64,256]", "%r = log_softmax %x {axis=1}", 2*16384 + 2*(16384-64), 16384 + 64, x64x256, x64x256, 0},
	// rms_norm: square, normalise, scale (3n), sum (n-rows), divide and +eps (2 per row), rsqrt per row.
	// The scale f32[256] is one T(256) tile, 1024 bytes.
	{"rms_norm", "%x: f32[64,256], %s: f32[256]", "%r = rms_norm %x, %s {eps=1e-06}", 3*16384 + (16384 - 64) + 2*64, 64, x64x256 + 1024, x64x256, 0},
	{"layer_norm", "%x: f32[64,256], %s: f32[256], %b: f32[256]", "%r = layer_norm %x, %s, %b {eps=1e-05}", 5*16384 + 2*(16384-64) + 3*64, 64, x64x256 + 2*1024, x64x256, 0},
	{"gelu", "%x: f32[64,256]", "%r = gelu %x", 4 * 16384, 16384, x64x256, x64x256, 0},
	{"gelu-tanh", "%x: f32[64,256]", "%r = gelu %x {approximate=true}", 8 * 16384, 16384, x64x256, x64x256, 0},
	{"silu", "%x: f32[64,256]", "%r = silu %x", 16384, 16384, x64x256, x64x256, 0},
	// Movement: no FLOPs. A broadcast reads its small operand, writes the big result.
	{"broadcast", "%b: f32[256]", "%r = broadcast %b {dims=[1]} : f32[64,256]", 0, 0, 1024, x64x256, 0},
	// A transpose to f32[256,64] pads its 64 lanes to 128: twice the bytes written.
	{"transpose", "%x: f32[64,256]", "%r = transpose %x {perm=[1,0]}", 0, 0, x64x256, 256 * 128 * 4, 0},
	// A slice reads its window: f32[4,64,32] pads 32 lanes to 128, as its operand does.
	{"slice", "%x: f32[4,64,64]", "%r = slice %x {start=[0,0,0], limit=[4,64,32]}", 0, 0, 4 * 64 * 128 * 4, 4 * 64 * 128 * 4, 0},
	// take reads the rows it gathers (f32[8,64]: 8*128*4) and the indices (one T(128) tile).
	{"take", "%t: f32[1000,64], %i: i32[8]", "%r = take %t, %i {axis=0}", 0, 0, 8*128*4 + 512, 8 * 128 * 4, 0},
	{"iota", "", "%r = iota {axis=0} : i32[64,64]", 0, 0, 0, 64 * 128 * 4, 0},
	// A copy moves data only: it reads f32[4,64,32] row-major (32 lanes pad
	// to 128) and writes it in {1,2,0} (64 lanes pad to 128), each tiled.
	{"copy", "%x: f32[4,64,32]", "%r = copy %x : f32[4,64,32]{1,2,0:T(8,128)}", 0, 0, 4 * 64 * 128 * 4, 4 * 32 * 128 * 4, 0},
	// top_k over 256: 8 compares an element (a comparison sort, ceil(log2 256));
	// it writes f32[64,8] and i32[64,8], each 64 rows of a 128-lane tile.
	{"top_k", "%x: f32[64,256]", "%v, %i = top_k %x {k=8}", 64 * 256 * 8, 0, x64x256, 2 * 64 * 128 * 4, 0},
	{"scatter_add", "%x: f32[64,256], %i: i32[8], %u: f32[8,256]", "%r = scatter_add %x, %i, %u {axis=0}", 8 * 256, 0, x64x256 + 512 + 8*256*4, x64x256, 0},
}

func TestOpCosts(t *testing.T) {
	for _, c := range opCases {
		t.Run(c.name, func(t *testing.T) {
			f, last := single(t, c.params, c.body)
			got, err := target.V5e.GroupCost(f, []*ir.Instr{last})
			if err != nil {
				t.Fatal(err)
			}
			if got.FLOPs != c.flops || got.Transcendentals != c.transc || got.ReadBytes != c.read || got.WriteBytes != c.write || got.PaddedMatmulFLOPs != c.padded {
				t.Errorf("FLOPs %d transc %d read %d write %d padded %d\nwant  %d       %d      %d      %d       %d",
					got.FLOPs, got.Transcendentals, got.ReadBytes, got.WriteBytes, got.PaddedMatmulFLOPs,
					c.flops, c.transc, c.read, c.write, c.padded)
			}
			// The roofline: max of compute and memory time.
			mem := float64(got.ReadBytes+got.WriteBytes) / 819e9
			if !near(got.MemorySeconds, mem) || !near(got.Seconds, math.Max(got.ComputeSeconds, mem)) {
				t.Errorf("memory %g s (want %g), time %g s", got.MemorySeconds, mem, got.Seconds)
			}
			if got.FLOPs != got.MatmulFLOPs && got.MatmulFLOPs != 0 {
				t.Errorf("matmul FLOPs %d of %d", got.MatmulFLOPs, got.FLOPs)
			}
		})
	}
}

// TestMatmulTimes: the compute side of the roofline, by hand.
func TestMatmulTimes(t *testing.T) {
	const attn = "%r = dot_general %q, %k {lhs_batch=[0], rhs_batch=[0], lhs_contract=[2], rhs_contract=[2]} : f32[4,64,64]"
	f, dot := single(t, "%q: f32[4,64,64], %k: f32[4,64,64]", attn)
	cases := []struct {
		t       *target.Target
		padded  int64
		seconds float64
	}{
		{target.V5e, 2 * 4 * 64 * 128 * 128, 2 * 4 * 64 * 128 * 128 / 197e12},
		// 256 wide: K and N pad 64 -> 256, 1/16 of the MXU's work is useful.
		{target.V6e, 2 * 4 * 64 * 256 * 256, 2 * 4 * 64 * 256 * 256 / 918e12},
		// The CPU pads nothing and multiplies at its FMA peak.
		{refCPU, 2 * 4 * 64 * 64 * 64, 2 * 4 * 64 * 64 * 64 / 453e9},
	}
	for _, c := range cases {
		got, err := c.t.GroupCost(f, []*ir.Instr{dot})
		if err != nil {
			t.Fatal(err)
		}
		if got.MatmulFLOPs != 2*4*64*64*64 || got.PaddedMatmulFLOPs != c.padded || !near(got.ComputeSeconds, c.seconds) {
			t.Errorf("%s: matmul %d padded %d compute %g s; want padded %d, %g s", c.t.Name(), got.MatmulFLOPs, got.PaddedMatmulFLOPs, got.ComputeSeconds, c.padded, c.seconds)
		}
	}
	// A large bf16 matmul is compute-bound on v5e: 2*4096^3 FLOPs against three 32 MiB arrays.
	f, dot = single(t, "%x: bf16[4096,4096], %w: bf16[4096,4096]", "%r = matmul %x, %w : bf16[4096,4096]")
	got, err := target.V5e.GroupCost(f, []*ir.Instr{dot})
	if err != nil {
		t.Fatal(err)
	}
	if !got.ComputeBound() || !near(got.Seconds, 2*4096*4096*4096/197e12) || got.Bytes() != 3*4096*4096*2 {
		t.Errorf("bf16 4096^3: compute-bound %v, %g s, %d bytes", got.ComputeBound(), got.Seconds, got.Bytes())
	}
	// The vector unit and the transcendental charge: exp of f32[64,256] on the CPU.
	f, exp := single(t, "%x: f32[64,256]", "%r = exp %x")
	got, err = refCPU.GroupCost(f, []*ir.Instr{exp})
	if err != nil {
		t.Fatal(err)
	}
	if !near(got.ComputeSeconds, 16384*10/226.5e9) || !near(got.MemorySeconds, 2*x64x256/28e9) {
		t.Errorf("cpu exp: compute %g s, memory %g s", got.ComputeSeconds, got.MemorySeconds)
	}
}

const chainSrc = `func @f(%x: f32[64,256], %y: f32[64,256], %b: f32[256]) -> f32[64,256] {
  %m = mul %x, %y
  %bb = broadcast %b {dims=[1]} : f32[64,256]
  %a = add %m, %bb
  %r = tanh %a
  return %r
}
`

// TestGroups: a group reads its external operands once and writes only what leaves it,
// and GroupBytes gives the traffic fusion saves.
func TestGroups(t *testing.T) {
	f := parse(t, chainSrc).Funcs[0]
	ins := f.Body.Instrs // mul, broadcast, add, tanh, return
	mul, bc, add, tanh := ins[0], ins[1], ins[2], ins[3]

	single := int64(0)
	for _, in := range []*ir.Instr{mul, bc, add, tanh} {
		single += target.V5e.GroupBytes(f, []*ir.Instr{in})
	}
	// mul 3x, broadcast 1024 + 1x, add 3x, tanh 2x (x = 65536).
	if single != 9*x64x256+1024 {
		t.Errorf("singletons move %d bytes, want %d", single, 9*x64x256+1024)
	}
	all := []*ir.Instr{mul, bc, add, tanh}
	c, err := target.V5e.GroupCost(f, all)
	if err != nil {
		t.Fatal(err)
	}
	// One kernel: reads x, y and b, writes r.
	if c.ReadBytes != 2*x64x256+1024 || c.WriteBytes != x64x256 || c.FLOPs != 2*16384 || c.Transcendentals != 16384 {
		t.Errorf("fused: read %d write %d FLOPs %d transc %d", c.ReadBytes, c.WriteBytes, c.FLOPs, c.Transcendentals)
	}
	if got := target.V5e.GroupBytes(f, all); got != c.Bytes() {
		t.Errorf("GroupBytes %d, GroupCost %d", got, c.Bytes())
	}
	if got := target.V5e.GroupSeconds(f, all); !near(got, c.Seconds) {
		t.Errorf("GroupSeconds %g, GroupCost %g", got, c.Seconds)
	}
	// Fusing the add into the mul saves writing and reading %m back.
	saved := target.V5e.GroupBytes(f, []*ir.Instr{mul}) + target.V5e.GroupBytes(f, []*ir.Instr{add}) - target.V5e.GroupBytes(f, []*ir.Instr{mul, add})
	if saved != 2*x64x256 {
		t.Errorf("fusing add into mul saves %d bytes, want %d", saved, 2*x64x256)
	}
	// A value used both inside and outside the group is written.
	c, err = target.V5e.GroupCost(f, []*ir.Instr{mul, bc})
	if err != nil {
		t.Fatal(err)
	}
	if c.WriteBytes != 2*x64x256 {
		t.Errorf("mul+broadcast write %d bytes, want both results", c.WriteBytes)
	}
}

func TestAnalyze(t *testing.T) {
	src := `func @f(%x: f32[64,256]) -> f32[64,256] {
  %a = exp %x
  %b = exp %a
  %c = add %a, %b
  %d = exp %c
  return %d
}
`
	f := parse(t, src).Funcs[0]
	an, err := target.Analyze(f, target.V5e, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(an.Groups) != 4 || an.ParamBytes != x64x256 || an.ConstBytes != 0 {
		t.Fatalf("%d groups, params %d, constants %d", len(an.Groups), an.ParamBytes, an.ConstBytes)
	}
	// Live after each group: a; a b; (a, b freed after c) c; d (c freed).
	// The peak is a, b and c at once while c is written: 3 arrays.
	if an.PeakBytes != 3*x64x256 {
		t.Errorf("peak activations %d, want %d", an.PeakBytes, 3*x64x256)
	}
	if an.Total.Bytes() != (2+2+3+2)*x64x256 || an.Total.Transcendentals != 3*16384 || an.Total.FLOPs != 16384 {
		t.Errorf("total: %d bytes, %d transcendentals, %d FLOPs", an.Total.Bytes(), an.Total.Transcendentals, an.Total.FLOPs)
	}
	var sum float64
	for _, c := range an.Costs {
		sum += c.Seconds
	}
	if !near(an.Total.Seconds, sum) || an.Footprint() != 4*x64x256 || !an.Fits() {
		t.Errorf("total time %g (sum %g), footprint %d, fits %v", an.Total.Seconds, sum, an.Footprint(), an.Fits())
	}
}

// TestNotFit: a f32[100000,100000] parameter (40 GB) does not fit a v5e's 16 GiB.
func TestNotFit(t *testing.T) {
	src := "func @f(%x: f32[100000,100000]) -> f32[100000,100000] {\n  %y = neg %x\n  return %y\n}\n"
	f := parse(t, src).Funcs[0]
	for _, c := range []struct {
		t    *target.Target
		fits bool
	}{{target.V5e, false}, {target.V6e, false}, {target.V5p, true}, {target.V7x, true}} {
		an, err := target.Analyze(f, c.t, nil)
		if err != nil {
			t.Fatal(err)
		}
		const b = 100000 * 100096 * 4
		if an.ParamBytes != b || an.PeakBytes != b || an.Fits() != c.fits {
			t.Errorf("%s: params %d, peak %d, fits %v", c.t.Name(), an.ParamBytes, an.PeakBytes, an.Fits())
		}
	}
}

func TestCallAndConstants(t *testing.T) {
	src := `func @g(%a: f32[64,256]) -> f32[64,256] {
  %c = constant [[1.0, 2.0], [3.0, 4.0]] : f32[2,2]
  %s = reduce_sum %c {axes=[0,1]}
  %e = exp %a
  %m = mul %e, %s
  return %m
}

func @main(%x: f32[64,256]) -> f32[64,256] {
  %y = call @g(%x) : f32[64,256]
  %z = call @g(%y) : f32[64,256]
  return %z
}
`
	m := parse(t, src)
	g, main := m.Funcs[0], m.Funcs[1]
	ag, err := target.Analyze(g, target.V5e, nil)
	if err != nil {
		t.Fatal(err)
	}
	am, err := target.Analyze(main, target.V5e, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Each call costs the callee's groups.
	if len(am.Groups) != 2 || am.Costs[0] != ag.Total || am.Total.FLOPs != 2*ag.Total.FLOPs {
		t.Errorf("calls: %+v\ncallee: %+v", am.Costs, ag.Total)
	}
	// @g's dense f32[2,2] constant (one T(2,128) tile, 1024 bytes) counts once.
	if ag.ConstBytes != 1024 || am.ConstBytes != 1024 {
		t.Errorf("constants: @g %d, @main %d", ag.ConstBytes, am.ConstBytes)
	}
	// The f32[] scalar %s is written (a T(128) tile) and read.
	if ag.Costs[0].WriteBytes != 512 || ag.Costs[0].ReadBytes != 1024 {
		t.Errorf("reduce_sum of the constant: %+v", ag.Costs[0])
	}
}

func TestCostErrors(t *testing.T) {
	src := "func @f(%x: f32[B,16]) -> f32[B,16] {\n  %y = neg %x\n  return %y\n}\n"
	f := parse(t, src).Funcs[0]
	_, err := target.Analyze(f, target.V5e, nil)
	if err == nil || err.Error() != "m.tir:1:9: error: cannot cost @f: parameter type f32[B,16] is not static" {
		t.Errorf("symbolic parameter: %v", err)
	}
	_, err = target.V5e.GroupCost(f, f.Body.Instrs[:1])
	if err == nil || err.Error() != "m.tir:2:3: error: cannot cost neg: operand type f32[B,16] is not static" {
		t.Errorf("symbolic group: %v", err)
	}
	if got := target.V5e.GroupBytes(f, f.Body.Instrs[:1]); got != -1 {
		t.Errorf("GroupBytes of a symbolic group = %d, want -1", got)
	}
	if got := target.V5e.GroupSeconds(f, f.Body.Instrs[:1]); got != -1 {
		t.Errorf("GroupSeconds of a symbolic group = %g, want -1", got)
	}

	g := parse(t, chainSrc).Funcs[0]
	ins := g.Body.Instrs
	for _, c := range []struct {
		groups [][]*ir.Instr
		want   string
	}{
		{[][]*ir.Instr{ins[:2], ins[2:3]}, "tpu: a tanh of @f is in no group"},
		{[][]*ir.Instr{ins[:2], ins[1:4]}, "tpu: a broadcast of @f is in groups 0 and 1"},
		{[][]*ir.Instr{ins[:4], ins[4:]}, "tpu: group 1 of @f holds a return that is not an instruction of its body"},
		{[][]*ir.Instr{ins[2:4], ins[:2]}, "tpu: groups of @f out of order: group 0 reads a value group 1 writes"},
		{[][]*ir.Instr{ins[:4], {}}, "tpu: empty group in @f"},
	} {
		_, err := target.Analyze(g, target.V5e, c.groups)
		if err == nil || err.Error() != c.want {
			t.Errorf("Analyze: %v, want %s", err, c.want)
		}
	}
	// Explicit groups that partition the body are fine: {mul, broadcast} reads x, y
	// and b and writes m and bb for {add, tanh}, which writes r.
	an, err := target.Analyze(g, target.V5e, [][]*ir.Instr{ins[:2], ins[2:4]})
	if err != nil || len(an.Costs) != 2 || an.Total.Bytes() != (2*x64x256+1024)+2*x64x256+2*x64x256+x64x256 {
		t.Errorf("two groups: %v, %+v", err, an)
	}
}

// single parses a function with the given parameters and body that returns every
// result of the body's last instruction, and returns it and that instruction.
func single(t *testing.T, params, body string) (*ir.Func, *ir.Instr) {
	t.Helper()
	lines := strings.Split(body, "\n")
	lhs, _, _ := strings.Cut(strings.TrimSpace(lines[len(lines)-1]), " = ")
	// Parse once without results to learn the last instruction's result types.
	probe := parse(t, "func @f("+params+") -> () {\n  "+body+"\n  return\n}\n").Funcs[0]
	last := probe.Body.Instrs[len(probe.Body.Instrs)-2]
	var types []string
	for _, r := range last.Results {
		types = append(types, r.Type.String())
	}
	src := "func @f(" + params + ") -> (" + strings.Join(types, ", ") + ") {\n  " + body + "\n  return " + lhs + "\n}\n"
	f := parse(t, src).Funcs[0]
	return f, f.Body.Instrs[len(f.Body.Instrs)-2]
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }

// TestFusionInstr: an instruction with a region (as the fuse pass will make) is a
// group by itself; its body's work counts, its operands and results are the traffic.
func TestFusionInstr(t *testing.T) {
	m := ir.NewModule("m.tir")
	ty := ir.Tensor(ir.F32, 64, 256)
	f := m.NewFunc("f", []string{"x", "y"}, []ir.Type{ty, ty}, []ir.Type{ty}, ir.Pos{})
	// A stand-in op: the fusion op does not exist yet, and the model reads only the region.
	fus := f.NewInstr(ir.OpInvalid, nil, []*ir.Value{f.Params[0], f.Params[1]}, []ir.Type{ty}, ir.Pos{})
	p0, p1 := f.NewValue(ty), f.NewValue(ty)
	body := &ir.Block{Params: []*ir.Value{p0, p1}, Parent: fus}
	mul := f.NewInstr(ir.OpMul, nil, []*ir.Value{p0, p1}, []ir.Type{ty}, ir.Pos{})
	body.Append(mul)
	exp := f.NewInstr(ir.OpExp, nil, []*ir.Value{mul.Result()}, []ir.Type{ty}, ir.Pos{})
	body.Append(exp)
	body.Append(f.NewInstr(ir.OpReturn, nil, []*ir.Value{exp.Result()}, nil, ir.Pos{}))
	fus.Regions = []*ir.Block{body}
	f.Body.Append(fus)
	f.Body.Append(f.NewInstr(ir.OpReturn, nil, fus.Results, nil, ir.Pos{}))

	an, err := target.Analyze(f, target.V5e, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := an.Total
	if len(an.Groups) != 1 || c.FLOPs != 16384 || c.Transcendentals != 16384 || c.ReadBytes != 2*x64x256 || c.WriteBytes != x64x256 {
		t.Errorf("%d groups; %+v", len(an.Groups), c)
	}
	if an.PeakBytes != x64x256 {
		t.Errorf("peak activations %d, want %d", an.PeakBytes, x64x256)
	}
}
