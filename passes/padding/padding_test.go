package padding

import (
	"fmt"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// TestEveryOpHasPadRule walks ir's op table: an op without a padding rule
// would be refused by the analysis whenever it touches a padded dimension,
// without saying that the rule is missing.
func TestEveryOpHasPadRule(t *testing.T) {
	for _, op := range ir.Ops() {
		if op.Info().Pad == ir.PadUnset {
			t.Errorf("%s has no padding rule in ir's op table (OpInfo.Pad)", op)
		}
	}
}

// negate is an evaluator that knows only neg, so a test can tell what the
// analysis asked it.
type negate struct{ calls *int }

func (n negate) Fold(in *ir.Instr, args []*ir.Literal) ([]*ir.Literal, error) {
	*n.calls++
	if in.Op != ir.OpNeg || len(args) != 1 || args[0].Len() != 1 {
		return nil, errUnknown
	}
	return []*ir.Literal{ir.NewLiteral(in.Results[0].Type, []float64{-args[0].Float(0)})}, nil
}

type unknownOp struct{}

func (unknownOp) Error() string { return "not folded" }

var errUnknown = unknownOp{}

// TestCheckAsksTheEvaluator: the padding of an elementwise op's result is
// what the evaluator computes on the operands' padding, and unknown when it
// cannot (or when there is none).
func TestCheckAsksTheEvaluator(t *testing.T) {
	const text = `func @p(%%x: f32[%d]) -> (f32[], f32[]) {
  %%a = exp %%x
  %%b = neg %%a
  %%s = reduce_sum %%b {axes=[0]}
  %%m = reduce_max %%a {axes=[0]}
  return %%s, %%m
}
`
	parse := func(n int) *ir.Module {
		m, err := tir.Parse("p.tir", []byte(fmt.Sprintf(text, n)))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	dims := []Dim{{Name: "x dim 0", Real: 5, Padded: 8}}
	calls := 0
	_, why := Check(parse(8), parse(5), dims, negate{&calls})
	// exp is not known to the evaluator: its padding, and so neg's, is unknown.
	if want := "reduce_sum at p.tir:4 sums over x dim 0, whose padding is not known to be 0.0"; why != want {
		t.Errorf("got  %q\nwant %q", why, want)
	}
	if calls != 1 {
		t.Errorf("the evaluator was asked %d times, want 1 (exp; neg's operand is unknown)", calls)
	}
	if _, why := Check(parse(8), parse(5), dims, nil); why != "reduce_sum at p.tir:4 sums over x dim 0, whose padding is not known to be 0.0" {
		t.Errorf("without an evaluator: %q", why)
	}
}

// TestCheckUsesEvaluatedPadding: a padding the evaluator computed is the one
// a reduction is checked against.
func TestCheckUsesEvaluatedPadding(t *testing.T) {
	const text = `func @p(%%x: f32[%d]) -> f32[] {
  %%b = neg %%x
  %%m = reduce_max %%b {axes=[0]}
  return %%m
}
`
	parse := func(n int) *ir.Module {
		m, err := tir.Parse("p.tir", []byte(fmt.Sprintf(text, n)))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	calls := 0
	_, why := Check(parse(8), parse(5), []Dim{{Name: "x dim 0", Real: 5, Padded: 8}}, negate{&calls})
	if want := "reduce_max at p.tir:3 takes the maximum over x dim 0, whose padding is -0.0, not -inf"; why != want {
		t.Errorf("got  %q\nwant %q", why, want)
	}
}
