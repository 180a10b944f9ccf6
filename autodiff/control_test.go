package autodiff_test

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/autodiff"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/frontend/tir"
	"github.com/tpucc/tpucc/ir"
)

// controlCases are the while and case programs checked against finite differences
// (the index of a case is set to each branch in turn, and past the last): the loop
// shapes models use, kept small.
var controlCases = map[string]string{
	// Branch 1 does not use %b: its cotangent is zeros there. The index gets none.
	"case": `func @f(%k: i32[], %a: f32[2,3], %b: f32[3,3]) -> (f32[2,3], f32[]) {
  %y, %s = case %k, %a, %b : f32[2,3], f32[] (%p: f32[2,3], %q: f32[3,3]) {
      %t = dot_general %p, %q {lhs_contract=[1], rhs_contract=[0]} : f32[2,3]
      %u = tanh %t : f32[2,3]
      %z = reduce_sum %q {axes=[0,1]} : f32[]
      return %u, %z
    } (%p: f32[2,3], %q: f32[3,3]) {
      %u = sin %p : f32[2,3]
      %m = reduce_sum %p {axes=[0,1]} : f32[]
      %e = exp %m : f32[]
      return %u, %e
    }
  return %y, %s
}`,
	// x = tanh(W·x), 3 times: W is loop-invariant, its cotangent summed over iterations.
	"counted": `func @f(%w: f32[3,3], %x: f32[3]) -> f32[3] {
  %i0 = constant 0 : i32[]
  %n, %ww, %y = while %i0, %w, %x cond (%i: i32[], %v: f32[3,3], %c: f32[3]) {
      %lim = constant 3 : i32[]
      %go = compare %i, %lim {dir=lt} : i1[]
      return %go
    } do (%i: i32[], %v: f32[3,3], %c: f32[3]) {
      %one = constant 1 : i32[]
      %i1 = add %i, %one : i32[]
      %h = dot_general %v, %c {lhs_contract=[1], rhs_contract=[0]} : f32[3]
      %t = tanh %h : f32[3]
      return %i1, %v, %t
    }
  return %y
}`,
	// The models' layer loop: x carried, layer i's weights read from [L,H,H] with
	// dynamic_slice, a residual; the loop runs from 1 to 3 (le), over layers 1..3.
	"scan_layers": `func @f(%ws: f32[4,3,3], %x: f32[2,3]) -> f32[] {
  %i0 = constant 1 : i32[]
  %n, %w, %y = while %i0, %ws, %x cond (%i: i32[], %v: f32[4,3,3], %c: f32[2,3]) {
      %lim = constant 3 : i32[]
      %go = compare %i, %lim {dir=le} : i1[]
      return %go
    } do (%i: i32[], %v: f32[4,3,3], %c: f32[2,3]) {
      %z = constant 0 : i32[]
      %wl = dynamic_slice %v, %i, %z, %z {sizes=[1,3,3]} : f32[1,3,3]
      %w2 = reshape %wl : f32[3,3]
      %h = dot_general %c, %w2 {lhs_contract=[1], rhs_contract=[0]} : f32[2,3]
      %t = tanh %h : f32[2,3]
      %r = add %c, %t : f32[2,3]
      %one = constant 1 : i32[]
      %i1 = add %i, %one : i32[]
      return %i1, %v, %r
    }
  %s = mul %y, %y
  %l = reduce_sum %s {axes=[0,1]}
  return %l
}`,
	// A case in a loop body: odd iterations take sin, even ones scale by a; the
	// counter's bound is a carried constant.
	"case_in_loop": `func @f(%a: f32[], %x: f32[4]) -> f32[4] {
  %i0 = constant 0 : i32[]
  %lim0 = constant 4 : i32[]
  %n, %m, %aa, %y = while %i0, %lim0, %a, %x cond (%i: i32[], %lim: i32[], %s: f32[], %c: f32[4]) {
      %go = compare %i, %lim {dir=lt} : i1[]
      return %go
    } do (%i: i32[], %lim: i32[], %s: f32[], %c: f32[4]) {
      %two = constant 2 : i32[]
      %k = rem %i, %two : i32[]
      %d = case %k, %s, %c : f32[4] (%p: f32[], %q: f32[4]) {
          %pb = broadcast %p {dims=[]} : f32[4]
          %u = mul %pb, %q : f32[4]
          return %u
        } (%p: f32[], %q: f32[4]) {
          %u = sin %q : f32[4]
          return %u
        }
      %one = constant 1 : i32[]
      %i1 = add %i, %one : i32[]
      return %i1, %lim, %s, %d
    }
  return %y
}`,
	// A loop in a loop, each twice: the inner loop's carries are saved per outer
	// iteration inside the outer reverse body.
	"nested": `func @f(%a: f32[3], %x: f32[3]) -> f32[3] {
  %o0 = constant 0 : i32[]
  %on, %oa, %y = while %o0, %a, %x cond (%o: i32[], %p: f32[3], %c: f32[3]) {
      %lim = constant 2 : i32[]
      %go = compare %o, %lim {dir=lt} : i1[]
      return %go
    } do (%o: i32[], %p: f32[3], %c: f32[3]) {
      %i0 = constant 0 : i32[]
      %n, %q, %d = while %i0, %p, %c cond (%i: i32[], %p: f32[3], %c: f32[3]) {
          %lim = constant 2 : i32[]
          %go = compare %i, %lim {dir=lt} : i1[]
          return %go
        } do (%i: i32[], %p: f32[3], %c: f32[3]) {
          %m = mul %p, %c : f32[3]
          %s = sin %m : f32[3]
          %e = add %s, %c : f32[3]
          %one = constant 1 : i32[]
          %i1 = add %i, %one : i32[]
          return %i1, %p, %e
        }
      %t = tanh %d : f32[3]
      %one = constant 1 : i32[]
      %o1 = add %o, %one : i32[]
      return %o1, %p, %t
    }
  return %y
}`,
	// A data-dependent loop that carries only integers (the Collatz steps of 27)
	// passes no gradient, so it is no refusal: the steps scale x.
	"int_loop": `func @f(%x: f32[2]) -> f32[2] {
  %n0 = constant 27 : i32[]
  %s0 = constant 0 : i32[]
  %n, %s = while %n0, %s0 cond (%n: i32[], %s: i32[]) {
      %one = constant 1 : i32[]
      %go = compare %n, %one {dir=gt} : i1[]
      return %go
    } do (%n: i32[], %s: i32[]) {
      %one = constant 1 : i32[]
      %two = constant 2 : i32[]
      %three = constant 3 : i32[]
      %r = rem %n, %two : i32[]
      %odd = compare %r, %one {dir=eq} : i1[]
      %h = div %n, %two : i32[]
      %t = mul %n, %three : i32[]
      %t1 = add %t, %one : i32[]
      %nn = select %odd, %t1, %h : i32[]
      %s1 = add %s, %one : i32[]
      return %nn, %s1
    }
  %sf = convert %s : f32[]
  %sb = broadcast %sf {dims=[]} : f32[2]
  %e = exp %x
  %y = mul %e, %sb
  return %y
}`,
	// Never entered: the results are the operands.
	"zero_trip": `func @f(%x: f32[3]) -> f32[3] {
  %i0 = constant 5 : i32[]
  %n, %y = while %i0, %x cond (%i: i32[], %c: f32[3]) {
      %lim = constant 5 : i32[]
      %go = compare %i, %lim {dir=lt} : i1[]
      return %go
    } do (%i: i32[], %c: f32[3]) {
      %e = exp %c : f32[3]
      %one = constant 1 : i32[]
      %i1 = add %i, %one : i32[]
      return %i1, %e
    }
  %z = mul %y, %y
  return %z
}`,
}

