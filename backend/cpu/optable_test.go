package cpu

import (
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/internal/progen"
	"github.com/tpucc/tpucc/ir"
)

// runByRun are the ops that Run executes itself rather than through a
// kernel: control flow and regions.
var runByRun = map[ir.Op]string{
	ir.OpCall:   "Run calls the callee",
	ir.OpReturn: "Run ends the function",
	ir.OpFusion: "Run executes the body",
	ir.OpWhile:  "Run executes the regions (TestRunWhile*, TestRunNestedLoops)",
	ir.OpCase:   "Run executes the branch (TestRunCaseIndex)",
	// Run calls its fallback; without one it is refused.
	ir.OpCustomCall: "Run calls the fallback (TestCustomCallFallback, TestCustomCallRefused)",
	// Run exchanges them with the other processes of its grid.
	ir.OpAllReduce: collectiveRun, ir.OpAllGather: collectiveRun, ir.OpAllToAll: collectiveRun,
	ir.OpReduceScatter: collectiveRun, ir.OpCollectiveBroadcast: collectiveRun, ir.OpCollectivePermute: collectiveRun,
	ir.OpCollectiveReduce: collectiveRun, ir.OpReplicaID: collectiveRun, ir.OpPartitionID: collectiveRun,
}

const collectiveRun = "Run exchanges with the process grid (TestGrid*, TestCollectiveAlone)"

// complexOps is a program of the ops that generated programs never contain
// (progen draws no complex values), sized so that TestScratchCounted sees
// kernels working through many chunks.
const complexOps = `func @f(%x: f32[100,200], %y: f32[100,200], %z: c128[100,200]) -> c64[100,200] {
  %c = complex %x, %y
  %r = real %z
  %i = imag %c
  %a = abs %z
  %e = exp %z
  %m = mul %c, %c
  %q = compare %z, %z {dir=eq} : i1[100,200]
  %v = convert %z : c64[100,200]
  %s = reduce_sum %z {axes=[1]} : c128[100]
  %t = transpose %z {perm=[1, 0]}
  %d = dot_general %z, %t {lhs_contract=[1], rhs_contract=[0]} : c128[100,100]
  %f = fft %z {length=[100, 200], type=fft}
  %g = fft %c {length=[200], type=ifft}
  %h = fft %x {length=[200], type=rfft}
  %k = fft %h {length=[200], type=irfft}
  return %m
}`

// handWritten parses complexOps.
func handWritten(t *testing.T) *ir.Module {
	m, err := tir.Parse("complex.tir", []byte(complexOps))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEveryOpHasKernel walks ir's op table: every op other than control flow
// evaluates, on operands of zeros, an instance drawn from generated programs.
// An op that the generator does not draw yet fails too, so that a new op
// cannot skip the check (progen.Corpus holds every op it draws).
func TestEveryOpHasKernel(t *testing.T) {
	samples := map[ir.Op]*ir.Instr{}
	handWritten(t).Entry().Body.Walk(func(in *ir.Instr) { samples[in.Op] = in })
	for _, m := range progen.Corpus(300, progen.Config{}) {
		for _, f := range m.Funcs {
			f.Body.Walk(func(in *ir.Instr) {
				if samples[in.Op] == nil {
					samples[in.Op] = in
				}
			})
		}
	}
	for _, op := range ir.Ops() {
		if _, ok := runByRun[op]; ok {
			continue
		}
		in := samples[op]
		if in == nil {
			t.Errorf("%s: no generated program contains it, so its kernel is not checked (internal/progen draws every op)", op)
			continue
		}
		args := make([]*ir.Literal, len(in.Args))
		for i, a := range in.Args {
			args[i] = ir.NewLiteral(a.Type, []float64{0})
			if !a.Type.DType.IsFloat() {
				args[i] = ir.NewIntLiteral(a.Type, []int64{0})
			}
		}
		res, err := Folder{}.Fold(in, args)
		if err != nil {
			t.Errorf("%s has no working kernel: %v", op, err)
			continue
		}
		if len(res) != len(in.Results) {
			t.Errorf("%s: the kernel gave %d results, want %d", op, len(res), len(in.Results))
		}
	}
}
