package passes_test

import (
	"fmt"
	"strings"

	"github.com/tpucc/tpucc/ir"
)

// fakeEval is a small stand-in for the reference executor (backend/cpu's
// Folder): elementwise neg, add, sub, mul, max and compare on any static type,
// computed in float64 for floats and int64 for integers, rounded or wrapped
// into the result dtype. Other ops fail, as an executor without them would.
// It logs every call as "op(arg types) -> result types", so tests can see
// what fold-constants asked for.
type fakeEval struct{ calls []string }

func (e *fakeEval) Fold(in *ir.Instr, args []*ir.Literal) ([]*ir.Literal, error) {
	var ts []string
	for _, a := range in.Args {
		ts = append(ts, a.Type.String())
	}
	var rs []string
	for _, r := range in.Results {
		rs = append(rs, r.Type.String())
	}
	e.calls = append(e.calls, fmt.Sprintf("%s(%s) -> %s", in.Op, strings.Join(ts, ", "), strings.Join(rs, ", ")))

	t := in.Result().Type
	n, _ := t.NumElements()
	dt := in.Args[0].Type.DType
	out := make([]float64, n)
	outInt := make([]int64, n)
	for i := 0; i < int(n); i++ {
		if dt.IsFloat() {
			x := args[0].Float(i)
			var y float64
			if len(args) > 1 {
				y = args[1].Float(i)
			}
			switch in.Op {
			case ir.OpNeg:
				out[i] = -x
			case ir.OpAdd:
				out[i] = x + y
			case ir.OpSub:
				out[i] = x - y
			case ir.OpMul:
				out[i] = x * y
			case ir.OpMax:
				out[i] = max(x, y)
			case ir.OpCompare:
				outInt[i] = b2i(cmp(in.Attr.(*ir.CompareAttr).Dir, x < y, x == y, x > y))
			default:
				return nil, fmt.Errorf("fake evaluator: %s is not implemented", in.Op)
			}
			continue
		}
		x := args[0].Int(i)
		var y int64
		if len(args) > 1 {
			y = args[1].Int(i)
		}
		switch in.Op {
		case ir.OpNeg:
			outInt[i] = -x
		case ir.OpAdd:
			outInt[i] = x + y
		case ir.OpSub:
			outInt[i] = x - y
		case ir.OpMul:
			outInt[i] = x * y
		case ir.OpMax:
			outInt[i] = max(x, y)
		case ir.OpCompare:
			outInt[i] = b2i(cmp(in.Attr.(*ir.CompareAttr).Dir, x < y, x == y, x > y))
		default:
			return nil, fmt.Errorf("fake evaluator: %s is not implemented", in.Op)
		}
	}
	if t.DType.IsFloat() {
		return []*ir.Literal{ir.NewLiteral(t, out)}, nil
	}
	return []*ir.Literal{ir.NewIntLiteral(t, outInt)}, nil
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func cmp(d ir.CmpDir, lt, eq, gt bool) bool {
	switch d {
	case ir.CmpEQ:
		return eq
	case ir.CmpNE:
		return !eq
	case ir.CmpLT:
		return lt
	case ir.CmpLE:
		return lt || eq
	case ir.CmpGT:
		return gt
	}
	return gt || eq
}
