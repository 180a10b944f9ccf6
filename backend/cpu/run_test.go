package cpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/ir"
)

func pos(line, col int) ir.Pos { return ir.Pos{File: "m.tir", Line: line, Col: col} }

// callModule is
//
//	func @sq(%v: f32[2]) -> f32[2] { %0 = mul %v, %v; return %0 }
//	func @main(%x: f32[2], %y: f32[2]) -> (f32[2], f32[2]) {
//	  %a = call @sq(%x); %b = call @sq(%a); %s = add %b, %y; return %s, %x
//	}
func callModule() *ir.Module {
	m := ir.NewModule("m.tir")
	sq := m.NewFunc("sq", []string{"v"}, []ir.Type{f32(2)}, []ir.Type{f32(2)}, pos(1, 1))
	b := ir.NewBuilder(sq)
	b.Return(b.Op1(ir.OpMul, nil, sq.Params[0], sq.Params[0]))
	f := m.NewFunc("main", []string{"x", "y"}, []ir.Type{f32(2), f32(2)}, []ir.Type{f32(2), f32(2)}, pos(2, 1))
	b = ir.NewBuilder(f)
	call := func(v *ir.Value, name string) *ir.Value {
		in, err := b.Emit(ir.OpCall, &ir.CallAttr{Callee: "sq"}, []ir.Type{f32(2)}, v)
		if err != nil {
			panic(err)
		}
		in.Results[0].Name = name
		return in.Results[0]
	}
	a := call(f.Params[0], "a")
	bb := call(a, "b")
	b.Return(b.Op1(ir.OpAdd, nil, bb, f.Params[1]), f.Params[0])
	return m
}

func TestRunCall(t *testing.T) {
	m := callModule()
	x, y := F(f32(2), 2, -3), F(f32(2), 0.5, 1)
	got, err := Run(m, m.Func("main"), []*backend.Buffer{x, y})
	if err != nil {
		t.Fatal(err)
	}
	if msg := diff(got[0], F(f32(2), 16.5, 82)); msg != "" {
		t.Error(msg)
	}
	if msg := diff(got[1], x); msg != "" {
		t.Error(msg)
	}
	if got[1] == x || &got[1].Bytes()[0] == &x.Bytes()[0] {
		t.Error("a returned argument shares storage with the argument")
	}
}

func TestRunArgErrors(t *testing.T) {
	m := callModule()
	f := m.Func("main")
	for _, c := range []struct {
		args []*backend.Buffer
		want string
	}{
		{ts(F(f32(2), 1)), "@main takes 2 arguments, got 1"},
		{ts(F(f32(3), 1), F(f32(2), 1)), "argument %x: got f32[3], want f32[2]"},
		{ts(F(f32(2), 1), I(i32(2), 1)), "argument %y: got i32[2], want f32[2]"},
		{ts(F(f32(2), 1), nil), "argument %y: missing (nil), want f32[2]"},
		{ts(F(f32(2), 1), &backend.Buffer{}), "argument %y: got invalid[], want f32[2]"},
	} {
		_, err := Run(m, f, c.args)
		if err == nil || err.Error() != c.want {
			t.Errorf("got %v, want %s", err, c.want)
		}
	}
}

