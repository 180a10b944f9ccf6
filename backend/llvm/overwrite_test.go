package llvm

import (
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
)

// An AdamW update's shape (train.Step's, unfused): the loss reads the
// weight %p first; the new weight, m and v are one loop over (p, g, m, v).
const overwriteSrc = `func @step(%p: f32[7,33], %m: f32[7,33], %v: f32[7,33], %g: f32[7,33], %lr: f32[]) -> (f32[], f32[7,33], f32[7,33], f32[7,33]) {
  %pg = mul %p, %g : f32[7,33]
  %loss = reduce_sum %pg {axes=[0,1]} : f32[]
  %b1 = constant 0.9 : f32[7,33]
  %c1 = constant 0.1 : f32[7,33]
  %m1 = mul %m, %b1 : f32[7,33]
  %m2 = mul %g, %c1 : f32[7,33]
  %mn = add %m1, %m2 : f32[7,33]
  %b2 = constant 0.999 : f32[7,33]
  %c2 = constant 0.001 : f32[7,33]
  %v1 = mul %v, %b2 : f32[7,33]
  %gg = mul %g, %g : f32[7,33]
  %v2 = mul %gg, %c2 : f32[7,33]
  %vn = add %v1, %v2 : f32[7,33]
  %sq = sqrt %vn : f32[7,33]
  %eps = constant 1e-08 : f32[7,33]
  %den = add %sq, %eps : f32[7,33]
  %q = div %mn, %den : f32[7,33]
  %lrb = broadcast %lr {dims=[]} : f32[7,33]
  %st = mul %lrb, %q : f32[7,33]
  %pn = sub %p, %st : f32[7,33]
  return %loss, %pn, %mn, %vn
}
`

