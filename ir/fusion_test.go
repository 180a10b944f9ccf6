package ir

import "testing"

// TestVerifyFusion: the verifier checks a fusion's region: parameters against
// operands, no captures of outer values, and return types against the results.
func TestVerifyFusion(t *testing.T) {
	build := func(mutate func(f *Func, fu *Instr, body *Block)) error {
		m := NewModule("t.tir")
		ty := Tensor(F32, 4)
		f := m.NewFunc("f", []string{"x", "y"}, []Type{ty, ty}, []Type{ty}, Pos{File: "t.tir", Line: 1, Col: 1})
		fu := f.NewInstr(OpFusion, &FusionAttr{Kind: FusionLoop}, []*Value{f.Params[0]}, []Type{ty}, Pos{File: "t.tir", Line: 2, Col: 3})
		body := &Block{Parent: fu}
		fu.Regions = []*Block{body}
		p := f.NewValue(ty)
		body.Params = []*Value{p}
		neg := f.NewInstr(OpNeg, nil, []*Value{p}, nil, Pos{File: "t.tir", Line: 3, Col: 5})
		neg.Results = []*Value{f.NewValue(ty)}
		neg.Results[0].Def = neg
		body.Append(neg)
		body.Append(f.NewInstr(OpReturn, nil, []*Value{neg.Results[0]}, nil, Pos{File: "t.tir", Line: 4, Col: 5}))
		f.Body.Append(fu)
		mutate(f, fu, body)
		NewBuilder(f).Return(fu.Results[0])
		return Verify(m)
	}
	if err := build(func(*Func, *Instr, *Block) {}); err != nil {
		t.Fatalf("valid fusion: %v", err)
	}
	cases := []struct {
		name   string
		mutate func(f *Func, fu *Instr, body *Block)
		want   string
	}{
		{"capture", func(f *Func, fu *Instr, body *Block) { body.Instrs[0].Args[0] = f.Params[1] },
			"t.tir:3:5: error: fusion body uses %y from outside its region"},
		{"param type", func(f *Func, fu *Instr, body *Block) { body.Params[0].Type = Tensor(F32, 8) },
			"t.tir:2:3: error: fusion region parameter %1 is f32[8], but operand 0 is f32[4]\nt.tir:3:5: error: result type f32[4] of neg does not match the inferred f32[8]"},
		{"return type", func(f *Func, fu *Instr, body *Block) { fu.Results[0].Type = Tensor(I32, 4) },
			"<input>: error: result 0 of @f is i32[4], but its signature says f32[4]\nt.tir:4:5: error: fusion body returns f32[4] as result 0, but the fusion's result is i32[4]"},
		{"no region", func(f *Func, fu *Instr, body *Block) { fu.Regions = nil },
			"t.tir:2:3: error: fusion must have exactly 1 region, got 0"},
	}
	for _, c := range cases {
		err := build(c.mutate)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v\nwant %s", c.name, err, c.want)
		}
	}
}