// TestControlAgainstFiniteDifferences checks each case's VJP, and the one with
// Options.Remat, whose reverse loops recompute each iteration's forward from the
// saved carried values and save no residuals.
func TestControlAgainstFiniteDifferences(t *testing.T) {
	for name, src := range controlCases {
		for _, o := range []*autodiff.Options{nil, {Remat: true}} {
			label := name
			if o != nil {
				label += "/remat"
			}
			t.Run(label, func(t *testing.T) {
				m, err := tir.Parse(name+".tir", []byte(src))
				if err != nil {
					t.Fatal(err)
				}
				f := m.Entry()
				if o != nil {
					v, err := autodiff.ModuleOfWith(f, *o)
					if err != nil {
						t.Fatal(err)
					}
					if text := ir.Print(v); strings.Contains(text, "%res_") {
						t.Errorf("the remat VJP saves residuals:\n%s", text)
					}
				}
				if f.Params[0].Type.DType != ir.I32 {
					runCheckWith(t, m, cpu.RandomInputs(f, 1), 1, o)
					runCheckWith(t, m, cpu.RandomInputs(f, 2), 2, o)
					return
				}
				// Each branch, and an index past the last (which runs the last).
				for k := int64(0); k <= 2; k++ {
					in := cpu.RandomInputs(f, k+1)
					in[0].SetInt64(0, k)
					runCheckWith(t, m, in, k+1, o)
				}
			})
		}
	}
}

// TestControlSecondOrder differentiates the VJPs of a case and a counted loop: the
// backward case and the reverse loop are a case and a counted loop again.
func TestControlSecondOrder(t *testing.T) {
	for _, name := range []string{"case", "counted"} {
		t.Run(name, func(t *testing.T) {
			m, err := tir.Parse(name+".tir", []byte(controlCases[name]))
			if err != nil {
				t.Fatal(err)
			}
			v, err := autodiff.Module(m)
			if err != nil {
				t.Fatal(err)
			}
			f := v.Entry()
			for k := int64(0); k <= 1; k++ {
				in := cpu.RandomInputs(f, k+3)
				if f.Params[0].Type.DType == ir.I32 {
					in[0].SetInt64(0, k)
				}
				runCheckAt(t, v, in, k+3)
			}
		})
	}
}

// TestWhileNeedsStaticTripCount: a loop whose trip count depends on the data is
// refused at its position once a cotangent reaches it, as JAX refuses while_loop.
func TestWhileNeedsStaticTripCount(t *testing.T) {
	src := `func @f(%x: f32[3]) -> f32[3] {
  %y = while %x : f32[3] cond (%c: f32[3]) {
      %s = reduce_sum %c {axes=[0]} : f32[]
      %lim = constant 10.0 : f32[]
      %go = compare %s, %lim {dir=lt} : i1[]
      return %go
    } do (%c: f32[3]) {
      %two = constant 2.0 : f32[3]
      %d = mul %c, %two : f32[3]
      return %d
    }
  return %y
}
`
	m, err := tir.Parse("data.tir", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = autodiff.Module(m)
	want := "data.tir:2:3: error: cannot differentiate while: reverse-mode through a while needs a static trip count, as JAX's: write it as a counted loop"
	if err == nil || err.Error() != want {
		t.Errorf("got error %v, want %s", err, want)
	}
}
