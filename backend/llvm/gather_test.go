package llvm

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
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
	m, err := tir.Parse(op+".tir", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	f := m.Entry()
	x, err := b.compile(m, f, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	if g, fb := x.Coverage(); !strings.Contains(g, op) || strings.Contains(fb, op) {
		t.Fatalf("%s not generated: generated %s; reference %s", op, g, fb)
	}
	in := cpu.RandomInputs(f, 3)
	n := 0
	for _, c := range cases {
		for j, a := range c.args {
			if j < len(c.vals) && c.vals[j] != nil {
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
