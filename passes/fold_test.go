package passes_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/passes"
)

func onePass(t *testing.T, name string) []passes.Pass {
	t.Helper()
	p, ok := passes.Lookup(name)
	if !ok {
		t.Fatalf("no pass %s", name)
	}
	return []passes.Pass{p}
}

// splatsModule returns @f with %b = broadcast 2.0 : f32[n], mul %b, %b and
// reduce_sum %b over its one axis.
func splatsModule(t *testing.T, n int64) *ir.Module {
	t.Helper()
	m := ir.NewModule("")
	big := ir.Tensor(ir.F32, n)
	f := m.NewFunc("f", nil, nil, []ir.Type{big, ir.Scalar(ir.F32)}, ir.Pos{})
	b := ir.NewBuilder(f)
	two := b.Const(ir.Scalar(ir.F32), 2)
	bc := b.Typed(ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, &big, two)
	mul := b.Op1(ir.OpMul, nil, bc, bc)
	sum := b.Op1(ir.OpReduceSum, &ir.AxesAttr{Axes: []int64{0}}, bc)
	b.Return(mul, sum)
	return m
}

func TestFoldWithoutEvaluator(t *testing.T) {
	m := splatsModule(t, 100)
	var st passes.Stats
	if err := passes.Run(m, onePass(t, "fold-constants"), passes.Options{VerifyEach: true, Stats: &st}); err != nil {
		t.Fatal(err)
	}
	// Only the broadcast (pure movement) folds; mul and reduce_sum need arithmetic.
	want := `func @f() -> (f32[100], f32[]) {
  %0 = constant 2.0 : f32[]
  %1 = constant 2.0 : f32[100]
  %2 = broadcast %0 {dims=[]} : f32[100]
  %3 = mul %1, %1 : f32[100]
  %4 = reduce_sum %1 {axes=[0]} : f32[]
  return %3, %4
}
`
	if got := ir.Print(m); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := st.String(); got != "fold-constants/splat-movement: 1\n" {
		t.Errorf("stats %q", got)
	}
}

func TestFoldSplatOnScalarProbe(t *testing.T) {
	m := splatsModule(t, 100)
	ev := &fakeEval{}
	var st passes.Stats
	if err := passes.Run(m, onePass(t, "fold-constants"), passes.Options{VerifyEach: true, Eval: ev, Stats: &st}); err != nil {
		t.Fatal(err)
	}
	// The splat mul is evaluated once, on scalars; the reduce_sum of 100
	// elements goes to the evaluator whole, which fails (the fake has no
	// reductions) and leaves it.
	want := "mul(f32[], f32[]) -> f32[]\nreduce_sum(f32[100]) -> f32[]"
	if got := strings.Join(ev.calls, "\n"); got != want {
		t.Errorf("evaluator calls\n%s\nwant\n%s", got, want)
	}
	if got, want := st.String(), "fold-constants/skip-eval-error: 1\nfold-constants/splat-elementwise: 1\nfold-constants/splat-movement: 1\n"; got != want {
		t.Errorf("stats\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(ir.Print(m), "%3 = constant 4.0 : f32[100]") {
		t.Errorf("mul not folded:\n%s", ir.Print(m))
	}
}

func TestFoldInputCap(t *testing.T) {
	// 65537 elements exceed the operand cap: the evaluator is not even asked
	// about the reduce_sum (it would expand the splat).
	m := splatsModule(t, 1<<16+1)
	ev := &fakeEval{}
	if err := passes.Run(m, onePass(t, "fold-constants"), passes.Options{VerifyEach: true, Eval: ev}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(ev.calls, "\n"), "mul(f32[], f32[]) -> f32[]"; got != want {
		t.Errorf("evaluator calls\n%s\nwant\n%s", got, want)
	}
}

// badEval returns three elements for anything.
type badEval struct{}

func (badEval) Fold(in *ir.Instr, args []*ir.Literal) ([]*ir.Literal, error) {
	return []*ir.Literal{{Floats: []float64{1, 2, 3}}}, nil
}

// failEval fails on everything.
type failEval struct{}

func (failEval) Fold(in *ir.Instr, args []*ir.Literal) ([]*ir.Literal, error) {
	return nil, errors.New("not implemented")
}

func smallAdd(t *testing.T) *ir.Module {
	m := ir.NewModule("")
	ty := ir.Tensor(ir.F32, 4)
	f := m.NewFunc("f", nil, nil, []ir.Type{ty}, ir.Pos{})
	b := ir.NewBuilder(f)
	x := b.Const(ty, 1, 2, 3, 4)
	b.Return(b.Op1(ir.OpAdd, nil, x, x))
	return m
}

func TestFoldRejectsBadEvaluatorResult(t *testing.T) {
	err := passes.Run(smallAdd(t), onePass(t, "fold-constants"), passes.Options{VerifyEach: true, Eval: badEval{}})
	want := "pass fold-constants on @f: fold-constants: the evaluator's result 0 for add: 3 elements for f32[4]"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func TestFoldEvaluatorErrorLeavesInstr(t *testing.T) {
	m := smallAdd(t)
	before := ir.Print(m)
	var st passes.Stats
	if err := passes.Run(m, onePass(t, "fold-constants"), passes.Options{VerifyEach: true, Eval: failEval{}, Stats: &st}); err != nil {
		t.Fatal(err)
	}
	if got := ir.Print(m); got != before {
		t.Errorf("changed:\n%s", got)
	}
	if got := st.String(); got != "fold-constants/skip-eval-error: 1\n" {
		t.Errorf("stats %q", got)
	}
}

// TestRunByHand runs one pass outside Run, as a tool would, and reads its
// counters from the Context.
func TestRunByHand(t *testing.T) {
	m := smallAdd(t)
	p, _ := passes.Lookup("fold-constants")
	c := passes.NewContext(p.Name, &fakeEval{})
	changed, err := p.Run(m.Funcs[0], c)
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	if got := c.Stats.Get("fold-constants", "evaluate"); got != 1 {
		t.Errorf("evaluate fired %d times", got)
	}
	if !strings.Contains(ir.Print(m), "constant [2.0, 4.0, 6.0, 8.0] : f32[4]") {
		t.Errorf("not folded:\n%s", ir.Print(m))
	}
}
