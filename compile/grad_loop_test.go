package compile_test

import (
	"strings"
	"testing"

	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// layer is one residual step, x + tanh(x·w).
func layer(x, w *tensor.Tensor) *tensor.Tensor { return x.Add(x.MatMul(w).Tanh()) }

// scanLoss runs layer over the stacked weights ws [L,H,H] with tensor.Scan (one
// while), its per-step output the row sums; the loss sees both.
func scanLoss(ws, x *tensor.Tensor) *tensor.Tensor {
	final, ys := tensor.Scan(func(c, w []*tensor.Tensor) ([]*tensor.Tensor, []*tensor.Tensor) {
		y := layer(c[0], w[0])
		return []*tensor.Tensor{y}, []*tensor.Tensor{y.Sum(1)}
	}, []*tensor.Tensor{x}, ws)
	return final[0].Mul(final[0]).Sum().Add(ys[0].Sin().Sum())
}

// unrolledLoss is scanLoss as a Go loop over the layers (traced, it unrolls).
func unrolledLoss(ws, x *tensor.Tensor) *tensor.Tensor {
	h := ws.Shape()[1]
	var rows []*tensor.Tensor
	for l := range ws.Shape()[0] {
		w := ws.Slice([]int64{l, 0, 0}, []int64{l + 1, h, h}, nil).Reshape(h, h)
		x = layer(x, w)
		rows = append(rows, x.Sum(1).Sin().Sum())
	}
	loss := x.Mul(x).Sum()
	for _, r := range rows {
		loss = loss.Add(r)
	}
	return loss
}

// whileLoss is x = tanh(x·w) four times with tensor.While, w captured (carried in as a
// loop-invariant operand).
func whileLoss(w, x *tensor.Tensor) *tensor.Tensor {
	out := tensor.While(func(c []*tensor.Tensor) *tensor.Tensor {
		return c[0].Lt(tensor.Scalar(4, ir.I32))
	}, func(c []*tensor.Tensor) []*tensor.Tensor {
		return []*tensor.Tensor{c[0].Add(tensor.Scalar(1, ir.I32)), c[1].MatMul(w).Tanh()}
	}, tensor.Scalar(0, ir.I32), x)
	return out[1].Sum()
}

func unrolledWhileLoss(w, x *tensor.Tensor) *tensor.Tensor {
	for range 4 {
		x = x.MatMul(w).Tanh()
	}
	return x.Sum()
}

// TestGradLoops: compile.Grad of a traced counted loop (tensor.Scan over stacked
// weights, tensor.While with a captured weight) equals the gradient of the same
// computation written as an unrolled Go loop, and stays a loop: the program holds the
// forward while and the reverse one.
func TestGradLoops(t *testing.T) {
	cases := []struct {
		name           string
		loop, unrolled func(a, b *tensor.Tensor) *tensor.Tensor
		a, b           *tensor.Tensor
	}{
		{"scan", scanLoss, unrolledLoss, tensor.Random(1, ir.F32, 3, 4, 4).Mul(tensor.Scalar(0.5, ir.F32)), tensor.Random(2, ir.F32, 2, 4)},
		{"while", whileLoss, unrolledWhileLoss, tensor.Random(3, ir.F32, 4, 4).Mul(tensor.Scalar(0.5, ir.F32)), tensor.Random(4, ir.F32, 2, 4)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := compile.Grad(c.loop, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			got, err := g.Call(c.a, c.b)
			if err != nil {
				t.Fatal(err)
			}
			u, err := compile.Grad(c.unrolled, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			want, err := u.Call(c.a, c.b)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				gradNear(t, []string{"d/da", "d/db"}[i], got[i], want[i].Shape(), want[i].Float64s())
			}
			hlo, err := g.Lower(c.a, c.b)
			if err != nil {
				t.Fatal(err)
			}
			if k := strings.Count(hlo, "stablehlo.while"); k != 2 {
				t.Errorf("%d stablehlo.while in the gradient's program, want 2 (forward and reverse)", k)
			}
		})
	}
}

// TestGradDataDependentLoop: a loop whose trip count depends on the data is refused
// at its position in the Go source (steps, in while_test.go: Collatz counts).
func TestGradDataDependentLoop(t *testing.T) {
	loss := func(n, x *tensor.Tensor) *tensor.Tensor {
		_, y := steps(n, x)
		return y.Sum()
	}
	g, err := compile.Grad(loss, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Call(tensor.FromSlice([]int32{27, 6, 1}, 3), tensor.FromSlice([]float32{1, 0.5}, 2))
	// Line 18 of while_test.go calls tensor.While.
	want := "while_test.go:18: error: cannot differentiate while: reverse-mode through a while needs a static trip count, as JAX's: write it as a counted loop"
	if err == nil || err.Error() != want {
		t.Errorf("got error %v, want %s", err, want)
	}
}
