package engine

import (
	"testing"

	"github.com/tpucc/tpucc/backend"
)

// TestCallInto: the result lands in the storage given, which the call
// returns, with the values Call gives, call after call; a padded call
// (sliced from its bucket's program) copies into it the same way.
func TestCallInto(t *testing.T) {
	for name, opts := range map[string]Options{
		"exact":  {},
		"padded": {Buckets: []int64{8, 16}, Dynamic: []DimRef{{0, 0}}},
	} {
		f, _, _ := newFunc(t, mlpProgram, opts)
		if name == "padded" { // the first size is compiled as it is; later ones go to buckets
			call(t, f, mlpProgram, mlpArgs(7, 9))
		}
		out := backend.New(f32(5, 3))
		for seed := range int64(3) {
			args := mlpArgs(5, seed)
			got, err := f.CallInto([]*backend.Buffer{out}, args)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got[0] != out {
				t.Fatalf("%s: the result is not the storage given", name)
			}
			if d := sameTensors(got, exactRun(t, mlpProgram, args)); d != "" {
				t.Fatalf("%s, seed %d: %s", name, seed, d)
			}
		}
		if s := f.Stats(); (s.PaddedCalls > 0) != (name == "padded") {
			t.Fatalf("%s: %d padded calls", name, s.PaddedCalls)
		}
	}
}

// TestCallIntoErrors: storage of the wrong type, or an argument's that is
// not donated, is refused naming the result, and the call runs nothing.
func TestCallIntoErrors(t *testing.T) {
	f, _, _ := newFunc(t, mlpProgram, Options{})
	args := mlpArgs(5, 1)
	x := args[0].Tensor
	inX, err := backend.View(f32(5, 3), x.Bytes()[:5*3*4])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		into []*backend.Buffer
		want string
	}{
		{[]*backend.Buffer{backend.New(f32(5, 4))}, "result 0 of @mlp: the storage given is f32[5,4], want f32[5,3]"},
		{[]*backend.Buffer{inX}, "result 0 of @mlp: the storage given is argument 0's, which the call does not donate"},
		{[]*backend.Buffer{nil, nil}, "@mlp returns 1 results, got storage for 2"},
	} {
		if _, err := f.CallInto(c.into, args); err == nil || err.Error() != c.want {
			t.Errorf("got error %v, want %q", err, c.want)
		}
	}
	if s := f.Stats(); s.Calls != 3 || s.Misses != 1 {
		t.Fatalf("stats %+v: want 3 calls and the one compile", s)
	}
}

// addProgram adds %u to %c, which callers donate.
var addProgram = &tirProgram{name: "acc", text: func([]Arg) string {
	return `func @acc(%c: f32[6], %u: f32[6]) -> f32[6] {
  %r = add %c, %u
  return %r
}
`
}}

// TestCallIntoDonated: a donated argument given back as the result's
// storage holds the result and is not consumed, so a loop passes the same
// buffer call after call; given other storage, the argument is consumed as
// with Call.
func TestCallIntoDonated(t *testing.T) {
	f, _, _ := newFunc(t, addProgram, Options{Name: "acc", Donate: []int{0}})
	c, u := seeded(f32(6), 1), seeded(f32(6), 2)
	want := c.Clone()
	for range 3 {
		for i := range 6 {
			want.SetFloat64(i, float64(float32(want.Float64At(i)+u.Float64At(i))))
		}
		got, err := f.CallInto([]*backend.Buffer{c}, []Arg{TensorArg(c), TensorArg(u)})
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != c || c.Donated() != "" {
			t.Fatalf("the donated accumulator is not the result, or was consumed (%q)", c.Donated())
		}
		if !c.Equal(want) {
			t.Fatalf("got %s, want %s", c, want)
		}
	}
	other := backend.New(f32(6))
	if _, err := f.CallInto([]*backend.Buffer{other}, []Arg{TensorArg(c), TensorArg(u)}); err != nil {
		t.Fatal(err)
	}
	if want := "was donated to a call of acc (argument 0)"; c.Donated() != want {
		t.Fatalf("the argument given other storage: Donated() = %q, want %q", c.Donated(), want)
	}
}
