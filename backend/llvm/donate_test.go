package llvm

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// A decode step's shape: the cache %c [batch, slots, d] takes one token's
// row at slot %i; the second result reads the updated cache.
const donateSrc = `func @step(%c: f32[3,5,4], %u: f32[3,1,4], %i: i32[]) -> (f32[3,5,4], f32[3,5,4]) {
  %z = constant 0 : i32[]
  %r = dynamic_update_slice %c, %u, %z, %i, %z : f32[3,5,4]
  %s = add %r, %r : f32[3,5,4]
  return %r, %s
}
`

func donateArgs(t *testing.T, f *ir.Func, slot int32) []*backend.Buffer {
	t.Helper()
	in := cpu.RandomInputs(f, 7)
	i, err := backend.FromSlice([]int32{slot})
	if err != nil {
		t.Fatal(err)
	}
	in[2] = i
	return in
}

// TestDonatedUpdateInPlace: with the cache donated, the update writes into
// the argument's storage and the result is that storage; without a
// donation at run time the same program works on a copy and leaves the
// argument as it was. Starts past either end are clamped as the reference
// clamps them.
func TestDonatedUpdateInPlace(t *testing.T) {
	b := testBackend(t)
	m, err := tir.Parse("step.tir", []byte(donateSrc))
	if err != nil {
		t.Fatal(err)
	}
	f := m.Funcs[0]
	x, err := b.compileDonating(m, f, nil, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(x.plan.String(), "update in place dynamic_update_slice") {
		t.Fatalf("the update is not in place:\n%s", x.plan)
	}
	for _, slot := range []int32{0, 2, 4, -3, 9} {
		in := donateArgs(t, f, slot)
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
			t.Fatalf("slot %d: Run without a donation changed or shared the argument", slot)
		}
		got, err = x.RunWith(in, backend.RunOptions{Donate: []int{0}})
		if err != nil {
			t.Fatal(err)
		}
		checkResults(t, want, got)
		if !sameStorage(got[0], in[0]) {
			t.Fatalf("slot %d: the donated cache's storage is not the result's", slot)
		}
	}
}

// TestUpdateNotInPlace: an undonated parameter, or a donated one that is
// read elsewhere too, is never written.
func TestUpdateNotInPlace(t *testing.T) {
	b := testBackend(t)
	twice := strings.Replace(donateSrc, "%s = add %r, %r", "%s = add %r, %c", 1)
	for name, c := range map[string]struct {
		src    string
		donate []int
	}{"not donated": {donateSrc, nil}, "read twice": {twice, []int{0}}} {
		m, err := tir.Parse("step.tir", []byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		f := m.Funcs[0]
		x, err := b.compileDonating(m, f, nil, c.donate)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(x.plan.String(), "update in place") {
			t.Fatalf("%s: the update writes into the parameter:\n%s", name, x.plan)
		}
		in := donateArgs(t, f, 1)
		want, err := cpu.Run(m, f, in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := x.RunWith(in, backend.RunOptions{Donate: c.donate})
		if err != nil {
			t.Fatal(err)
		}
		checkResults(t, want, got)
		if sameStorage(got[0], in[0]) {
			t.Fatalf("%s: the result shares the argument's storage", name)
		}
	}
}

func checkResults(t *testing.T, want, got []*backend.Buffer) {
	t.Helper()
	for i := range want {
		if !got[i].Equal(want[i]) { // moves and one add: exact
			t.Fatalf("result %d = %s, want %s", i, got[i], want[i])
		}
	}
}
