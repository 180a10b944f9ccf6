package ir

import (
	"math"
	"testing"
)

// buildLoop makes @f(%x: f32[4], %y: f32[4]) -> f32[4] whose body is a
// while over (i32[], f32[4]) running 3 times, with a case in its do region
// choosing neg or the identity by the counter; mutate edits it before the
// return is added and the module verified.
func buildLoop(mutate func(f *Func, w, c *Instr)) error {
	m := NewModule("t.tir")
	ty := Tensor(F32, 4)
	at := func(line int) Pos { return Pos{File: "t.tir", Line: line, Col: 3} }
	f := m.NewFunc("f", []string{"x", "y"}, []Type{ty, ty}, []Type{ty}, at(1))
	b := NewBuilder(f)
	zero := b.Const(Scalar(I32), 0)
	b.Pos = at(2)
	w, err := b.Emit(OpWhile, nil, nil, zero, f.Params[0])
	if err != nil {
		return err
	}
	carried := []Type{Scalar(I32), ty}
	cond := f.NewRegion(w, carried)
	cb := &Builder{F: f, Block: cond, at: -1, Pos: at(3)}
	three := cb.Const(Scalar(I32), 3)
	cb.Return(cb.Op1(OpCompare, &CompareAttr{Dir: CmpLT}, cond.Params[0], three))

	body := f.NewRegion(w, carried)
	bb := &Builder{F: f, Block: body, at: -1, Pos: at(4)}
	one := bb.Const(Scalar(I32), 1)
	next := bb.Op1(OpAdd, nil, body.Params[0], one)
	c, err := bb.Emit(OpCase, nil, []Type{ty}, body.Params[0], body.Params[1])
	if err != nil {
		return err
	}
	b0 := f.NewRegion(c, []Type{ty})
	b0b := &Builder{F: f, Block: b0, at: -1, Pos: at(5)}
	b0b.Return(b0b.Op1(OpNeg, nil, b0.Params[0]))
	b1 := f.NewRegion(c, []Type{ty})
	b1b := &Builder{F: f, Block: b1, at: -1, Pos: at(6)}
	b1b.Return(b1.Params[0])
	bb.Pos = at(7)
	bb.Return(next, c.Results[0])
	mutate(f, w, c)
	b.Pos = at(8)
	b.Return(w.Results[1])
	return Verify(m)
}

// TestVerifyControl: the verifier's checks of while and case that the
// parser cannot produce (regions built by passes), each positioned; the
// parser-reachable ones are goldens (testdata/golden/parse/err_control_*).
func TestVerifyControl(t *testing.T) {
	if err := buildLoop(func(*Func, *Instr, *Instr) {}); err != nil {
		t.Fatalf("valid loop: %v", err)
	}
	cases := []struct {
		name   string
		mutate func(f *Func, w, c *Instr)
		want   string
	}{
		{"outer capture", func(f *Func, w, c *Instr) { c.Regions[0].Instrs[0].Args[0] = f.Params[1] },
			"t.tir:5:3: error: case branch 0 region uses %y from outside its region"},
		{"parent capture", func(f *Func, w, c *Instr) { c.Regions[0].Instrs[0].Args[0] = w.Regions[WhileBody].Params[1] },
			"t.tir:5:3: error: case branch 0 region uses %8 from outside its region"},
		{"one region", func(f *Func, w, c *Instr) { w.Regions = w.Regions[:1] },
			"t.tir:2:3: error: while needs 2 regions (cond and do), got 1"},
		{"no branch", func(f *Func, w, c *Instr) { c.Regions = nil },
			"t.tir:4:3: error: case needs at least 1 branch"},
		{"no return", func(f *Func, w, c *Instr) { c.Regions[1].Instrs = nil },
			"t.tir:4:3: error: case branch 1 region does not end with return"},
		{"index type", func(f *Func, w, c *Instr) { c.Args[0] = w.Regions[WhileBody].Params[1] },
			"t.tir:4:3: error: case index must be i32[], got f32[4]"},
		{"wrong parent", func(f *Func, w, c *Instr) { c.Regions[1].Parent = w },
			"t.tir:4:3: error: internal: case region does not point back to it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := buildLoop(tc.mutate)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got\n%v\nwant\n%s", err, tc.want)
			}
		})
	}
}

