package llvm

import (
	"fmt"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
)

// eagerCase is one eager instruction on operands of the given types.
type eagerCase struct {
	op    ir.Op
	attr  ir.Attr
	types []ir.Type
	// ref is true when the op is expected to fall back to the reference.
	ref bool
}

func f32t(dims ...int64) ir.Type { return ir.Tensor(ir.F32, dims...) }

func eagerCases() []eagerCase {
	var cs []eagerCase
	for _, op := range eagerUnary {
		var attr ir.Attr
		if op == ir.OpGelu {
			cs = append(cs, eagerCase{op: op, attr: &ir.GeluAttr{Approximate: true}, types: []ir.Type{f32t(3, 7)}})
			attr = &ir.GeluAttr{}
		}
		cs = append(cs, eagerCase{op: op, attr: attr, types: []ir.Type{f32t(3, 7)}})
	}
	for _, op := range eagerBinary {
		cs = append(cs, eagerCase{op: op, types: []ir.Type{f32t(5, 33), f32t(5, 33)}})
	}
	bc := func(dims []int64, from, to ir.Type) eagerCase {
		return eagerCase{op: ir.OpBroadcast, attr: &ir.DimsAttr{Dims: dims}, types: []ir.Type{from, to}}
	}
	cs = append(cs,
		bc([]int64{1}, f32t(3), f32t(4, 3)),
		bc([]int64{0}, f32t(3), f32t(3, 5)),
		bc([]int64{0, 1}, f32t(4, 1), f32t(4, 5)),
		bc(nil, f32t(), f32t(2, 3)),
		bc([]int64{0, 2}, f32t(2, 3), f32t(2, 7, 3)),
		eagerCase{op: ir.OpTranspose, attr: &ir.PermAttr{Perm: []int64{2, 0, 1}}, types: []ir.Type{f32t(2, 3, 4)}},
		eagerCase{op: ir.OpTranspose, attr: &ir.PermAttr{Perm: []int64{1, 0}}, types: []ir.Type{f32t(17, 5)}},
	)
	for _, op := range eagerReduce {
		for _, c := range []struct {
			shape []int64
			axes  []int64
			keep  bool
		}{
			{[]int64{4, 6}, []int64{1}, false}, {[]int64{4, 6}, []int64{0}, true}, {[]int64{3, 4, 5}, []int64{0, 2}, false},
			{[]int64{3, 1, 5}, []int64{0, 1}, false}, {[]int64{3, 4, 5}, []int64{0, 1, 2}, false}, {[]int64{3, 4, 5}, nil, false},
			{[]int64{2, 0, 3}, []int64{1}, false},
		} {
			cs = append(cs, eagerCase{op: op, attr: &ir.AxesAttr{Axes: c.axes, KeepDims: c.keep}, types: []ir.Type{f32t(c.shape...)}})
		}
	}
	dot := func(lb, rb, lc, rc []int64, l, r ir.Type) eagerCase {
		return eagerCase{op: ir.OpDotGeneral, attr: &ir.DotAttr{LhsBatch: lb, RhsBatch: rb, LhsContract: lc, RhsContract: rc}, types: []ir.Type{l, r}}
	}
	one, zero := []int64{1}, []int64{0}
	cs = append(cs,
		dot(nil, nil, one, zero, f32t(5, 7), f32t(7, 9)),
		dot(nil, nil, one, one, f32t(13, 300), f32t(37, 300)), // rhs strided along n
		dot(zero, zero, []int64{2}, one, f32t(2, 5, 7), f32t(2, 7, 9)),
		dot(nil, nil, one, zero, f32t(130, 600), f32t(600, 530)),                  // past every block size
		dot(nil, nil, zero, zero, f32t(7, 5), f32t(7, 9)),                         // transposed lhs
		dot(nil, nil, []int64{0, 2}, []int64{1, 0}, f32t(3, 4, 5), f32t(5, 3, 6)), // lhs contract does not merge
		dot([]int64{1}, zero, []int64{2}, one, f32t(3, 2, 4), f32t(2, 4, 5)),      // batch in the middle
		dot(nil, nil, one, zero, f32t(4, 0), f32t(0, 3)),                          // K = 0
		eagerCase{op: ir.OpArgmax, attr: &ir.AxisAttr{Axis: 1}, types: []ir.Type{f32t(4, 6)}, ref: true},
	)
	return cs
}

// TestEagerOps: every eager kernel against the reference executor within
// the oracle's f32 tolerance, and each case ran on a kernel (or, for ops
// without one, on the reference).
func TestEagerOps(t *testing.T) {
	b := testBackend(t)
	if _, err := b.eagerLibrary(); err != nil {
		t.Fatal(err)
	}
	for i, c := range eagerCases() {
		args, out := c.types, []ir.Type(nil)
		if c.op == ir.OpBroadcast {
			args, out = c.types[:1], c.types[1:]
		}
		res, err := ir.Infer(c.op, args, c.attr, out)
		if err != nil {
			t.Fatalf("case %d %s: %v", i, c.op, err)
		}
		in := &ir.Instr{Op: c.op, Attr: c.attr}
		m := ir.NewModule("")
		f := m.NewFunc("f", nil, args, nil, ir.Pos{})
		for _, a := range args {
			in.Args = append(in.Args, &ir.Value{Type: a})
		}
		for j, r := range res {
			in.Results = append(in.Results, &ir.Value{Type: r, Def: in, Index: j})
		}
		bufs := cpu.RandomInputs(f, int64(i))
		t.Run(fmt.Sprintf("%d_%s", i, c.op), func(t *testing.T) {
			want, err := cpu.Eval(in, bufs)
			if err != nil {
				t.Fatal(err)
			}
			before := eagerCalls.Load()
			got, err := b.Eval(in, bufs)
			if err != nil {
				t.Fatal(err)
			}
			if ran := eagerCalls.Load() > before; ran == c.ref {
				t.Errorf("ran on a kernel: %v, want %v", ran, !c.ref)
			}
			compareBuffers(t, got, want)
		})
	}
}

// TestEagerTypeMismatch: an operand of another type than the instruction
// declares is the reference executor's error, not a kernel's crash.
func TestEagerTypeMismatch(t *testing.T) {
	b := testBackend(t)
	in := &ir.Instr{Op: ir.OpAdd, Args: []*ir.Value{{Type: f32t(2, 3)}, {Type: f32t(2, 3)}}}
	in.Results = []*ir.Value{{Type: f32t(2, 3), Def: in}}
	_, err := b.Eval(in, []*backend.Buffer{backend.New(f32t(2, 3)), backend.New(f32t(3, 2))})
	_, want := cpu.Eval(in, []*backend.Buffer{backend.New(f32t(2, 3)), backend.New(f32t(3, 2))})
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("error %v, want %v", err, want)
	}
}
