package cpu

import (
	"math"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/frontend/tir"
)

func runTIR(t *testing.T, src string, args ...*backend.Buffer) []*backend.Buffer {
	t.Helper()
	m, err := tir.Parse("m.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(m, m.Entry(), args)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// collatz counts the steps of the Collatz sequence from n to 1: a trip
// count known only from the data, with a case choosing the step by parity.
const collatz = `func @main(%n: i32[]) -> i32[] {
  %z = constant 0 : i32[]
  %steps, %last = while %z, %n cond (%s: i32[], %x: i32[]) {
      %one = constant 1 : i32[]
      %go = compare %x, %one {dir=gt}
      return %go
    } do (%s: i32[], %x: i32[]) {
      %one = constant 1 : i32[]
      %two = constant 2 : i32[]
      %s1 = add %s, %one
      %par = rem %x, %two
      %x1 = case %par, %x : i32[] (%e: i32[]) {
          %two = constant 2 : i32[]
          %h = div %e, %two
          return %h
        } (%o: i32[]) {
          %three = constant 3 : i32[]
          %one = constant 1 : i32[]
          %t = mul %o, %three
          %t1 = add %t, %one
          return %t1
        }
      return %s1, %x1
    }
  return %steps
}
`

// TestRunWhileDataDependent: a while whose trip count depends on its input
// (27 takes 111 steps, 1 takes none) runs do until cond is false.
func TestRunWhileDataDependent(t *testing.T) {
	for _, c := range []struct{ n, steps int64 }{{27, 111}, {6, 8}, {1, 0}} {
		out := runTIR(t, collatz, I(i32(), c.n))
		if got := out[0].Int64At(0); got != c.steps {
			t.Errorf("collatz(%d) = %d steps, want %d", c.n, got, c.steps)
		}
	}
}

// TestRunCaseIndex: case runs branch k; an index outside [0, N), negative
// or too large, runs the last branch.
func TestRunCaseIndex(t *testing.T) {
	src := `func @main(%k: i32[], %a: f32[2]) -> f32[2] {
  %y = case %k, %a : f32[2] (%p: f32[2]) {
      %c = constant 10.0 : f32[2]
      %r = add %p, %c
      return %r
    } (%p: f32[2]) {
      %r = neg %p
      return %r
    } (%p: f32[2]) {
      %c = constant 2.0 : f32[2]
      %r = mul %p, %c
      return %r
    }
  return %y
}
`
	a := F(f32(2), 1, -3)
	for _, c := range []struct {
		k    int64
		want []float32
	}{{0, []float32{11, 7}}, {1, []float32{-1, 3}}, {2, []float32{2, -6}}, {3, []float32{2, -6}}, {-1, []float32{2, -6}}, {math.MaxInt32, []float32{2, -6}}} {
		out := runTIR(t, src, I(i32(), c.k), a)
		if got := out[0].Float32s(); got[0] != c.want[0] || got[1] != c.want[1] {
			t.Errorf("k=%d: %v, want %v", c.k, got, c.want)
		}
	}
}

// stackedLoop runs x <- tanh(w[l] x + b[l]) for each of 3 layers, slicing
// the stacked weights with dynamic_slice at the loop counter.
const stackedLoop = `func @main(%w: f32[3,4,4], %b: f32[3,4], %x0: f32[4]) -> f32[4] {
  %z = constant 0 : i32[]
  %n, %x, %ww, %bb = while %z, %x0, %w, %b cond (%l: i32[], %x: f32[4], %w: f32[3,4,4], %b: f32[3,4]) {
      %three = constant 3 : i32[]
      %go = compare %l, %three {dir=lt}
      return %go
    } do (%l: i32[], %x: f32[4], %w: f32[3,4,4], %b: f32[3,4]) {
      %zero = constant 0 : i32[]
      %ws = dynamic_slice %w, %l, %zero, %zero {sizes=[1, 4, 4]}
      %wl = reshape %ws : f32[4,4]
      %bs = dynamic_slice %b, %l, %zero {sizes=[1, 4]}
      %bl = reshape %bs : f32[4]
      %y = dot_general %wl, %x {lhs_contract=[1], rhs_contract=[0]}
      %yb = add %y, %bl
      %x1 = tanh %yb
      %one = constant 1 : i32[]
      %l1 = add %l, %one
      return %l1, %x1, %w, %b
    }
  return %x
}
`

// TestRunStackedLoop: a loop over stacked weights agrees with the layers
// computed one by one in float64 (f32 tolerance).
func TestRunStackedLoop(t *testing.T) {
	w := make([]float64, 48)
	b := make([]float64, 12)
	for i := range w {
		w[i] = math.Sin(float64(i)) * 0.5
	}
	for i := range b {
		b[i] = math.Cos(float64(i)) * 0.1
	}
	x := []float64{0.5, -1, 0.25, 2}
	out := runTIR(t, stackedLoop, F(f32(3, 4, 4), w...), F(f32(3, 4), b...), F(f32(4), x...))
	for l := 0; l < 3; l++ {
		y := make([]float64, 4)
		for r := 0; r < 4; r++ {
			s := b[l*4+r]
			for c := 0; c < 4; c++ {
				s += w[l*16+r*4+c] * x[c]
			}
			y[r] = math.Tanh(s)
		}
		x = y
	}
	for i, g := range out[0].Float32s() {
		if math.Abs(float64(g)-x[i]) > 1e-6 {
			t.Errorf("x[%d] = %v, want %v", i, g, x[i])
		}
	}
}

// TestRunWhileZeroTrips: a while whose cond is false at once returns its
// operands, as copies when they are the function's arguments.
func TestRunWhileZeroTrips(t *testing.T) {
	src := `func @main(%x: f32[2]) -> f32[2] {
  %y = while %x cond (%v: f32[2]) {
      %f = constant false : i1[]
      return %f
    } do (%v: f32[2]) {
      %w = neg %v
      return %w
    }
  return %y
}
`
	x := F(f32(2), 1, 2)
	out := runTIR(t, src, x)
	if got := out[0].Float32s(); got[0] != 1 || got[1] != 2 {
		t.Errorf("got %v, want [1 2]", got)
	}
	if out[0] == x {
		t.Error("the result shares the argument's buffer")
	}
}

// TestRunNestedLoops: a loop inside a loop's do region: the inner one runs
// i+1 times in outer iteration i, adding 1.5 each time (1.5*(1+2+3)).
func TestRunNestedLoops(t *testing.T) {
	src := `func @main(%x0: f32[3]) -> f32[3] {
  %z = constant 0 : i32[]
  %n, %x = while %z, %x0 cond (%i: i32[], %v: f32[3]) {
      %three = constant 3 : i32[]
      %go = compare %i, %three {dir=lt}
      return %go
    } do (%i: i32[], %v: f32[3]) {
      %one = constant 1 : i32[]
      %i1 = add %i, %one
      %z2 = constant 0 : i32[]
      %m, %w, %lim = while %z2, %v, %i1 cond (%j: i32[], %u: f32[3], %l: i32[]) {
          %go = compare %j, %l {dir=lt}
          return %go
        } do (%j: i32[], %u: f32[3], %l: i32[]) {
          %one = constant 1 : i32[]
          %j1 = add %j, %one
          %c = constant 1.5 : f32[3]
          %u1 = add %u, %c
          return %j1, %u1, %l
        }
      return %i1, %w
    }
  return %x
}
`
	out := runTIR(t, src, F(f32(3), 0, 1, -9))
	want := []float32{9, 10, 0}
	for i, g := range out[0].Float32s() {
		if g != want[i] {
			t.Errorf("x = %v, want %v", out[0].Float32s(), want)
			break
		}
	}
}
