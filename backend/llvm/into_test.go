package llvm

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// A streaming chain with three kinds of result: %y, which a later kernel
// reads; %z; and the parameter %b returned as it is (a copy step).
const intoSrc = `func @f(%x: f32[8,16], %b: f32[16]) -> (f32[8,16], f32[8,16], f32[16]) {
  %s = sigmoid %x
  %m = mul %x, %s
  %y = add %m, %b
  %z = add %y, %y
  return %y, %z, %b
}
`

func compileInto(t *testing.T, src string, donate ...int) (*Executable, *ir.Module) {
	t.Helper()
	m, err := tir.Parse("f.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	x, err := testBackend(t).compileDonating(m, m.Funcs[0], nil, donate)
	if err != nil {
		t.Fatal(err)
	}
	return x, m
}

// nanFilled is a buffer of type t holding NaNs: storage a call must
// overwrite completely.
func nanFilled(t ir.Type) *backend.Buffer {
	b := backend.New(t)
	for i := range b.Len() {
		b.SetFloat64(i, math.NaN())
	}
	return b
}

// TestRunInto: each result given storage is computed into it, and the call
// returns that very buffer; a result given none is new storage. The values
// are Run's, bit for bit, on every call with the same storage.
func TestRunInto(t *testing.T) {
	x, m := compileInto(t, intoSrc)
	f := m.Funcs[0]
	in := cpu.RandomInputs(f, 3)
	want, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	into := []*backend.Buffer{nanFilled(f.Results[0]), nil, nanFilled(f.Results[2])}
	for call := range 3 {
		got, err := x.RunWith(in, backend.RunOptions{Into: into})
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != into[0] || got[2] != into[2] {
			t.Fatalf("call %d: the results are not the buffers given", call)
		}
		if sharesArg(got[1], into) || sharesArg(got[1], in) {
			t.Fatalf("call %d: the result given no storage shares some", call)
		}
		checkResults(t, want, got)
		for _, b := range into {
			if b != nil {
				b.SetFloat64(0, math.NaN())
			}
		}
	}
}

// TestRunIntoErrors: storage that breaks a rule is refused with the
// result's index, before anything runs.
func TestRunIntoErrors(t *testing.T) {
	x, m := compileInto(t, intoSrc)
	f := m.Funcs[0]
	in := cpu.RandomInputs(f, 3)
	ok := func(i int) *backend.Buffer { return backend.New(f.Results[i]) }
	shared := ok(0)
	gone := ok(0)
	if err := gone.Donate("was donated to a test"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		into []*backend.Buffer
		want string
	}{
		{[]*backend.Buffer{ok(0), ok(1)}, "@f returns 3 results, got storage for 2"},
		{[]*backend.Buffer{nil, backend.New(ir.Tensor(ir.F32, 8, 15)), nil}, "result 1 of @f: the storage given is f32[8,15], want f32[8,16]"},
		{[]*backend.Buffer{nil, nil, backend.New(ir.Tensor(ir.I32, 16))}, "result 2 of @f: the storage given is i32[16], want f32[16]"},
		{[]*backend.Buffer{shared, shared.WithType(f.Results[1]), nil}, "results 0 and 1 of @f: given the same storage"},
		{[]*backend.Buffer{in[0], nil, nil}, "result 0 of @f: the storage given is argument 0's, which the call does not donate"},
		{[]*backend.Buffer{nil, nil, in[1]}, "result 2 of @f: the storage given is argument 1's, which the call does not donate"},
		{[]*backend.Buffer{gone, nil, nil}, "result 0 of @f: the storage given (f32[8,16]) was donated to a test"},
	} {
		_, err := x.RunWith(in, backend.RunOptions{Into: c.into})
		if err == nil || err.Error() != c.want {
			t.Errorf("got error %v, want %q", err, c.want)
		}
	}
}

// TestRunIntoDonated: the storage of a donated argument may hold a result.
// The cache updated in place and given its own storage back is the result
// with no copy; given other storage, the result lands there; a donated
// argument given for a result computed from it still gives the right
// values (it is computed apart and copied over at the end).
func TestRunIntoDonated(t *testing.T) {
	x, m := compileInto(t, donateSrc, 0)
	f := m.Funcs[0]
	for name, into := range map[string]func(in []*backend.Buffer) []*backend.Buffer{
		"own storage":          func(in []*backend.Buffer) []*backend.Buffer { return []*backend.Buffer{in[0], nanFilled(f.Results[1])} },
		"other storage":        func(in []*backend.Buffer) []*backend.Buffer { return []*backend.Buffer{nanFilled(f.Results[0]), nil} },
		"cache for the second": func(in []*backend.Buffer) []*backend.Buffer { return []*backend.Buffer{nil, in[0]} },
		"both swapped": func(in []*backend.Buffer) []*backend.Buffer {
			return []*backend.Buffer{nanFilled(f.Results[0]), in[0]}
		},
	} {
		in := donateArgs(t, f, 2)
		want, err := cpu.Run(m, f, in)
		if err != nil {
			t.Fatal(err)
		}
		give := into(in)
		got, err := x.RunWith(in, backend.RunOptions{Donate: []int{0}, Into: give})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkResults(t, want, got)
		for i, b := range give {
			if b != nil && got[i] != b {
				t.Fatalf("%s: result %d is not the buffer given", name, i)
			}
		}
		if name == "own storage" && !x.plan.slots[x.plan.results[0]].written {
			t.Fatalf("the cache is not updated in place:\n%s", x.plan)
		}
	}
}

// TestRunIntoNotDonated: a program that updates a donated parameter in
// place, called without the donation and with storage for that result,
// fills the storage and leaves the argument as it was.
func TestRunIntoNotDonated(t *testing.T) {
	x, m := compileInto(t, donateSrc, 0)
	f := m.Funcs[0]
	in := donateArgs(t, f, 4)
	want, err := cpu.Run(m, f, in)
	if err != nil {
		t.Fatal(err)
	}
	before := in[0].Clone()
	out := nanFilled(f.Results[0])
	got, err := x.RunWith(in, backend.RunOptions{Into: []*backend.Buffer{out, nil}})
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, want, got)
	if got[0] != out || !in[0].Equal(before) {
		t.Fatal("the result is not in the storage given, or the argument changed")
	}
}

