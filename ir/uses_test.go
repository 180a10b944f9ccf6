package ir

import (
	"strings"
	"testing"
)

func usesFixture() (*Func, *Value, *Value, *Instr, *Instr) {
	m := NewModule("")
	f := m.NewFunc("f", []string{"x", "y"}, []Type{Tensor(F32, 4), Tensor(F32, 4)}, []Type{Tensor(F32, 4)}, Pos{})
	b := NewBuilder(f)
	x, y := f.Params[0], f.Params[1]
	sq := b.Op1(OpMul, nil, x, x).Def
	s := b.Op1(OpAdd, nil, sq.Result(), y).Def
	b.Return(s.Result())
	return f, x, y, sq, s
}

func TestUsesListsEveryOperand(t *testing.T) {
	f, x, y, sq, s := usesFixture()
	u := f.Uses()
	if got := u.Users(x); len(got) != 2 || got[0] != sq || got[1] != sq {
		t.Errorf("users of %%x: %d, want the mul twice", len(got))
	}
	if got := u.Users(y); len(got) != 1 || got[0] != s {
		t.Errorf("users of %%y: %d, want the add", len(got))
	}
	counts := f.UseCounts()
	for _, v := range []*Value{x, y, sq.Result(), s.Result()} {
		if u.Count(v) != counts[v.ID] {
			t.Errorf("Count(%d) = %d, UseCounts says %d", v.ID, u.Count(v), counts[v.ID])
		}
	}
}

func TestUsesReplaceAndBuilder(t *testing.T) {
	f, x, y, sq, s := usesFixture()
	u := f.Uses()
	b := NewBuilder(f)
	b.Uses = u
	b.SetInsertBefore(s)
	neg := b.Op1(OpNeg, nil, x)
	if got := u.Users(x); len(got) != 3 || got[2] != neg.Def {
		t.Fatalf("the builder did not record the neg's operand: %d users of %%x", len(got))
	}
	u.Replace(sq.Result(), neg)
	if u.Count(sq.Result()) != 0 || u.Count(neg) != 1 || u.Users(neg)[0] != s {
		t.Errorf("after Replace: %d users of the mul, %d of the neg; want 0 and 1 (the add)", u.Count(sq.Result()), u.Count(neg))
	}
	if s.Args[0] != neg || s.Args[1] != y {
		t.Errorf("the add reads %d, %d; want the neg and %%y", s.Args[0].ID, s.Args[1].ID)
	}
	u.Drop(sq)
	if got := u.Users(x); len(got) != 1 || got[0] != neg.Def {
		t.Errorf("after Drop: %d users of %%x, want 1 (the neg)", len(got))
	}
	want := "  %1 = neg %x : f32[4]\n  %2 = add %1, %y : f32[4]\n"
	if !strings.Contains(PrintFunc(f), want) {
		t.Errorf("printed:\n%s\nwant it to contain\n%s", PrintFunc(f), want)
	}
}
