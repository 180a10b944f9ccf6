package tensor

import (
	"github.com/tpucc/tpucc/frontend/trace"
	"github.com/tpucc/tpucc/ir"
)

// Scan runs f over the leading axis of xs, as jax.lax.scan does: step i
// gives f the carried values and the i-th slice of every x (the x without
// its leading axis), and f returns the next carried values and per-step
// outputs ys. Scan returns the last carried values and each y stacked over
// a new leading axis (one row per step). Every x has the same static
// leading dimension, the number of steps; f returns the carried types.
//
// Scan is a While over a step counter: it reads step i with dynamic_slice
// and writes row i of each output with dynamic_update_slice, so traced it
// records one while op, not one copy of f per step. f runs once more than
// the steps to learn the outputs' types (traced: into a region that is
// dropped; eagerly: on step 0, or on zeros when there are no steps).
func Scan(f func(carry, x []*Tensor) (newCarry, y []*Tensor), carry []*Tensor, xs ...*Tensor) (final, ys []*Tensor) {
	check("scan", carry...)
	check("scan", xs...)
	if len(xs) == 0 {
		fail("scan", typesOf(carry...), "needs at least one x to scan over")
	}
	n := scanLength(xs)
	steps := make([]ir.Type, len(xs))
	for j, x := range xs {
		t := x.Type()
		steps[j] = ir.Type{DType: t.DType, Shape: t.Shape[1:]}
	}
	yt := scanProbe(f, carry, xs, steps, n)
	init := []*Tensor{Scalar(0, ir.I32)}
	init = append(init, carry...)
	for _, t := range yt {
		init = append(init, Zeros(t.DType, append([]int64{n}, t.Dims()...)...))
	}
	nc, ny := len(carry), len(yt)
	out := While(func(c []*Tensor) *Tensor {
		return c[0].Lt(Scalar(float64(n), ir.I32))
	}, func(c []*Tensor) []*Tensor {
		i := c[0]
		x := make([]*Tensor, len(xs))
		for j, xj := range xs {
			x[j] = xj.DynamicSlice(rowStarts(i, steps[j].Rank()+1), append([]int64{1}, steps[j].Dims()...)).Reshape(steps[j].Dims()...)
		}
		next, y := f(c[1:1+nc], x)
		checkCarry("scan", c[1:1+nc], next)
		checkScanOutputs(yt, y)
		res := append([]*Tensor{i.Add(Scalar(1, ir.I32))}, next...)
		for k, yk := range y {
			row := yk.Reshape(append([]int64{1}, yt[k].Dims()...)...)
			res = append(res, c[1+nc+k].DynamicUpdateSlice(row, rowStarts(i, yt[k].Rank()+1)))
		}
		return res
	}, init...)
	return out[1 : 1+nc], out[1+nc : 1+nc+ny]
}

// scanLength is the number of steps: xs' common static leading dimension.
func scanLength(xs []*Tensor) int64 {
	var n int64 = -1
	for _, x := range xs {
		t := x.Type()
		if t.Rank() == 0 || t.Shape[0].Symbolic() {
			fail("scan", typesOf(xs...), "every x needs a static leading axis to scan over, got %s", t)
		}
		d := t.Dims()[0]
		if n >= 0 && d != n {
			fail("scan", typesOf(xs...), "the xs have leading dimensions %d and %d: they must be equal", n, d)
		}
		n = d
	}
	return n
}

// scanProbe returns the types of f's per-step outputs.
func scanProbe(f func(carry, x []*Tensor) (newCarry, y []*Tensor), carry, xs []*Tensor, steps []ir.Type, n int64) []ir.Type {
	var yt []ir.Type
	probe := func(c, x []*Tensor) {
		next, y := f(c, x)
		checkCarry("scan", c, next)
		check("scan", y...)
		yt = typesOf(y...)
	}
	if tr := tracerOf(append(append([]*Tensor{}, carry...), xs...)); tr != nil {
		types := append(typesOf(carry...), steps...)
		_, err := tr.Probe(trace.CallerPos(0), types, func(ps []*ir.Value) ([]*ir.Value, error) {
			t := wrap(ps, tr)
			probe(t[:len(carry)], t[len(carry):])
			return nil, nil
		})
		if err != nil {
			failErr("scan", typesOf(xs...), err)
		}
		return yt
	}
	x := make([]*Tensor, len(xs))
	for j, xj := range xs {
		if n == 0 {
			x[j] = Zeros(steps[j].DType, steps[j].Dims()...)
			continue
		}
		x[j] = xj.Slice(make([]int64, xj.Rank()), append([]int64{1}, steps[j].Dims()...), nil).Reshape(steps[j].Dims()...)
	}
	probe(carry, x)
	return yt
}

// checkScanOutputs checks that a step's outputs keep the probed types.
func checkScanOutputs(want []ir.Type, y []*Tensor) {
	check("scan", y...)
	if got := typesOf(y...); !sameTypes(want, got) {
		fail("scan", got, "a step returns outputs %s, but the first returned %s", typeList(got), typeList(want))
	}
}

// rowStarts is the start indices of row i of a rank-r tensor: i, then 0s.
func rowStarts(i *Tensor, r int) []*Tensor {
	s := []*Tensor{i}
	for range r - 1 {
		s = append(s, Scalar(0, ir.I32))
	}
	return s
}
