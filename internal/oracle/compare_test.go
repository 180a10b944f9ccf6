package oracle

import (
	"math"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tools/xlacheck"
)

func TestCompare(t *testing.T) {
	f32 := ir.Tensor(ir.F32, 2, 2)
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name      string
		want, got *backend.Buffer
		exact     bool
		err       string
	}{
		{"equal", backend.FromFloats(f32, 1, 2, 3, 4), backend.FromFloats(f32, 1, 2, 3, 4), true, ""},
		{"within f32 tolerance", backend.FromFloats(f32, 1, 2, 3, 0), backend.FromFloats(f32, 1.00001, 2, 3, 9e-6), false, ""},
		{"beyond f32 tolerance", backend.FromFloats(f32, 1, 2, 3, 4), backend.FromFloats(f32, 1, 2.0001, 3, 4.0001), false,
			"element [0,1]: want 2.0, got 2.0001 (|diff| 9.99e-05, allowed 3.74e-05); 2 of 4 elements differ, the worst by 2.67x its allowance"},
		{"exact sees one ulp", backend.FromFloats(f32, 1, 2, 3, 4), backend.FromFloats(f32, 1, 2, 3, float64(math.Nextafter32(4, 5))), true,
			"element [1,1]: want 4.0, got 4.0000005 (|diff| 4.77e-07, allowed 0); 1 of 4 elements differ"},
		{"NaN matches NaN, -0 matches +0", backend.FromFloats(f32, nan, math.Copysign(0, -1), inf, -inf), backend.FromFloats(f32, -nan, 0, inf, -inf), true, ""},
		{"NaN against a number", backend.FromFloats(f32, nan, 0, 0, 0), backend.FromFloats(f32, 1, 0, 0, 0), false,
			"element [0,0]: want nan, got 1.0; 1 of 4 elements differ"},
		{"inf against the largest float", backend.FromFloats(f32, 0, 0, inf, 0), backend.FromFloats(f32, 0, 0, math.MaxFloat32, 0), false,
			"element [1,0]: want inf, got 3.4028235e+38; 1 of 4 elements differ"},
		{"integers exactly", backend.FromInts(ir.Tensor(ir.I32, 3), 1, 2, 3), backend.FromInts(ir.Tensor(ir.I32, 3), 1, 2, 4), false,
			"element [2]: want 3, got 4; 1 of 3 elements differ"},
		{"types differ", backend.FromInts(ir.Tensor(ir.I32, 3), 1, 2, 3), backend.FromInts(ir.Tensor(ir.I64, 3), 1, 2, 3), false,
			"type differs: want i32[3], got i64[3]"},
		{"small elements are judged at the tensor's RMS", backend.FromFloats(ir.Tensor(ir.F32, 2), 100, 0.001), backend.FromFloats(ir.Tensor(ir.F32, 2), 100, 0.0015), false, ""},
		{"but not beyond it", backend.FromFloats(ir.Tensor(ir.F32, 2), 100, 0.001), backend.FromFloats(ir.Tensor(ir.F32, 2), 100, 0.002), false,
			"element [1]: want 0.001, got 0.002 (|diff| 0.001, allowed 0.000717); 1 of 2 elements differ"},
		{"bf16 within 4e-2", backend.FromFloats(ir.Tensor(ir.BF16), 1), backend.FromFloats(ir.Tensor(ir.BF16), 1.0390625), false, ""},
	}
	for _, c := range cases {
		var err error
		if c.exact {
			err = CompareExact(c.want, c.got)
		} else {
			err = Compare(c.want, c.got)
		}
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.err {
			t.Errorf("%s:\ngot  %q\nwant %q", c.name, got, c.err)
		}
	}
}

// TestOracleSeesDifferences: the whole path (lower, execute, XLA, compare)
// reports a result that is off by one ulp in an exact output, by 1e-3 in an
// approximate one, and by one in an integer one.
func TestOracleSeesDifferences(t *testing.T) {
	h := harness(t)
	m := ir.NewModule("sees.tir")
	f := m.NewFunc("main", []string{"x", "n"}, []ir.Type{ir.Tensor(ir.F32, 4), ir.Tensor(ir.I32, 3)}, nil, ir.Pos{})
	b := ir.NewBuilder(f)
	y := b.Op1(ir.OpAdd, nil, f.Params[0], f.Params[0])
	e := b.Op1(ir.OpExp, nil, f.Params[0])
	k := b.Op1(ir.OpMul, nil, f.Params[1], f.Params[1])
	f.Results = []ir.Type{y.Type, e.Type, k.Type}
	b.Return(y, e, k)
	c := &check{name: "sees", m: m, inputs: cpu.RandomInputs(f, 3), exact: []bool{true, false, true}}
	if err := c.prepare(); err != nil {
		t.Fatal(err)
	}
	rs, err := h.Run([]xlacheck.Case{c.xlaCase()})
	if err != nil {
		t.Fatal(err)
	}
	if msgs := c.compare(rs[0]); msgs != nil {
		t.Fatalf("the untouched results differ: %v", msgs)
	}
	c.want[0].SetFloat64(2, float64(math.Nextafter32(float32(c.want[0].Float64At(2)), float32(math.Inf(1)))))
	c.want[1].SetFloat64(1, c.want[1].Float64At(1)+1e-3)
	c.want[2].SetInt64(0, c.want[2].Int64At(0)+1)
	msgs := c.compare(rs[0])
	want := []string{"result 0 (f32[4], exact): element [2]", "result 1 (f32[4], approximate): element [1]", "result 2 (i32[3], exact): element [0]"}
	if len(msgs) != len(want) {
		t.Fatalf("got %d problems, want %d: %q", len(msgs), len(want), msgs)
	}
	for i, w := range want {
		if !strings.HasPrefix(msgs[i], w) {
			t.Errorf("problem %d: got %q, want it to start with %q", i, msgs[i], w)
		}
	}
}