// TestFusionRefusesControl: a fusion body holds no while or case (a fusion
// is one kernel: a loop around it is the while's job).
func TestFusionRefusesControl(t *testing.T) {
	m := NewModule("t.tir")
	ty := Tensor(F32, 4)
	pos := Pos{File: "t.tir", Line: 2, Col: 3}
	f := m.NewFunc("f", []string{"k", "x"}, []Type{Scalar(I32), ty}, []Type{ty}, Pos{File: "t.tir", Line: 1, Col: 1})
	fu := f.NewInstr(OpFusion, &FusionAttr{}, f.Params, []Type{ty}, pos)
	r := f.NewRegion(fu, []Type{Scalar(I32), ty})
	c := f.NewInstr(OpCase, nil, r.Params, []Type{ty}, Pos{File: "t.tir", Line: 3, Col: 5})
	br := f.NewRegion(c, []Type{ty})
	br.Append(f.NewInstr(OpReturn, nil, []*Value{br.Params[0]}, nil, c.Pos))
	r.Append(c)
	r.Append(f.NewInstr(OpReturn, nil, c.Results, nil, c.Pos))
	f.Body.Append(fu)
	NewBuilder(f).Return(fu.Results[0])
	want := "t.tir:3:5: error: a fusion body cannot contain case"
	if err := Verify(m); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// TestTripCount: the counted loops whose trip count is known from the IR,
// and the loops whose count depends on the data.
func TestTripCount(t *testing.T) {
	if err := buildLoop(func(f *Func, w, c *Instr) {
		if n, ok := TripCount(w); !ok || n != 3 {
			t.Errorf("i from 0 while i < 3: TripCount %d, %v; want 3, true", n, ok)
		}
		cmp := w.Regions[WhileCond].Instrs[1]
		cmp.Attr = &CompareAttr{Dir: CmpLE}
		if n, ok := TripCount(w); !ok || n != 4 {
			t.Errorf("i <= 3: TripCount %d, %v; want 4, true", n, ok)
		}
		cmp.Args[1] = w.Regions[WhileCond].Params[0]
		if _, ok := TripCount(w); ok {
			t.Error("i <= i: a count is claimed")
		}
		cmp.Attr, cmp.Args[1] = &CompareAttr{Dir: CmpLT}, w.Regions[WhileCond].Instrs[0].Result()
		w.Args[0] = f.Params[0] // a start that is not a constant
		if _, ok := TripCount(w); ok {
			t.Error("a start from the data: a count is claimed")
		}
		w.Args[0] = w.Block.Instrs[0].Result()
	}); err != nil {
		t.Fatal(err)
	}
}

// countedLoop builds a while carrying a counter of dtype dt from start and
// an f32[2]: do applies op (add or sub) with the constant by to the counter,
// cond compares the counter with the constant limit, the counter first or
// (swapped) second.
func countedLoop(t *testing.T, dt DType, start int64, op Op, by int64, dir CmpDir, limit int64, swapped bool) *Instr {
	t.Helper()
	m := NewModule("t.tir")
	ty, ct := Tensor(F32, 2), Scalar(dt)
	f := m.NewFunc("f", []string{"x"}, []Type{ty}, []Type{ty}, Pos{})
	b := NewBuilder(f)
	w, err := b.Emit(OpWhile, nil, nil, b.Const(ct, float64(start)), f.Params[0])
	if err != nil {
		t.Fatal(err)
	}
	cond := f.NewRegion(w, []Type{ct, ty})
	cb := &Builder{F: f, Block: cond, at: -1}
	l, i := cb.Const(ct, float64(limit)), cond.Params[0]
	if swapped {
		l, i = i, l
	}
	cb.Return(cb.Op1(OpCompare, &CompareAttr{Dir: dir}, i, l))
	body := f.NewRegion(w, []Type{ct, ty})
	bb := &Builder{F: f, Block: body, at: -1}
	bb.Return(bb.Op1(op, nil, body.Params[0], bb.Const(ct, float64(by))), body.Params[1])
	b.Return(w.Results[1])
	if err := Verify(m); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestTripCountForms: the counted loops written other ways than a
// fori_loop's (the limit first, counting down, ne) have their counts, and
// the loops that would run until the counter wraps have none.
func TestTripCountForms(t *testing.T) {
	cases := []struct {
		name    string
		dt      DType
		start   int64
		op      Op
		by      int64
		dir     CmpDir
		limit   int64
		swapped bool
		want    int64 // -1: no count
	}{
		{"i from 0 while 4 > i", I32, 0, OpAdd, 1, CmpGT, 4, true, 4},
		{"i from 0 while 4 >= i", I32, 0, OpAdd, 1, CmpGE, 4, true, 5},
		{"i from 3 while i >= 0, i-1", I32, 3, OpSub, 1, CmpGE, 0, false, 4},
		{"i from 3 while i > 0, i+(-1)", I64, 3, OpAdd, -1, CmpGT, 0, false, 3},
		{"i from 3 while 0 < i, i-1", I32, 3, OpSub, 1, CmpLT, 0, true, 3},
		{"i from 2 while i != 6", I32, 2, OpAdd, 1, CmpNE, 6, false, 4},
		{"i from 6 while i != 2, i-1", I32, 6, OpSub, 1, CmpNE, 2, false, 4},
		{"i from 5 while i < 2: no trips", I32, 5, OpAdd, 1, CmpLT, 2, false, 0},
		{"i from 7 while i != 2: wraps", I32, 7, OpAdd, 1, CmpNE, 2, false, -1},
		{"i from 0 while i > -3, i+1: wraps", I32, 0, OpAdd, 1, CmpGT, -3, false, -1},
		{"i from 0 while i <= max i32: wraps", I32, 0, OpAdd, 1, CmpLE, math.MaxInt32, false, -1},
		{"u32 i from 3 while i >= 0, i-1: wraps", U32, 3, OpSub, 1, CmpGE, 0, false, -1},
		{"1 - i: not a step", I32, 0, OpSub, 1, CmpLT, 4, false, -1},
		{"i + 2: not a step of one", I32, 0, OpAdd, 2, CmpLT, 4, false, -1},
		{"i == 4", I32, 0, OpAdd, 1, CmpEQ, 4, false, -1},
	}
	for _, c := range cases {
		w := countedLoop(t, c.dt, c.start, c.op, c.by, c.dir, c.limit, c.swapped)
		if c.name == "1 - i: not a step" { // the constant first: 1 - i
			add := w.Regions[WhileBody].Terminator().Args[0].Def
			add.Args[0], add.Args[1] = add.Args[1], add.Args[0]
		}
		n, ok := TripCount(w)
		if want := c.want >= 0; ok != want || ok && n != c.want {
			t.Errorf("%s: TripCount %d, %v; want %d, %v", c.name, n, ok, c.want, want)
		}
	}
}
