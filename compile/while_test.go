package compile_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/compile"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// steps counts the Collatz steps of every n (elementwise, a data-dependent
// trip count: the loop runs until all reach 1) and scales x by 2 per step
// of the longest, through a captured traced tensor.
func steps(n, x *tensor.Tensor) (*tensor.Tensor, *tensor.Tensor) {
	one, two, three := tensor.Scalar(1, ir.I32), tensor.Scalar(2, ir.I32), tensor.Scalar(3, ir.I32)
	out := tensor.While(func(c []*tensor.Tensor) *tensor.Tensor {
		return c[0].Ne(one).Convert(ir.I32).Max(0).Gt(tensor.Scalar(0, ir.I32))
	}, func(c []*tensor.Tensor) []*tensor.Tensor {
		n, done := c[0], c[0].Eq(one)
		even := n.Rem(two).Eq(tensor.Scalar(0, ir.I32))
		next := tensor.Where(done, n, tensor.Where(even, n.Div(two), n.Mul(three).Add(one)))
		count := c[1].Add(tensor.Where(done, tensor.Scalar(0, ir.I32), one))
		return []*tensor.Tensor{next, count, c[2].Mul(x)}
	}, n, tensor.Zeros(ir.I32, 3), tensor.Ones(ir.F32, 2))
	return out[1], out[2]
}

func TestWhileCompiledMatchesEager(t *testing.T) {
	c, err := compile.New(steps, memory())
	if err != nil {
		t.Fatal(err)
	}
	n, x := tensor.FromSlice([]int32{27, 6, 1}, 3), tensor.FromSlice([]float32{1, 0.5}, 2)
	got, err := c.Call(n, x)
	if err != nil {
		t.Fatal(err)
	}
	wantCount, wantX := steps(n, x)
	if d := agree(got[0], wantCount); d != "" {
		t.Errorf("counts: %s", d)
	}
	if d := agree(got[1], wantX); d != "" {
		t.Errorf("x: %s", d)
	}
	if g := got[0].Int64s(); g[0] != 111 || g[1] != 8 || g[2] != 0 {
		t.Errorf("counts %v, want [111 8 0]", g)
	}
	// 111 steps of the longest: x^111.
	if g := got[1].Float64s(); g[0] != 1 || g[1] != 0x1p-111 {
		t.Errorf("x %v, want [1 2^-111]", g)
	}
	hlo, err := c.Lower(n, x)
	if err != nil {
		t.Fatal(err)
	}
	if k := strings.Count(hlo, "stablehlo.while"); k != 1 {
		t.Errorf("%d stablehlo.while in\n%s", k, hlo)
	}
}

// scanSwitch is a running product over xs' rows (Scan) whose step picks
// mul or add by k (Switch inside the loop body).
func scanSwitch(k, xs *tensor.Tensor) (*tensor.Tensor, *tensor.Tensor) {
	final, ys := tensor.Scan(func(c, x []*tensor.Tensor) ([]*tensor.Tensor, []*tensor.Tensor) {
		p := tensor.Switch(k, []*tensor.Tensor{c[0], x[0]}, func(o []*tensor.Tensor) []*tensor.Tensor {
			return []*tensor.Tensor{o[0].Mul(o[1])}
		}, func(o []*tensor.Tensor) []*tensor.Tensor {
			return []*tensor.Tensor{o[0].Add(o[1])}
		})
		return p, p
	}, []*tensor.Tensor{tensor.Ones(ir.F32, 2)}, xs)
	return final[0], ys[0]
}

func TestScanSwitchCompiledMatchesEager(t *testing.T) {
	f := compile.Func(scanSwitch, memory())
	xs := tensor.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	for _, c := range []struct {
		k         int32
		final, ys []float64
	}{{0, []float64{15, 48}, []float64{1, 2, 3, 8, 15, 48}}, {1, []float64{10, 13}, []float64{2, 3, 5, 7, 10, 13}}, {7, []float64{10, 13}, []float64{2, 3, 5, 7, 10, 13}}} {
		k := tensor.Scalar(float64(c.k), ir.I32)
		final, ys := f(k, xs)
		ef, ey := scanSwitch(k, xs)
		if d := agree(final, ef) + agree(ys, ey); d != "" {
			t.Errorf("k=%d: %s", c.k, d)
		}
		if g := final.Float64s(); !slices.Equal(g, c.final) {
			t.Errorf("k=%d: final %v, want %v", c.k, g, c.final)
		}
		if g := ys.Float64s(); !slices.Equal(g, c.ys) {
			t.Errorf("k=%d: ys %v, want %v", c.k, g, c.ys)
		}
	}
}