// TestLoopOverDonated: with the weight and its state donated, the update
// loop writes each new value over the argument it updates (the step's
// outputs are the parameters' slots, and the results share the donated
// arguments' storage); without a donation at run time it works on copies
// and leaves the arguments as they were. The numbers are the reference
// executor's either way.
func TestLoopOverDonated(t *testing.T) {
	b := testBackend(t)
	m, err := tir.Parse("step.tir", []byte(overwriteSrc))
	if err != nil {
		t.Fatal(err)
	}
	f := m.Funcs[0]
	x, err := b.compileDonating(m, f, nil, []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	var loop *step
	for i := range x.plan.steps {
		if strings.HasPrefix(x.plan.steps[i].what, "loop ") {
			loop = &x.plan.steps[i]
		}
	}
	if loop == nil || !strings.HasSuffix(loop.what, " over its arguments") || loop.outs != 3 {
		t.Fatalf("no loop over the arguments:\n%s", x.plan)
	}
	for j, want := range []int{1, 2, 0} { // mn over %m, vn over %v, pn over %p
		if sl := x.plan.slots[loop.bufs[j]]; sl.kind != slotParam || sl.param != want {
			t.Errorf("output %d written to slot %+v, want parameter %d", j, sl, want)
		}
	}
	for _, b := range loop.bufs[loop.outs:] {
		for _, o := range loop.bufs[:loop.outs] {
			if b == o {
				t.Errorf("the loop reads slot %d as an input beside writing it (noalias.go)", b)
			}
		}
	}
	in := cpu.RandomInputs(f, 3)
	want, err := cpu.Run(m, f, in)
	if err != nil {
		t.Fatal(err)
	}
	before := []*backend.Buffer{in[0].Clone(), in[1].Clone(), in[2].Clone()}
	got, err := x.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	agreeWithin(t, want, got)
	for i, c := range before {
		if !in[i].Equal(c) {
			t.Fatalf("Run without a donation changed argument %d", i)
		}
	}
	got, err = x.RunWith(in, backend.RunOptions{Donate: []int{0, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	agreeWithin(t, want, got)
	for r, a := range map[int]int{1: 0, 2: 1, 3: 2} {
		if !sameStorage(got[r], in[a]) {
			t.Errorf("result %d is not in donated argument %d's storage", r, a)
		}
	}
}

// TestLoopNotOverDonated: a donated parameter that a later step reads or
// the program returns as well, or that the loop reads at another index
// than it writes (a transpose, a broadcast along an axis), or that is not
// donated, is not written over;
// the numbers are the reference executor's.
func TestLoopNotOverDonated(t *testing.T) {
	for _, c := range []struct{ name, src string }{
		{"read after", `func @f(%p: f32[4,4], %g: f32[4,4]) -> (f32[4,4], f32[4]) {
  %n = sub %p, %g : f32[4,4]
  %e = exp %n : f32[4,4]
  %s = reduce_sum %e {axes=[0,1]} : f32[]
  %sb = broadcast %s {dims=[]} : f32[4,4]
  %pb = mul %p, %sb : f32[4,4]
  %o = reduce_sum %pb {axes=[1]} : f32[4]
  return %e, %o
}
`},
		{"returned too", `func @f(%p: f32[4,4], %g: f32[4,4]) -> (f32[4,4], f32[4,4]) {
  %n = sub %p, %g : f32[4,4]
  return %n, %p
}
`},
		{"transposed", `func @f(%p: f32[4,4], %g: f32[4,4]) -> (f32[4,4]) {
  %t = transpose %p {perm=[1,0]} : f32[4,4]
  %n = sub %t, %g : f32[4,4]
  %o = add %n, %p : f32[4,4]
  return %o
}
`},
		{"row broadcast", `func @f(%p: f32[4,4], %g: f32[4,4]) -> (f32[4,4]) {
  %r = slice %p {limit=[1,4], start=[0,0]} : f32[1,4]
  %rs = reshape %r : f32[4]
  %b = broadcast %rs {dims=[1]} : f32[4,4]
  %n = sub %p, %b : f32[4,4]
  %o = add %n, %g : f32[4,4]
  return %o
}
`},
	} {
		m, err := tir.Parse("f.tir", []byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		f := m.Funcs[0]
		for _, donate := range [][]int{{0}, nil} {
			x, err := testBackend(t).compileDonating(m, f, nil, donate)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(x.plan.String(), "over its arguments") {
				t.Errorf("%s (donating %v): written over its argument:\n%s", c.name, donate, x.plan)
			}
			in := cpu.RandomInputs(f, 2)
			want, err := cpu.Run(m, f, in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := x.RunWith(in, backend.RunOptions{Donate: donate})
			if err != nil {
				t.Fatal(err)
			}
			agreeWithin(t, want, got)
		}
	}
}

// agreeWithin compares results with the oracle's tolerance (compare).
func agreeWithin(t *testing.T, want, got []*backend.Buffer) {
	t.Helper()
	for i := range want {
		if msg := compare(want[i], got[i]); msg != "" {
			t.Fatalf("result %d: %s", i, msg)
		}
	}
}

// BenchmarkAdamWUpdate: the AdamW loop of overwriteSrc's shape at [16384,
// 1024] (64 MiB a table), each call's results the next call's weight and
// state, as a training step chains them: "fresh" compiled without
// donating (the new tables from the result pool, the dropped ones
// collected between calls), "over" donating them (written over the
// arguments). go test ./backend/llvm -run '^$' -bench
// AdamWUpdate -count 4 alternates the two.
func BenchmarkAdamWUpdate(b *testing.B) {
	src := strings.ReplaceAll(overwriteSrc, "7,33", "16384,1024")
	m, err := tir.Parse("step.tir", []byte(src))
	if err != nil {
		b.Fatal(err)
	}
	f := m.Funcs[0]
	for _, c := range []struct {
		name   string
		donate []int
	}{{"fresh", nil}, {"over", []int{0, 1, 2}}} {
		b.Run(c.name, func(b *testing.B) {
			x, err := testBackend(b).compileDonating(m, f, nil, c.donate)
			if err != nil {
				b.Fatal(err)
			}
			in := cpu.RandomInputs(f, 1)
			faults, cpu := minorFaults(), time.Duration(0)
			for b.Loop() {
				c0 := cpuTime()
				got, err := x.RunWith(in, backend.RunOptions{Donate: c.donate})
				cpu += cpuTime() - c0
				if err != nil {
					b.Fatal(err)
				}
				in = append(got[1:], in[3:]...)
				b.StopTimer()
				runtime.GC() // the dropped tables back to the result pool, as between training steps
				b.StartTimer()
			}
			b.SetBytes(7 * 4 << 24) // four tables read, three written, as bench/train counts them
			b.ReportMetric(float64(minorFaults()-faults)/float64(b.N), "faults/op")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op") // what other processes distort less
		})
	}
}

// minorFaults is the process's minor page faults so far.
func minorFaults() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Minflt
}
