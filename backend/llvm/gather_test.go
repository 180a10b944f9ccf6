package llvm

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// opCase is one instruction of an index-op table test: its operands (a
// nil value is random from cpu.RandomInputs), its text with %a0, %a1 ...
// for the operands, and the types of its results.
type opCase struct {
	args  []ir.Type
	vals  [][]int64 // integer operand values; nil entries are random
	instr string
	res   []string
	raw   bool // vals are the elements' bit patterns
}

// runOpCases compiles every case into one function (one clang run) and
// asserts that its results are bit for bit the reference executor's, and
// that op is generated, not run on the reference.
func runOpCases(t *testing.T, op string, cases []opCase) {
	t.Helper()
	b := testBackend(t)
	var params, body, rets, types []string
	for i, c := range cases {
		ins := c.instr
		for j, a := range c.args {
			params = append(params, fmt.Sprintf("%%c%da%d: %s", i, j, a))
			ins = strings.ReplaceAll(ins, fmt.Sprintf("%%a%d", j), fmt.Sprintf("%%c%da%d", i, j))
		}
		var outs []string
		for j, r := range c.res {
			outs = append(outs, fmt.Sprintf("%%c%dr%d", i, j))
			types = append(types, r)
		}
		body = append(body, fmt.Sprintf("  %s = %s\n", strings.Join(outs, ", "), ins))
		rets = append(rets, outs...)
	}
	src := fmt.Sprintf("func @f(%s) -> (%s) {\n%s  return %s\n}\n", strings.Join(params, ", "),
		strings.Join(types, ", "), strings.Join(body, ""), strings.Join(rets, ", "))
	m, f, x := compileSrc(t, b, src)
	if g, fb := x.Coverage(); !strings.Contains(g, op) || strings.Contains(fb, op) {
		t.Fatalf("%s not generated: generated %s; reference %s", op, g, fb)
	}
	in := cpu.RandomInputs(f, 3)
	n := 0
	for _, c := range cases {
		for j, a := range c.args {
			switch {
			case j < len(c.vals) && c.vals[j] != nil && c.raw:
				in[n] = backend.New(a)
				z := a.DType.Size()
				for e, v := range c.vals[j] {
					for q := 0; q < z; q++ {
						in[n].Bytes()[e*z+q] = byte(v >> (8 * q))
					}
				}
			case j < len(c.vals) && c.vals[j] != nil:
				in[n] = backend.FromInts(a, c.vals[j]...)
			}
			n++
		}
	}
	want, err := cpu.Run(m, f, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	r := 0
	for i, c := range cases {
		for range c.res {
			if !bytes.Equal(want[r].Bytes(), got[r].Bytes()) {
				t.Errorf("case %d (%s): got %v, want %v", i, c.instr, got[r], want[r])
			}
			r++
		}
	}
}

func tt(dt ir.DType, dims ...int64) ir.Type { return ir.Tensor(dt, dims...) }

// TestOneHot: indices of several dtypes, negative and past depth (a row
// of zeros), results of every kind of dtype.
func TestOneHot(t *testing.T) {
	runOpCases(t, "one_hot", []opCase{
		{args: []ir.Type{tt(ir.I32, 6)}, vals: [][]int64{{-1, 0, 3, 4, 2, 100}}, instr: "one_hot %a0 {depth=4} : f32[6,4]", res: []string{"f32[6,4]"}},
		{args: []ir.Type{tt(ir.U8, 3)}, vals: [][]int64{{255, 2, 0}}, instr: "one_hot %a0 {depth=3} : i32[3,3]", res: []string{"i32[3,3]"}},
		{args: []ir.Type{tt(ir.I64, 2, 2)}, vals: [][]int64{{1, -1, 0, 5}}, instr: "one_hot %a0 {depth=2} : i1[2,2,2]", res: []string{"i1[2,2,2]"}},
		{args: []ir.Type{tt(ir.I8, 3)}, vals: [][]int64{{1, -128, 0}}, instr: "one_hot %a0 {depth=2} : bf16[3,2]", res: []string{"bf16[3,2]"}},
		{args: []ir.Type{tt(ir.U32, 2)}, vals: [][]int64{{4294967295, 1}}, instr: "one_hot %a0 {depth=3} : i64[2,3]", res: []string{"i64[2,3]"}},
		{args: []ir.Type{tt(ir.I32)}, vals: [][]int64{{2}}, instr: "one_hot %a0 {depth=5} : f16[5]", res: []string{"f16[5]"}},
	})
}

// TestTopK: ties (kept in index order), NaN of both signs, ±0 and ±inf,
// k = 1 and k = n, integer dtypes, f16/bf16, a split routing-sized case.
func TestTopK(t *testing.T) {
	nan, nnan := int64(0x7fc00000), int64(-0x400000) // f32 bits: NaN, -NaN
	snan := int64(0x7f800001)                        // signalling NaN
	pinf, ninf, nz := int64(0x7f800000), int64(-0x800000), int64(-0x80000000)
	one, two := int64(0x3f800000), int64(0x40000000)
	f32row := []int64{one, nan, two, one, nz, 0, pinf, ninf, nnan, snan, two, nan}
	runOpCases(t, "top_k", []opCase{
		{args: []ir.Type{tt(ir.F32, 12)}, vals: [][]int64{f32row}, raw: true, instr: "top_k %a0 {k=12} : f32[12], i32[12]", res: []string{"f32[12]", "i32[12]"}},
		{args: []ir.Type{tt(ir.F32, 1, 12)}, vals: [][]int64{f32row}, raw: true, instr: "top_k %a0 {k=5} : f32[1,5], i32[1,5]", res: []string{"f32[1,5]", "i32[1,5]"}},
		{args: []ir.Type{tt(ir.F16, 6)}, vals: [][]int64{{0x7e00, 0xfe00, 0x7c01, 0x8000, 0, 0x7e00}}, raw: true, instr: "top_k %a0 {k=6} : f16[6], i32[6]", res: []string{"f16[6]", "i32[6]"}},
		{args: []ir.Type{tt(ir.F32, 2, 6)}, vals: [][]int64{{1, 3, 3, 2, 3, 1, -1, -1, -1, -1, -1, -1}}, instr: "top_k %a0 {k=4} : f32[2,4], i32[2,4]", res: []string{"f32[2,4]", "i32[2,4]"}},
		{args: []ir.Type{tt(ir.I32, 3, 5)}, vals: [][]int64{{5, -7, 5, 0, 9, -2147483648, 2147483647, 0, 0, 1, 4, 4, 4, 4, 4}}, instr: "top_k %a0 {k=5} : i32[3,5], i32[3,5]", res: []string{"i32[3,5]", "i32[3,5]"}},
		{args: []ir.Type{tt(ir.U8, 6)}, vals: [][]int64{{255, 1, 128, 127, 255, 0}}, instr: "top_k %a0 {k=1} : u8[1], i32[1]", res: []string{"u8[1]", "i32[1]"}},
		{args: []ir.Type{tt(ir.I64, 4)}, vals: [][]int64{{-1, 1 << 40, -(1 << 40), 1 << 40}}, instr: "top_k %a0 {k=3} : i64[3], i32[3]", res: []string{"i64[3]", "i32[3]"}},
		{args: []ir.Type{tt(ir.BF16, 4, 7)}, instr: "top_k %a0 {k=2} : bf16[4,2], i32[4,2]", res: []string{"bf16[4,2]", "i32[4,2]"}},
		{args: []ir.Type{tt(ir.F16, 3, 9)}, instr: "top_k %a0 {k=9} : f16[3,9], i32[3,9]", res: []string{"f16[3,9]", "i32[3,9]"}},
		{args: []ir.Type{tt(ir.F32, 512, 128)}, instr: "top_k %a0 {k=8} : f32[512,8], i32[512,8]", res: []string{"f32[512,8]", "i32[512,8]"}},
	})
}

// TestTopKReusedIndexBuffer: top_k whose index result, not a result of the
// program (mul reads it), gets the storage an earlier step wrote (the
// and's, dead by then: the run recycles it), so
// that its slots hold old bytes until the kernel writes them; progen seed
// 20303 crashed here (SIGSEGV: clang read the unwritten slots, and x at
// those indices).
func TestTopKReusedIndexBuffer(t *testing.T) {
	b := testBackend(t)
	src := `func @main(%p0: u8[1,6,4,7]) -> (i32[1,6,1,2], u8[1,6,1,2], u8[1,6,1,7]) {
  %0 = relu %p0 : u8[1,6,4,7]
  %2 = and %0, %p0 : u8[1,6,4,7]
  %3 = reduce_max %2 {axes=[2], keepdims=true} : u8[1,6,1,7]
  %15, %16 = top_k %3 {k=2} : u8[1,6,1,2], i32[1,6,1,2]
  %17 = mul %16, %16 : i32[1,6,1,2]
  %20 = clz %3 : u8[1,6,1,7]
  return %17, %15, %20
}
`
	exe := compileText(t, "topk_reused.tir", []byte(src))
	x, err := b.compile(exe.Module, exe.Entry, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 0x7f bytes: an index read from them is 0x7f7f7f7f, far outside x.
	in := cpu.RandomInputs(exe.Entry, 1)
	for i := range 6 * 4 * 7 {
		in[0].SetInt64(i, 0x7f-int64(i%3))
	}
	agree(t, x, exe.Module, exe.Entry, in)
	agree(t, x, exe.Module, exe.Entry, cpu.RandomInputs(exe.Entry, 2))
}

// BenchmarkTopK times top_k at routing sizes (512 tokens over 128 experts,
// k=8, as Qwen3-30B-A3B; 4096 over 64, k=2):
// go test ./backend/llvm -run '^$' -bench TopK
func BenchmarkTopK(b *testing.B) {
	be := testBackend(b)
	for _, src := range []string{
		"func @f(%x: f32[512,128]) -> (f32[512,8], i32[512,8]) {\n  %v, %i = top_k %x {k=8} : f32[512,8], i32[512,8]\n  return %v, %i\n}\n",
		"func @f(%x: f32[4096,64]) -> (f32[4096,2], i32[4096,2]) {\n  %v, %i = top_k %x {k=2} : f32[4096,2], i32[4096,2]\n  return %v, %i\n}\n",
	} {
		exe := compileText(b, "topk.tir", []byte(src))
		x, err := be.compile(exe.Module, exe.Entry, nil)
		if err != nil {
			b.Fatal(err)
		}
		args := cpu.RandomInputs(exe.Entry, 1)
		b.Run(exe.Entry.Params[0].Type.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := x.Run(args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestArgsort: ties (stable), NaN of both signs, ±0 and ±inf, an inner
// axis, integer dtypes, f16/bf16, a routing-sized line split by rows; and
// the same in lines longer than argsortInsertMax, which are merged: a
// prefill's routing (8192 expert ids of 128, nearly all ties), a line of
// 257 and lines of 300 full of NaN and ties along an inner axis.
func TestArgsort(t *testing.T) {
	nan, nnan, snan := int64(0x7fc00000), int64(-0x400000), int64(0x7f800001)
	pinf, ninf, nz := int64(0x7f800000), int64(-0x800000), int64(-0x80000000)
	one, two := int64(0x3f800000), int64(0x40000000)
	f32row := []int64{one, nan, two, one, nz, 0, pinf, ninf, nnan, snan, two, nan}
	var long, ids, down []int64
	for i := range 900 {
		long = append(long, f32row[(i*5)%len(f32row)])
	}
	for i := range 8192 {
		ids = append(ids, int64(i*37%128))
	}
	for i := range 257 {
		down = append(down, int64((300-i)/3))
	}
	runOpCases(t, "argsort", []opCase{
		{args: []ir.Type{tt(ir.F32, 900)}, vals: [][]int64{long}, raw: true, instr: "argsort %a0 {axis=0}", res: []string{"i32[900]"}},
		{args: []ir.Type{tt(ir.F32, 300, 3)}, vals: [][]int64{long}, raw: true, instr: "argsort %a0 {axis=0}", res: []string{"i32[300,3]"}},
		{args: []ir.Type{tt(ir.I32, 8192)}, vals: [][]int64{ids}, instr: "argsort %a0 {axis=0}", res: []string{"i32[8192]"}},
		{args: []ir.Type{tt(ir.I32, 257)}, vals: [][]int64{down}, instr: "argsort %a0 {axis=0}", res: []string{"i32[257]"}},
		{args: []ir.Type{tt(ir.F32, 12)}, vals: [][]int64{f32row}, raw: true, instr: "argsort %a0 {axis=0}", res: []string{"i32[12]"}},
		{args: []ir.Type{tt(ir.F32, 3, 4)}, vals: [][]int64{f32row}, raw: true, instr: "argsort %a0 {axis=0}", res: []string{"i32[3,4]"}},
		{args: []ir.Type{tt(ir.F16, 6)}, vals: [][]int64{{0x7e00, 0xfe00, 0x7c01, 0x8000, 0, 0x7e00}}, raw: true, instr: "argsort %a0 {axis=0}", res: []string{"i32[6]"}},
		{args: []ir.Type{tt(ir.I32, 2, 5)}, vals: [][]int64{{5, -7, 5, 0, 9, -2147483648, 2147483647, 0, 0, 1}}, instr: "argsort %a0 {axis=1}", res: []string{"i32[2,5]"}},
		{args: []ir.Type{tt(ir.U8, 6)}, vals: [][]int64{{255, 1, 128, 127, 255, 0}}, instr: "argsort %a0 {axis=0}", res: []string{"i32[6]"}},
		{args: []ir.Type{tt(ir.I64, 4)}, vals: [][]int64{{-1, 1 << 40, -(1 << 40), 1 << 40}}, instr: "argsort %a0 {axis=0}", res: []string{"i32[4]"}},
		{args: []ir.Type{tt(ir.I32, 1)}, vals: [][]int64{{3}}, instr: "argsort %a0 {axis=0}", res: []string{"i32[1]"}},
		{args: []ir.Type{tt(ir.BF16, 4, 7, 2)}, instr: "argsort %a0 {axis=1}", res: []string{"i32[4,7,2]"}},
		{args: []ir.Type{tt(ir.I32, 512)}, vals: [][]int64{nil}, instr: "argsort %a0 {axis=0}", res: []string{"i32[512]"}},
		{args: []ir.Type{tt(ir.F32, 64, 512)}, instr: "argsort %a0 {axis=1}", res: []string{"i32[64,512]"}},
	})
}

// TestPad: pad is an expression: edge padding of both signs, interior
// padding, an empty operand, and i1, integer and half dtypes, against the
// reference executor.
func TestPad(t *testing.T) {
	runOpCases(t, "pad", []opCase{
		{args: []ir.Type{tt(ir.F32, 3, 4), tt(ir.F32)}, instr: "pad %a0, %a1 {low=[1,-1], high=[2,1], interior=[1,0]} : f32[8,4]", res: []string{"f32[8,4]"}},
		{args: []ir.Type{tt(ir.I1, 5), tt(ir.I1)}, vals: [][]int64{{1, 0, 1, 1, 0}, {1}}, instr: "pad %a0, %a1 {low=[2], high=[0], interior=[2]} : i1[15]", res: []string{"i1[15]"}},
		{args: []ir.Type{tt(ir.BF16, 2, 3), tt(ir.BF16)}, instr: "pad %a0, %a1 {low=[0,3], high=[1,-2], interior=[0,1]} : bf16[3,6]", res: []string{"bf16[3,6]"}},
		{args: []ir.Type{tt(ir.I32, 0, 2), tt(ir.I32)}, vals: [][]int64{nil, {7}}, instr: "pad %a0, %a1 {low=[1,0], high=[1,0]} : i32[2,2]", res: []string{"i32[2,2]"}},
		{args: []ir.Type{tt(ir.U8, 4), tt(ir.U8)}, vals: [][]int64{{1, 2, 3, 4}, {9}}, instr: "pad %a0, %a1 {low=[-2], high=[-1]} : u8[1]", res: []string{"u8[1]"}},
		{args: []ir.Type{tt(ir.F16, 3), tt(ir.F16)}, instr: "pad %a0, %a1 {low=[0], high=[0], interior=[3]} : f16[9]", res: []string{"f16[9]"}},
	})
}

// TestArgReduce: argmax and argmin take the first best element; a NaN (of
// either sign, first one wins) beats every number; -0 and +0 tie; any
// axis, integer dtypes signed and unsigned, f16 and bf16.
func TestArgReduce(t *testing.T) {
	nan, nnan := int64(0x7fc00000), int64(-0x400000)
	pinf, ninf, nz := int64(0x7f800000), int64(-0x800000), int64(-0x80000000)
	one, two := int64(0x3f800000), int64(0x40000000)
	row := []int64{one, two, ninf, two, nz, 0, pinf, ninf, one, two, one, 0}
	nanRow := []int64{one, two, nnan, pinf, nan, ninf}
	for _, op := range []string{"argmax", "argmin"} {
		t.Run(op, func(t *testing.T) {
			runOpCases(t, op, []opCase{
				{args: []ir.Type{tt(ir.F32, 12)}, vals: [][]int64{row}, raw: true, instr: op + " %a0 {axis=0} : i32[]", res: []string{"i32[]"}},
				{args: []ir.Type{tt(ir.F32, 3, 4)}, vals: [][]int64{row}, raw: true, instr: op + " %a0 {axis=1} : i32[3]", res: []string{"i32[3]"}},
				{args: []ir.Type{tt(ir.F32, 3, 4)}, vals: [][]int64{row}, raw: true, instr: op + " %a0 {axis=0} : i32[4]", res: []string{"i32[4]"}},
				{args: []ir.Type{tt(ir.F32, 2, 3)}, vals: [][]int64{nanRow}, raw: true, instr: op + " %a0 {axis=1} : i32[2]", res: []string{"i32[2]"}},
				{args: []ir.Type{tt(ir.F32, 6)}, vals: [][]int64{nanRow}, raw: true, instr: op + " %a0 {axis=0} : i32[]", res: []string{"i32[]"}},
				{args: []ir.Type{tt(ir.I32, 2, 5)}, vals: [][]int64{{3, -7, 3, 9, 9, -2147483648, 2147483647, 0, -2147483648, 2147483647}}, instr: op + " %a0 {axis=1} : i32[2]", res: []string{"i32[2]"}},
				{args: []ir.Type{tt(ir.U32, 4)}, vals: [][]int64{{1, 4294967295, 0, 4294967295}}, instr: op + " %a0 {axis=0} : i32[]", res: []string{"i32[]"}},
				{args: []ir.Type{tt(ir.U8, 2, 3)}, vals: [][]int64{{200, 7, 200, 0, 255, 0}}, instr: op + " %a0 {axis=1} : i32[2]", res: []string{"i32[2]"}},
				{args: []ir.Type{tt(ir.I8, 4)}, vals: [][]int64{{-128, 127, -128, 127}}, instr: op + " %a0 {axis=0} : i32[]", res: []string{"i32[]"}},
				{args: []ir.Type{tt(ir.I64, 3)}, vals: [][]int64{{1 << 40, -(1 << 40), 1 << 40}}, instr: op + " %a0 {axis=0} : i32[]", res: []string{"i32[]"}},
				{args: []ir.Type{tt(ir.BF16, 4, 5, 6)}, instr: op + " %a0 {axis=1} : i32[4,6]", res: []string{"i32[4,6]"}},
				{args: []ir.Type{tt(ir.F16, 2, 1, 3)}, vals: [][]int64{{0x7e00, 0xfe00, 0x3c00, 0x8000, 0, 0x7c00}}, raw: true, instr: op + " %a0 {axis=2} : i32[2,1]", res: []string{"i32[2,1]"}},
				{args: []ir.Type{tt(ir.F32, 64, 100)}, instr: op + " %a0 {axis=0} : i32[100]", res: []string{"i32[100]"}},
			})
		})
	}
}

// TestDynamicSlice: dynamic_slice is an expression; starts below 0 or past
// dim-size are clamped, of signed and unsigned dtypes, on i1, integer, f32
// and half operands.
func TestDynamicSlice(t *testing.T) {
	runOpCases(t, "dynamic_slice", []opCase{
		{args: []ir.Type{tt(ir.F32, 5, 6), tt(ir.I32), tt(ir.I32)}, vals: [][]int64{nil, {-3}, {4}}, instr: "dynamic_slice %a0, %a1, %a2 {sizes=[2,3]} : f32[2,3]", res: []string{"f32[2,3]"}},
		{args: []ir.Type{tt(ir.F32, 5, 6), tt(ir.I64), tt(ir.I64)}, vals: [][]int64{nil, {1}, {2}}, instr: "dynamic_slice %a0, %a1, %a2 {sizes=[4,4]} : f32[4,4]", res: []string{"f32[4,4]"}},
		{args: []ir.Type{tt(ir.I1, 7), tt(ir.U8)}, vals: [][]int64{{1, 0, 0, 1, 1, 0, 1}, {250}}, instr: "dynamic_slice %a0, %a1 {sizes=[3]} : i1[3]", res: []string{"i1[3]"}},
		{args: []ir.Type{tt(ir.BF16, 2, 3, 8), tt(ir.U32), tt(ir.U32), tt(ir.U32)}, vals: [][]int64{nil, {1}, {0}, {4294967295}}, instr: "dynamic_slice %a0, %a1, %a2, %a3 {sizes=[1,3,4]} : bf16[1,3,4]", res: []string{"bf16[1,3,4]"}},
		{args: []ir.Type{tt(ir.I32, 4), tt(ir.I32)}, vals: [][]int64{{10, 20, 30, 40}, {2}}, instr: "dynamic_slice %a0, %a1 {sizes=[4]} : i32[4]", res: []string{"i32[4]"}},
	})
}

// TestCumsum: the prefix sum along each axis, bit for bit with the
// reference executor: floats summed in f64 and rounded at each element
// (values whose f32 running sum would differ), integers wrapping.
func TestCumsum(t *testing.T) {
	big, tiny := int64(0x4b800000), int64(0x3f800000) // 2^24 and 1 as f32 bits: 2^24+1+1 needs f64
	nan, inf := int64(0x7fc00000), int64(0x7f800000)
	runOpCases(t, "cumsum", []opCase{
		{args: []ir.Type{tt(ir.F32, 5)}, vals: [][]int64{{big, tiny, tiny, tiny, tiny}}, raw: true, instr: "cumsum %a0 {axis=0} : f32[5]", res: []string{"f32[5]"}},
		{args: []ir.Type{tt(ir.F32, 2, 3)}, vals: [][]int64{{tiny, inf, tiny, nan, tiny, big}}, raw: true, instr: "cumsum %a0 {axis=1} : f32[2,3]", res: []string{"f32[2,3]"}},
		{args: []ir.Type{tt(ir.F32, 4, 3, 5)}, instr: "cumsum %a0 {axis=1} : f32[4,3,5]", res: []string{"f32[4,3,5]"}},
		{args: []ir.Type{tt(ir.BF16, 6, 4)}, instr: "cumsum %a0 {axis=0} : bf16[6,4]", res: []string{"bf16[6,4]"}},
		{args: []ir.Type{tt(ir.F16, 3, 7)}, instr: "cumsum %a0 {axis=1} : f16[3,7]", res: []string{"f16[3,7]"}},
		{args: []ir.Type{tt(ir.I8, 4)}, vals: [][]int64{{100, 100, -128, 5}}, instr: "cumsum %a0 {axis=0} : i8[4]", res: []string{"i8[4]"}},
		{args: []ir.Type{tt(ir.U32, 3)}, vals: [][]int64{{4294967295, 2, 7}}, instr: "cumsum %a0 {axis=0} : u32[3]", res: []string{"u32[3]"}},
		{args: []ir.Type{tt(ir.I64, 2, 2)}, vals: [][]int64{{1 << 62, 1 << 62, -1, -2}}, instr: "cumsum %a0 {axis=0} : i64[2,2]", res: []string{"i64[2,2]"}},
		{args: []ir.Type{tt(ir.I32, 1)}, vals: [][]int64{{-7}}, instr: "cumsum %a0 {axis=0} : i32[1]", res: []string{"i32[1]"}},
	})
}

// TestScatterAdd: duplicates accumulate in index order, indices outside
// [0, n) are dropped, any axis, signed and unsigned indices, floats
// (a NaN payload of x kept where no update lands) and wrapping integers,
// bit for bit with the reference executor.
func TestScatterAdd(t *testing.T) {
	snan, one := int64(0x7f800001), int64(0x3f800000)
	runOpCases(t, "scatter_add", []opCase{
		{args: []ir.Type{tt(ir.F32, 4, 3), tt(ir.I32, 5), tt(ir.F32, 5, 3)}, vals: [][]int64{nil, {2, -1, 2, 4, 0}}, instr: "scatter_add %a0, %a1, %a2 {axis=0} : f32[4,3]", res: []string{"f32[4,3]"}},
		{args: []ir.Type{tt(ir.F32, 3), tt(ir.U8, 2), tt(ir.F32, 2)}, vals: [][]int64{{snan, one, one}, {1, 255}, {one, one}}, raw: true, instr: "scatter_add %a0, %a1, %a2 {axis=0} : f32[3]", res: []string{"f32[3]"}},
		{args: []ir.Type{tt(ir.BF16, 2, 5, 3), tt(ir.I64, 2, 2), tt(ir.BF16, 2, 2, 2, 3)}, vals: [][]int64{nil, {4, 4, 0, 9}}, instr: "scatter_add %a0, %a1, %a2 {axis=1} : bf16[2,5,3]", res: []string{"bf16[2,5,3]"}},
		{args: []ir.Type{tt(ir.F16, 3, 4), tt(ir.I8, 3), tt(ir.F16, 3, 3)}, vals: [][]int64{nil, {3, -128, 3}}, instr: "scatter_add %a0, %a1, %a2 {axis=1} : f16[3,4]", res: []string{"f16[3,4]"}},
		{args: []ir.Type{tt(ir.I8, 3), tt(ir.I32, 3), tt(ir.I8, 3)}, vals: [][]int64{{120, 0, -128}, {0, 0, 2}, {5, 10, -1}}, instr: "scatter_add %a0, %a1, %a2 {axis=0} : i8[3]", res: []string{"i8[3]"}},
		// Index -1 would land in the previous row, index n in the next one.
		{args: []ir.Type{tt(ir.I32, 2, 3), tt(ir.I32, 2), tt(ir.I32, 2, 2)}, vals: [][]int64{{1, 2, 3, 4, 5, 6}, {3, -1}, {10, 20, 30, 40}}, instr: "scatter_add %a0, %a1, %a2 {axis=1} : i32[2,3]", res: []string{"i32[2,3]"}},
		{args: []ir.Type{tt(ir.U32, 2, 2), tt(ir.U32, 1), tt(ir.U32, 2, 1)}, vals: [][]int64{{4294967295, 1, 2, 3}, {1}, {1, 4294967295}}, instr: "scatter_add %a0, %a1, %a2 {axis=1} : u32[2,2]", res: []string{"u32[2,2]"}},
		{args: []ir.Type{tt(ir.F32, 64, 16), tt(ir.I32, 100), tt(ir.F32, 100, 16)}, instr: "scatter_add %a0, %a1, %a2 {axis=0} : f32[64,16]", res: []string{"f32[64,16]"}},
	})
}

// TestDynamicUpdateSlice: out of place, starts clamped on both sides,
// unsigned and narrow starts, f64 and i1 (copied bit for bit), an update
// the size of x.
func TestDynamicUpdateSlice(t *testing.T) {
	runOpCases(t, "dynamic_update_slice", []opCase{
		{args: []ir.Type{tt(ir.F32, 4, 5), tt(ir.F32, 2, 3), tt(ir.I32), tt(ir.I32)}, vals: [][]int64{nil, nil, {-4}, {3}}, instr: "dynamic_update_slice %a0, %a1, %a2, %a3 : f32[4,5]", res: []string{"f32[4,5]"}},
		{args: []ir.Type{tt(ir.F32, 4, 5), tt(ir.F32, 2, 3), tt(ir.I64), tt(ir.I64)}, vals: [][]int64{nil, nil, {1}, {1}}, instr: "dynamic_update_slice %a0, %a1, %a2, %a3 : f32[4,5]", res: []string{"f32[4,5]"}},
		{args: []ir.Type{tt(ir.I1, 6), tt(ir.I1, 2), tt(ir.U8)}, vals: [][]int64{{0, 0, 0, 0, 0, 0}, {1, 1}, {200}}, instr: "dynamic_update_slice %a0, %a1, %a2 : i1[6]", res: []string{"i1[6]"}},
		{args: []ir.Type{tt(ir.F64, 2, 3, 4), tt(ir.F64, 1, 3, 2), tt(ir.U32), tt(ir.U32), tt(ir.U32)}, vals: [][]int64{nil, nil, {1}, {0}, {4294967295}}, instr: "dynamic_update_slice %a0, %a1, %a2, %a3, %a4 : f64[2,3,4]", res: []string{"f64[2,3,4]"}},
		{args: []ir.Type{tt(ir.BF16, 3), tt(ir.BF16, 3), tt(ir.I16)}, vals: [][]int64{nil, nil, {2}}, instr: "dynamic_update_slice %a0, %a1, %a2 : bf16[3]", res: []string{"bf16[3]"}},
	})
}

// TestScatterAddZeros: an embedding's gradient, scatter_add of the tokens'
// rows into a zero table, is one step that zeroes the rows itself (no loop
// storing the zeros first, nothing read for them), with its rows split over
// the kernel's range; a -0.0 table is copied (an element no update reaches
// keeps its sign), and so is a zero table the program also returns. Indices
// repeat and fall outside [0, 37). The numbers are the reference
// executor's, bit for bit.
func TestScatterAddZeros(t *testing.T) {
	src := `func @grad(%idx: i32[9], %u: f32[9,5]) -> (f32[37,5], f32[37,5], f32[37,5], f32[37,5]) {
  %z = constant 0.0 : f32[37,5]
  %g = scatter_add %z, %idx, %u {axis=0} : f32[37,5]
  %nz = constant -0.0 : f32[37,5]
  %h = scatter_add %nz, %idx, %u {axis=0} : f32[37,5]
  %kept = constant 0.0 : f32[37,5]
  %k = scatter_add %kept, %idx, %u {axis=0} : f32[37,5]
  return %g, %h, %k, %kept
}
`
	m, f, x := compileSrc(t, testBackend(t), src)
	var whats []string
	for _, s := range x.StepTimes() {
		whats = append(whats, s.What)
	}
	want := []string{"scatter_add", "loop constant", "scatter_add", "loop constant", "scatter_add"}
	if !slices.Equal(whats, want) {
		t.Errorf("steps %q, want %q", whats, want)
	}
	in := cpu.RandomInputs(f, 4)
	for i, v := range []int64{3, 36, 3, 0, -1, 37, 20, 3, 36} {
		in[0].SetInt64(i, v)
	}
	sameBits(t, x, m, f, in)
}

// TestScatterAddInPlace: a scatter_add whose operand is a temporary that
// nothing else reads adds its updates into that temporary's storage (its
// step writes the slot the operand's loop wrote, with no copy), and one
// whose operand is read again (here returned) works on a copy; both give
// the reference executor's bits, duplicate and dropped indices included.
func TestScatterAddInPlace(t *testing.T) {
	src := `func @grad(%a: f32[37,5], %b: f32[37,5], %idx: i32[9], %u: f32[9,5]) -> (f32[37,5], f32[37,5], f32[37,5]) {
  %d = mul %a, %b
  %g = scatter_add %d, %idx, %u {axis=0} : f32[37,5]
  %e = add %a, %b
  %h = scatter_add %e, %idx, %u {axis=0} : f32[37,5]
  %r = mul %g, %h
  return %r, %h, %e
}
`
	m, f, x := compileSrc(t, testBackend(t), src)
	written := map[int]bool{}
	var inPlace, copied int
	for _, st := range x.plan.steps {
		if st.what == "scatter_add" {
			if written[st.bufs[0]] {
				inPlace++
			} else {
				copied++
			}
		}
		for _, b := range st.bufs[:st.outs] {
			written[b] = true
		}
	}
	if inPlace != 1 || copied != 1 {
		t.Errorf("scatter_adds: %d into their operand's storage, %d copying it; want 1 and 1\nplan:\n%s", inPlace, copied, x.plan)
	}
	in := cpu.RandomInputs(f, 4)
	for i, v := range []int64{3, 36, 3, 0, -1, 37, 20, 3, 36} {
		in[2].SetInt64(i, v)
	}
	sameBits(t, x, m, f, in)
}

// sameBits runs x and the reference executor on in and wants every
// result bit for bit the same.
func sameBits(t *testing.T, x *Executable, m *ir.Module, f *ir.Func, in []*backend.Buffer) {
	t.Helper()
	want, err := cpu.Run(m, f, in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if !bytes.Equal(got[i].Bytes(), want[i].Bytes()) {
			t.Errorf("result %d: %v, the reference executor's %v", i, got[i], want[i])
		}
	}
}