// TestRunIntoConcurrent: calls running at once, each into its own storage
// (go test -race checks the executable's shared state).
func TestRunIntoConcurrent(t *testing.T) {
	x, m := compileInto(t, intoSrc)
	f := m.Funcs[0]
	in := cpu.RandomInputs(f, 5)
	want, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for g := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			into := []*backend.Buffer{backend.New(f.Results[0]), backend.New(f.Results[1]), nil}
			for range 20 {
				got, err := x.RunWith(in, backend.RunOptions{Into: into})
				if err != nil {
					errs[g] = err
					return
				}
				for i := range want {
					if !got[i].Equal(want[i]) {
						errs[g] = fmt.Errorf("result %d of a concurrent call differs from Run's", i)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A decode step's layers as a loop: the stacked cache %c, donated, is
// carried through the loop and each layer writes its row.
const layersSrc = `func @layers(%c: f32[3,4,8], %u: f32[1,4,8]) -> f32[3,4,8] {
  %z = constant 0 : i32[]
  %i, %cc, %uu = while %z, %c, %u cond (%i: i32[], %cc: f32[3,4,8], %uu: f32[1,4,8]) {
      %three = constant 3 : i32[]
      %go = compare %i, %three {dir=lt}
      return %go
    } do (%i: i32[], %cc: f32[3,4,8], %uu: f32[1,4,8]) {
      %zz = constant 0 : i32[]
      %h = constant 0.5 : f32[1,4,8]
      %s = mul %uu, %h
      %r = dynamic_update_slice %cc, %s, %i, %zz, %zz : f32[3,4,8]
      %one = constant 1 : i32[]
      %i1 = add %i, %one
      return %i1, %r, %s
    }
  return %cc
}
`

// TestWhileAdoptsDonatedParam: a loop carries a donated parameter in the
// parameter's own slot, so a call that donates it runs the loop in the
// argument's storage (nothing copied in, the result is that storage, and
// given back as Into it is that very buffer); a call that does not donate
// it works on a private copy and leaves the argument as it was.
func TestWhileAdoptsDonatedParam(t *testing.T) {
	x, m := compileInto(t, layersSrc, 0)
	f := m.Funcs[0]
	w := x.plan.steps[slicesIndexKind(x.plan.steps, stepWhile)]
	if c := w.bufs[1]; c != w.bufs[w.outs+1] || x.plan.slots[c].kind != slotParam {
		t.Fatalf("the loop does not carry the donated cache in its slot:\n%s", x.plan)
	}
	in := cpu.RandomInputs(f, 4)
	want, err := cpu.Run(m, f, in)
	if err != nil {
		t.Fatal(err)
	}
	before := in[0].Clone()
	got, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, want, got)
	if !in[0].Equal(before) || sameStorage(got[0], in[0]) {
		t.Fatal("Run without a donation changed or shared the argument")
	}
	got, err = x.RunWith(in, backend.RunOptions{Donate: []int{0}, Into: []*backend.Buffer{in[0]}})
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, want, got)
	if got[0] != in[0] {
		t.Fatal("the donated cache given back is not the result")
	}
}

func slicesIndexKind(steps []step, k stepKind) int {
	for i, st := range steps {
		if st.kind == k {
			return i
		}
	}
	return -1
}

// invariantSrc's loop carries %w unchanged (a stacked weight of a layer
// loop): it reads each row of it, and returns it as it came.
const invariantSrc = `func @layers(%w: f32[3,4,8], %x: f32[4,8]) -> (f32[4,8], f32[3,4,8]) {
  %z = constant 0 : i32[]
  %i, %ww, %xx = while %z, %w, %x cond (%i: i32[], %ww: f32[3,4,8], %xx: f32[4,8]) {
      %three = constant 3 : i32[]
      %go = compare %i, %three {dir=lt}
      return %go
    } do (%i: i32[], %ww: f32[3,4,8], %xx: f32[4,8]) {
      %zz = constant 0 : i32[]
      %row = dynamic_slice %ww, %i, %zz, %zz {sizes=[1,4,8]} : f32[1,4,8]
      %r = reshape %row : f32[4,8]
      %y = add %xx, %r
      %one = constant 1 : i32[]
      %i1 = add %i, %one
      return %i1, %ww, %y
    }
  return %xx, %ww
}
`

// TestWhileReadsInvariantParam: a loop that returns an entry parameter
// unchanged (a decode step's stacked weights) carries it in the
// parameter's own slot, copying nothing in (before, each call copied every
// stacked weight into the loop's storage), and the numbers, the loop's
// result of it included, are the reference executor's; the argument is
// unchanged.
func TestWhileReadsInvariantParam(t *testing.T) {
	x, m := compileInto(t, invariantSrc)
	f := m.Funcs[0]
	w := x.plan.steps[slicesIndexKind(x.plan.steps, stepWhile)]
	if c := w.bufs[1]; c != w.bufs[w.outs+1] || x.plan.slots[c].kind != slotParam {
		t.Fatalf("the loop does not read the invariant parameter in its slot:\n%s", x.plan)
	}
	in := cpu.RandomInputs(f, 5)
	want, err := cpu.Run(m, f, in)
	if err != nil {
		t.Fatal(err)
	}
	before := in[0].Clone()
	got, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, want, got)
	if !in[0].Equal(before) {
		t.Fatal("the loop changed its invariant argument")
	}
}
