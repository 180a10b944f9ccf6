package cpu

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/progen"
	"github.com/tpucc/tpucc/ir"
)

// scratchSlack is what a kernel may allocate beyond its results and its
// counted scratch: slice headers, attribute copies, small index arrays.
const scratchSlack = 2 << 10

// TestScratchCounted walks ir's op table: for every op that a kernel runs,
// the four largest instances drawn from generated programs (dimensions up
// to 64) and those of bigScratch allocate, beyond their results' bytes, at
// most the scratch the memory check counts for them (scratchBytes), 1/8
// more for Go's rounding, plus scratchSlack. TotalAlloc counts every
// allocation, so this bounds the peak too. Before scratch was counted,
// the i8 [1,65536]x[65536,1] product allocated 32 MiB (64 rows of K int64)
// and argsort 8 bytes an element of the whole tensor.
func TestScratchCounted(t *testing.T) {
	// (regionPerElement's ops are left out: see there.)
	samples := map[ir.Op][]*ir.Instr{}
	for _, m := range progen.Corpus(400, progen.Config{MaxDim: 64, MaxElements: 1 << 16}) {
		for _, f := range m.Funcs {
			f.Body.Walk(func(in *ir.Instr) { samples[in.Op] = append(samples[in.Op], in) })
		}
	}
	big, err := tir.Parse("big.tir", []byte(bigScratch))
	if err != nil {
		t.Fatal(err)
	}
	big.Entry().Body.Walk(func(in *ir.Instr) { samples[in.Op] = append(samples[in.Op], in) })
	handWritten(t).Entry().Body.Walk(func(in *ir.Instr) { samples[in.Op] = append(samples[in.Op], in) })
	for op, ins := range samples { // the four largest of each op
		slices.SortStableFunc(ins, func(a, b *ir.Instr) int { return cmp.Compare(elements(b), elements(a)) })
		samples[op] = ins[:min(4, len(ins))]
	}
	for _, op := range ir.Ops() {
		if _, ok := runByRun[op]; ok || regionPerElement[op] {
			continue
		}
		if len(samples[op]) == 0 {
			t.Errorf("%s: no generated program contains it, so its scratch is not checked", op)
		}
		for _, in := range samples[op] {
			m := ir.NewModule("")
			types := make([]ir.Type, len(in.Args))
			for i, a := range in.Args {
				types[i] = a.Type
			}
			args := RandomInputs(m.NewFunc("f", nil, types, nil, ir.Pos{}), 1)
			used := allocated(func() {
				res, err := Eval(in, args)
				if err != nil {
					t.Fatalf("%s: %v", op, err)
				}
				for _, r := range res {
					keep = r
				}
			})
			for _, r := range in.Results {
				n, _ := r.Type.NumElements()
				used -= allocSize(n*int64(r.Type.DType.Size()) + backend.Alignment - 8) // backend.New
			}
			// Go rounds each buffer up to a size class or whole pages: up to 1/8 more.
			if n := scratchBytes(in); used > n+n/8+scratchSlack {
				t.Errorf("%s on %s -> %s: allocated %d bytes beyond its results, counted %d (+1/8 +%d slack)",
					op, argTypes(in), in.Results[0].Type, used, n, scratchSlack)
			}
		}
	}
}

var keep *backend.Buffer

// bigScratch has instances of the ops with scratch at sizes where it is
// tens of KiB to MiB, well above scratchSlack: the i8 [1,K]x[K,1]
// product (at K=2^16), a dot whose lhs is reordered, sorts of many lines.
const bigScratch = `func @f(%a: f32[64,512], %b: f32[512,96], %i: i8[1,65536], %j: i8[65536,1], %c: f32[512,64],
    %x: f32[100,200], %g: i32[4], %w: f32[4,512,40], %s: f32[512], %k: i16[3,50000]) -> f32[64,96] {
  %r0 = reduce_sum %a {axes=[0]} : f32[512]
  %r1 = reduce_max %a {axes=[1]} : f32[64]
  %m0 = matmul %a, %b : f32[64,96]
  %m1 = matmul %i, %j : i8[1,1]
  %m2 = dot_general %c, %b {lhs_contract=[0], rhs_contract=[0]} : f32[64,96]
  %m3 = dot_general %i, %i {lhs_contract=[1], rhs_contract=[1]} : i8[1,1]
  %s0 = softmax %x {axis=0} : f32[100,200]
  %s1 = layer_norm %a, %s, %s {eps=1e-5} : f32[64,512]
  %o0 = argsort %x {axis=1} : i32[100,200]
  %o1 = argsort %k {axis=1} : i32[3,50000]
  %t0, %t1 = top_k %x {k=3} : f32[100,3], i32[100,3]
  %q = ragged_dot %a, %w, %g : f32[64,40]
  return %m0
}`

// allocated is the bytes f allocates (runtime.MemStats.TotalAlloc).
// allocated is the least that f allocates over three runs: the count is
// the process's, so a run can include another goroutine's allocations
// (the runtime making a goroutine's g for a worker, once in a while) but
// never less than f's own, which every run repeats.
func allocated(f func()) int64 {
	least := int64(math.MaxInt64)
	for range 3 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		least = min(least, int64(b.TotalAlloc-a.TotalAlloc))
	}
	return least
}

func argTypes(in *ir.Instr) string {
	s := ""
	for i, a := range in.Args {
		if i > 0 {
			s += ", "
		}
		s += a.Type.String()
	}
	return s
}

// elements counts in's operand and result elements.
func elements(in *ir.Instr) int64 {
	n := int64(0)
	for _, v := range append(append([]*ir.Value{}, in.Args...), in.Results...) {
		k, _ := v.Type.NumElements()
		n += k
	}
	return n + n/8
}

// allocSize is about what Go's allocator takes for an n-byte buffer:
// whole 8 KiB pages above 32 KiB, a size class (at most 1/8 more) below.
func allocSize(n int64) int64 {
	if n > 32<<10 {
		return (n + 8<<10 - 1) / (8 << 10) * (8 << 10)
	}
	return n + n/8
}

// regionPerElement are the kernels that run a region for each comparison:
// every call of the region makes its scalar arguments and results, garbage
// that TotalAlloc counts and no scratch count covers, while the peak stays
// a few scalars beyond the results (sort: O(n log n) region calls).
var regionPerElement = map[ir.Op]bool{ir.OpSort: true}
