package tensor_test

import (
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/backend/cpu"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// both traces f on args' types, runs the module on the reference executor
// and runs f eagerly, and returns the printed module, the traced results
// and the eager ones.
func both(t *testing.T, name string, f func([]*tensor.Tensor) []*tensor.Tensor, args ...*tensor.Tensor) (string, []*backend.Buffer, []*backend.Buffer) {
	t.Helper()
	names := make([]string, len(args))
	types := make([]ir.Type, len(args))
	bufs := make([]*backend.Buffer, len(args))
	for i, a := range args {
		names[i] = string(rune('a' + i))
		types[i] = a.Type()
		bufs[i] = a.Buffer()
	}
	g := func(ts []*tensor.Tensor) ([]*tensor.Tensor, error) { return f(ts), nil }
	m, err := tensor.Trace(name, names, types, g)
	if err != nil {
		t.Fatal(err)
	}
	traced, err := cpu.Run(m, m.Funcs[0], bufs)
	if err != nil {
		t.Fatalf("%v\n%s", err, ir.Print(m))
	}
	eager, err := tensor.Eval(name, bufs, g)
	if err != nil {
		t.Fatal(err)
	}
	return ir.Print(m), traced, eager
}

// agree checks that traced and eager results both hold want.
func agree(t *testing.T, traced, eager []*backend.Buffer, tol float64, want ...[]float64) {
	t.Helper()
	if len(traced) != len(want) || len(eager) != len(want) {
		t.Fatalf("%d traced and %d eager results, want %d", len(traced), len(eager), len(want))
	}
	for i, w := range want {
		for mode, b := range map[string]*backend.Buffer{"traced": traced[i], "eager": eager[i]} {
			got := tensor.FromBuffer(b).Float64s()
			if len(got) != len(w) {
				t.Errorf("%s result %d = %v, want %v", mode, i, got, w)
				continue
			}
			for k := range w {
				if math.Abs(got[k]-w[k]) > tol*math.Max(1, math.Abs(w[k])) {
					t.Errorf("%s result %d = %v, want %v", mode, i, got, w)
					break
				}
			}
		}
	}
}

func counted(ts []*tensor.Tensor) []*tensor.Tensor {
	out := tensor.While(func(c []*tensor.Tensor) *tensor.Tensor {
		return c[0].Lt(tensor.Scalar(5, ir.I32))
	}, func(c []*tensor.Tensor) []*tensor.Tensor {
		return []*tensor.Tensor{c[0].Add(tensor.Scalar(1, ir.I32)), c[1].Mul(scalar(2)).Add(scalar(1))}
	}, tensor.Scalar(0, ir.I32), ts[0])
	return out
}

const countedTIR = `func @counted(%a: f32[3]) -> (i32[], f32[3]) {
  %0 = constant 0 : i32[]
  %1, %2 = while %0, %a : i32[], f32[3] cond (%3: i32[], %4: f32[3]) {
      %5 = constant 5 : i32[]
      %6 = compare %3, %5 {dir=lt} : i1[]
      return %6
    } do (%7: i32[], %8: f32[3]) {
      %9 = constant 1 : i32[]
      %10 = add %7, %9 : i32[]
      %11 = constant 2.0 : f32[]
      %12 = broadcast %11 {dims=[]} : f32[3]
      %13 = mul %8, %12 : f32[3]
      %14 = constant 1.0 : f32[]
      %15 = broadcast %14 {dims=[]} : f32[3]
      %16 = add %13, %15 : f32[3]
      return %10, %16
    }
  return %1, %2
}
`

// A counted loop traces to one while (not unrolled) whose numbers match
// the eager Go loop: x -> 2x+1 five times is 32x+31.
func TestWhileCounted(t *testing.T) {
	text, traced, eager := both(t, "counted", counted, f32(sh(3), 1, 2, -3))
	if text != countedTIR {
		t.Errorf("traced\n%s\nwant\n%s", text, countedTIR)
	}
	agree(t, traced, eager, 0, []float64{5}, []float64{63, 95, -65})
}

// collatz counts the steps of n to 1: a data-dependent trip count.
func collatz(ts []*tensor.Tensor) []*tensor.Tensor {
	one, two, three := tensor.Scalar(1, ir.I32), tensor.Scalar(2, ir.I32), tensor.Scalar(3, ir.I32)
	return tensor.While(func(c []*tensor.Tensor) *tensor.Tensor {
		return c[0].Ne(one)
	}, func(c []*tensor.Tensor) []*tensor.Tensor {
		n := c[0]
		even := n.Rem(two).Eq(tensor.Scalar(0, ir.I32))
		return []*tensor.Tensor{tensor.Where(even, n.Div(two), n.Mul(three).Add(one)), c[1].Add(one)}
	}, ts[0], tensor.Scalar(0, ir.I32))
}

func TestWhileCollatz(t *testing.T) {
	for _, c := range []struct{ n, steps int32 }{{27, 111}, {6, 8}, {1, 0}} {
		text, traced, eager := both(t, "collatz", collatz, tensor.Scalar(float64(c.n), ir.I32))
		if n := strings.Count(text, "= while "); n != 1 {
			t.Errorf("%d while ops in\n%s", n, text)
		}
		agree(t, traced, eager, 0, []float64{1}, []float64{float64(c.steps)})
	}
}

// pick runs one of three branches on x; an index outside [0, 3) runs the
// last.
func pick(ts []*tensor.Tensor) []*tensor.Tensor {
	return tensor.Switch(ts[0], ts[1:], func(o []*tensor.Tensor) []*tensor.Tensor {
		return []*tensor.Tensor{o[0].Add(scalar(10))}
	}, func(o []*tensor.Tensor) []*tensor.Tensor {
		return []*tensor.Tensor{o[0].Neg()}
	}, func(o []*tensor.Tensor) []*tensor.Tensor {
		return []*tensor.Tensor{o[0].Mul(o[0])}
	})
}

func TestSwitch(t *testing.T) {
	x := f32(sh(2), 3, -4)
	for _, c := range []struct {
		k    int32
		want []float64
	}{{0, []float64{13, 6}}, {1, []float64{-3, 4}}, {2, []float64{9, 16}}, {3, []float64{9, 16}}, {-1, []float64{9, 16}}, {99, []float64{9, 16}}} {
		text, traced, eager := both(t, "pick", pick, tensor.Scalar(float64(c.k), ir.I32), x)
		if n := strings.Count(text, "= case "); n != 1 {
			t.Errorf("%d case ops in\n%s", n, text)
		}
		agree(t, traced, eager, 0, c.want)
	}
}

// cumprod is a Scan whose carry is the running product and whose per-step
// output is the product so far.
func cumprod(ts []*tensor.Tensor) []*tensor.Tensor {
	c, ys := tensor.Scan(func(c, x []*tensor.Tensor) ([]*tensor.Tensor, []*tensor.Tensor) {
		p := c[0].Mul(x[0])
		return []*tensor.Tensor{p}, []*tensor.Tensor{p}
	}, []*tensor.Tensor{scalar(1)}, ts[0])
	return append(c, ys...)
}

func TestScanCumprod(t *testing.T) {
	text, traced, eager := both(t, "cumprod", cumprod, f32(sh(5), 1, 2, 3, 4, 5))
	if n := strings.Count(text, "= while "); n != 1 || !strings.Contains(text, "dynamic_slice") || !strings.Contains(text, "dynamic_update_slice") {
		t.Errorf("want one while reading with dynamic_slice and writing with dynamic_update_slice:\n%s", text)
	}
	agree(t, traced, eager, 0, []float64{120}, []float64{1, 2, 6, 24, 120})
}

// rnn runs h = tanh(h W + x_t) over a sequence; W is a traced tensor the
// step closure captures (carried into the loop unchanged).
func rnn(ts []*tensor.Tensor) []*tensor.Tensor {
	w := ts[2]
	h, ys := tensor.Scan(func(c, x []*tensor.Tensor) ([]*tensor.Tensor, []*tensor.Tensor) {
		h := c[0].Reshape(1, 2).MatMul(w).Reshape(2).Add(x[0]).Tanh()
		return []*tensor.Tensor{h}, []*tensor.Tensor{h.Sum(0)}
	}, []*tensor.Tensor{ts[0]}, ts[1])
	return append(h, ys...)
}

func TestScanRNN(t *testing.T) {
	h0 := []float64{0.5, -0.25}
	xs := []float64{0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8}
	w := []float64{0.9, -0.2, 0.3, 0.6}
	text, traced, eager := both(t, "rnn", rnn,
		f32(sh(2), 0.5, -0.25), f32(sh(4, 2), 0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8), f32(sh(2, 2), 0.9, -0.2, 0.3, 0.6))
	if n := strings.Count(text, "= while "); n != 1 {
		t.Errorf("%d while ops in\n%s", n, text)
	}
	h := append([]float64{}, h0...)
	var ys []float64
	for s := 0; s < 4; s++ {
		a := math.Tanh(h[0]*w[0] + h[1]*w[2] + xs[2*s])
		b := math.Tanh(h[0]*w[1] + h[1]*w[3] + xs[2*s+1])
		h = []float64{a, b}
		ys = append(ys, a+b)
	}
	agree(t, traced, eager, 1e-5, h, ys)
}

// A closure may capture traced tensors from two levels out: the switch
// inside the loop uses y, which is carried into both.
func TestWhileCapturesNested(t *testing.T) {
	f := func(ts []*tensor.Tensor) []*tensor.Tensor {
		x, y := ts[0], ts[1]
		return tensor.While(func(c []*tensor.Tensor) *tensor.Tensor {
			return c[0].Lt(tensor.Scalar(4, ir.I32))
		}, func(c []*tensor.Tensor) []*tensor.Tensor {
			k := c[0].Rem(tensor.Scalar(2, ir.I32))
			v := tensor.Switch(k, c[1:], func(o []*tensor.Tensor) []*tensor.Tensor {
				return []*tensor.Tensor{o[0].Add(y)}
			}, func(o []*tensor.Tensor) []*tensor.Tensor {
				return []*tensor.Tensor{o[0].Mul(y)}
			})
			return []*tensor.Tensor{c[0].Add(tensor.Scalar(1, ir.I32)), v[0]}
		}, tensor.Scalar(0, ir.I32), x)[1:]
	}
	// ((1+2)*2+2)*2 = 16
	text, traced, eager := both(t, "nested", f, f32(sh(1), 1), f32(sh(1), 2))
	if !strings.Contains(text, "= while %0, %a, %b : i32[], f32[1], f32[1] cond") {
		t.Errorf("y is not carried into the loop:\n%s", text)
	}
	agree(t, traced, eager, 0, []float64{16})
}

// next records the line after its call.
func next(line *int) {
	_, _, *line, _ = runtime.Caller(1)
	*line++
}

func TestWhileErrors(t *testing.T) {
	x := f32(sh(2), 1, 2)
	xt := []ir.Type{x.Type()}
	same := func(c []*tensor.Tensor) []*tensor.Tensor { return c }
	sum := func(c []*tensor.Tensor) []*tensor.Tensor { return []*tensor.Tensor{c[0].Sum(0)} }
	k0 := tensor.Scalar(0, ir.I32)
	small := func(c []*tensor.Tensor) *tensor.Tensor { return c[0].Sum(0).Lt(scalar(9)) }
	first := func(c []*tensor.Tensor) *tensor.Tensor { return c[0] }
	trace := func(f func(a *tensor.Tensor) []*tensor.Tensor) {
		tensor.Trace("f", []string{"x"}, xt, func(ts []*tensor.Tensor) ([]*tensor.Tensor, error) { return f(ts[0]), nil })
	}

	wantErr(t, "control_test.go", func(l *int) { at(l); tensor.While(first, same, x) },
		"while: cond must return an i1[] tensor, got f32[2]")
	// The error names the user's While call, traced as eagerly.
	wantErr(t, "control_test.go", func(l *int) {
		trace(func(a *tensor.Tensor) []*tensor.Tensor { at(l); return tensor.While(small, sum, a) })
	}, "while: the body returns (f32[]), but the carried values are (f32[2])")
	wantErr(t, "control_test.go", func(l *int) { at(l); tensor.Switch(tensor.Scalar(0, ir.I64), nil, same) },
		"switch: the index must be i32[], got i64[]")
	wantErr(t, "control_test.go", func(l *int) {
		trace(func(a *tensor.Tensor) []*tensor.Tensor {
			next(l)
			return tensor.Switch(k0, []*tensor.Tensor{a}, same, sum)
		})
	}, "switch: branch 1 returns (f32[]), but branch 0 returns (f32[2])")
	// A value defined in a region does not leave it except as a result.
	noStep := func(c, x []*tensor.Tensor) ([]*tensor.Tensor, []*tensor.Tensor) { return c, nil }
	var inner *tensor.Tensor
	keep := func(c []*tensor.Tensor) []*tensor.Tensor { inner = c[0].Neg(); return c }
	wantErr(t, "control_test.go", func(l *int) {
		trace(func(a *tensor.Tensor) []*tensor.Tensor {
			tensor.While(small, keep, a)
			next(l)
			return []*tensor.Tensor{inner.Add(a)}
		})
	}, "add: operand 0 of add (f32[2]) was defined inside a while or case region that has ended: a region's values leave it only as its results")
	wantErr(t, "control_test.go", func(l *int) {
		next(l)
		tensor.Scan(noStep, nil, x, f32(sh(3), 1, 2, 3))
	}, "scan: the xs have leading dimensions 2 and 3: they must be equal")
}

// A loop whose carried values are all concrete but whose body uses a
// traced tensor is traced (one while, x carried in), not run eagerly. (The
// one step run eagerly before the body showed a traced tensor stays in the
// trace, unused: dce drops it.)
func TestWhileConcreteInitTracedClosure(t *testing.T) {
	f := func(ts []*tensor.Tensor) []*tensor.Tensor {
		x := ts[0]
		return tensor.While(func(c []*tensor.Tensor) *tensor.Tensor {
			return c[0].Lt(tensor.Scalar(3, ir.I32))
		}, func(c []*tensor.Tensor) []*tensor.Tensor {
			return []*tensor.Tensor{c[0].Add(tensor.Scalar(1, ir.I32)), c[1].Add(x)}
		}, tensor.Scalar(0, ir.I32), tensor.Zeros(ir.F32, 2))[1:]
	}
	text, traced, eager := both(t, "acc", f, f32(sh(2), 1.5, -2))
	if n := strings.Count(text, "= while "); n != 1 || !strings.Contains(text, "= while %2, %3, %a : i32[], f32[2], f32[2] cond") {
		t.Errorf("want one while carrying %%a:\n%s", text)
	}
	agree(t, traced, eager, 0, []float64{4.5, -6})
}

// A Scan over no rows returns the initial carry and empty outputs of the
// step's output shape.
func TestScanEmpty(t *testing.T) {
	f := func(ts []*tensor.Tensor) []*tensor.Tensor {
		c, ys := tensor.Scan(func(c, x []*tensor.Tensor) ([]*tensor.Tensor, []*tensor.Tensor) {
			return []*tensor.Tensor{c[0].Add(x[0].Sum(0))}, []*tensor.Tensor{x[0].Neg()}
		}, []*tensor.Tensor{scalar(7)}, ts[0])
		return append(c, ys...)
	}
	_, traced, eager := both(t, "empty", f, tensor.Zeros(ir.F32, 0, 3))
	agree(t, traced, eager, 0, []float64{7}, nil)
	for _, b := range append(traced[1:], eager[1]) {
		if got := b.Type().String(); got != "f32[0,3]" {
			t.Errorf("ys is %s, want f32[0,3]", got)
		}
	}
}