func TestRunSymbolic(t *testing.T) {
	m := ir.NewModule("s.tir")
	ty := ir.Type{DType: ir.F32, Shape: []ir.Dim{{Sym: "B"}, ir.D(4)}}
	f := m.NewFunc("f", []string{"x"}, []ir.Type{ty}, []ir.Type{ty}, ir.Pos{File: "s.tir", Line: 1, Col: 1})
	b := ir.NewBuilder(f)
	b.Return(b.Op1(ir.OpNeg, nil, f.Params[0]))
	_, err := Run(m, f, ts(F(f32(2, 4), 0)))
	want := "s.tir:1:1: error: run needs static shapes: %x has f32[B,4]"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestRunUnverified: a malformed program is refused by the verifier, not run.
func TestRunUnverified(t *testing.T) {
	m := ir.NewModule("bad.tir")
	f := m.NewFunc("f", []string{"x"}, []ir.Type{f32(2)}, []ir.Type{f32(3)}, pos(1, 1))
	in := f.NewInstr(ir.OpExp, nil, []*ir.Value{f.Params[0]}, []ir.Type{f32(3)}, ir.Pos{File: "bad.tir", Line: 2, Col: 3})
	f.Body.Append(in)
	f.Body.Append(f.NewInstr(ir.OpReturn, nil, in.Results, nil, ir.Pos{File: "bad.tir", Line: 3, Col: 3}))
	_, err := Run(m, f, ts(F(f32(2), 0)))
	want := "bad.tir:2:3: error: result type f32[3] of exp does not match the inferred f32[2]"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestCheckMemory(t *testing.T) {
	m := ir.NewModule("big.tir")
	f := m.NewFunc("f", []string{"x"}, []ir.Type{f32(4)}, []ir.Type{f32(100000000000)}, ir.Pos{File: "big.tir", Line: 1, Col: 1})
	b := ir.NewBuilder(f)
	b.Pos = ir.Pos{File: "big.tir", Line: 2, Col: 3}
	big := f32(100000000000)
	v := b.Typed(ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, &big, b.Const(f32(), 1))
	v.Name = "x2"
	b.Return(v)
	err := CheckMemory(m, f, 16<<30)
	want := "big.tir:2:3: error: %x2 needs 400000000000 bytes (f32[100000000000]); the limit is 17179869184 bytes"
	var pe *ir.Error
	if err == nil || err.Error() != want || !errors.As(err, &pe) {
		t.Errorf("got %v, want %s", err, want)
	}
	// Run refuses it too, before allocating anything.
	if _, err := Run(m, f, ts(F(f32(4), 0))); err == nil {
		t.Error("Run allocated 400 GB")
	}

	// Each value fits but the total does not: the parameters (2 x 8 bytes),
	// the sums inside @sq (8 bytes per call) and @main's add (8 bytes).
	cm := callModule()
	if err := CheckMemory(cm, cm.Func("main"), 40); err != nil {
		t.Errorf("40 bytes: %v", err)
	}
	err = CheckMemory(cm, cm.Func("main"), 39)
	if want := "@main needs 40 bytes for its tensors in all; the limit is 39 bytes"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	err = CheckMemory(cm, cm.Func("main"), 7)
	if want := "m.tir:2:1: error: %x needs 8 bytes (f32[2]); the limit is 7 bytes"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestValueNames(t *testing.T) {
	m := ir.NewModule("n.tir")
	f := m.NewFunc("f", []string{"x", "1"}, []ir.Type{f32(1), f32(1)}, []ir.Type{f32(1)}, pos(1, 1))
	b := ir.NewBuilder(f)
	a := b.Op1(ir.OpNeg, nil, f.Params[0])
	c := b.Op1(ir.OpNeg, nil, a)
	c.Name = "x"
	b.Return(c)
	for v, want := range map[*ir.Value]string{f.Params[0]: "%x", f.Params[1]: "%0", a: "%1", c: "%x_1"} {
		if got := valueName(f, v); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	if !strings.Contains(ir.Print(m), "%x_1 = neg %1 : f32[1]") {
		t.Errorf("valueName disagrees with the printer:\n%s", ir.Print(m))
	}
}

func TestFolder(t *testing.T) {
	m := ir.NewModule("")
	f := m.NewFunc("f", []string{"a", "b"}, []ir.Type{i8(2), i8(2)}, nil, ir.Pos{})
	b := ir.NewBuilder(f)
	sum, _ := b.Emit(ir.OpAdd, nil, nil, f.Params[0], f.Params[1])
	bt := f32(2, 2)
	bc, _ := b.Emit(ir.OpBroadcast, &ir.DimsAttr{Dims: []int64{}}, []ir.Type{bt}, b.Const(f32(), 1.5))
	tk, _ := b.Emit(ir.OpTopK, &ir.TopKAttr{K: 1}, nil, f.Params[0])
	call, _ := b.Emit(ir.OpCall, &ir.CallAttr{Callee: "f"}, []ir.Type{f32(2, 2)}, f.Params[0], f.Params[1])

	var fd Folder
	got, err := fd.Fold(sum, []*ir.Literal{{Ints: []int64{100, 1}}, {Ints: []int64{100}}})
	if err != nil || len(got) != 1 || !got[0].Equal(&ir.Literal{Ints: []int64{-56, 101}}) {
		t.Errorf("add: got %v, %v", got, err)
	}
	got, err = fd.Fold(bc, []*ir.Literal{{Floats: []float64{1.5}}})
	if err != nil || len(got) != 1 || !got[0].Equal(&ir.Literal{Floats: []float64{1.5, 1.5, 1.5, 1.5}}) {
		t.Errorf("broadcast: got %v, %v", got, err)
	}
	got, err = fd.Fold(tk, []*ir.Literal{{Ints: []int64{3, 9}}})
	if err != nil || len(got) != 2 || !got[0].Equal(&ir.Literal{Ints: []int64{9}}) || !got[1].Equal(&ir.Literal{Ints: []int64{1}}) {
		t.Errorf("top_k: got %v, %v", got, err)
	}
	if _, err := fd.Fold(call, []*ir.Literal{{Ints: []int64{1}}, {Ints: []int64{1}}}); err == nil || err.Error() != "cpu: call is not folded" {
		t.Errorf("call: got %v", err)
	}
	if _, err := fd.Fold(sum, []*ir.Literal{{Ints: []int64{1, 2, 3}}, {Ints: []int64{1}}}); err == nil ||
		err.Error() != "cpu: operand 0 of add: literal has 3 elements, i8[2] needs 2" {
		t.Errorf("bad literal: got %v", err)
	}
}

func TestEval(t *testing.T) {
	m := ir.NewModule("")
	f := m.NewFunc("f", []string{"a"}, []ir.Type{f32(2)}, nil, ir.Pos{File: "e.tir", Line: 4, Col: 2})
	b := ir.NewBuilder(f)
	b.Pos = ir.Pos{File: "e.tir", Line: 5, Col: 3}
	in, _ := b.Emit(ir.OpExp, nil, nil, f.Params[0])
	got, err := Eval(in, ts(F(f32(2), 0, 1)))
	if err != nil || diff(got[0], F(f32(2), 1, 2.7182817459106445)) != "" {
		t.Errorf("got %v, %v", got, err)
	}
	_, err = Eval(in, ts(F(f32(3), 0, 1, 2)))
	if want := "e.tir:5:3: error: operand 0 of exp is f32[3], want f32[2]"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestRunConstants(t *testing.T) {
	m := ir.NewModule("")
	f := m.NewFunc("c", nil, nil, []ir.Type{f32(2, 2), i1(3), bf16(2), i8(2)}, ir.Pos{})
	b := ir.NewBuilder(f)
	x := b.Const(f32(2, 2), 1, 2, 3, 4.5)
	y := b.Typed(ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Ints: []int64{1}}}, &ir.Type{DType: ir.I1, Shape: []ir.Dim{ir.D(3)}})
	bt := bf16(2)
	z := b.Typed(ir.OpConstant, &ir.ConstAttr{Value: &ir.Literal{Floats: []float64{0.1, 1e10}}}, &bt)
	w := b.Const(i8(2), 300, -1)
	b.Return(x, y, z, w)
	got, err := Run(m, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range ts(F(f32(2, 2), 1, 2, 3, 4.5), I(i1(3), 1, 1, 1), F(bf16(2), 0.10009765625, 9999220736), I(i8(2), 44, -1)) {
		if msg := diff(got[i], want); msg != "" {
			t.Errorf("result %d: %s", i, msg)
		}
	}
}
