package tensor

import "github.com/tpucc/tpucc/ir"

// reduce applies a reduction over axes (all axes when none are given).
func (t *Tensor) reduce(name string, op ir.Op, keep bool, axes []int) *Tensor {
	check(name, t)
	ty := t.Type()
	if len(axes) == 0 {
		for i := range ty.Rank() {
			axes = append(axes, i)
		}
	}
	a := &ir.AxesAttr{Axes: normAxes(name, ty, axes), KeepDims: keep}
	return apply1(name, op, a, nil, t)
}

// Sum adds over axes (every axis when none are given), dropping them.
func (t *Tensor) Sum(axes ...int) *Tensor { return t.reduce("sum", ir.OpReduceSum, false, axes) }

// SumKeep is Sum keeping the reduced axes with size 1.
func (t *Tensor) SumKeep(axes ...int) *Tensor {
	return t.reduce("sum_keep", ir.OpReduceSum, true, axes)
}

// Prod multiplies over axes (every axis when none are given), dropping them.
func (t *Tensor) Prod(axes ...int) *Tensor { return t.reduce("prod", ir.OpReduceProd, false, axes) }

// ProdKeep is Prod keeping the reduced axes with size 1.
func (t *Tensor) ProdKeep(axes ...int) *Tensor {
	return t.reduce("prod_keep", ir.OpReduceProd, true, axes)
}

// Max is the maximum over axes (every axis when none are given), dropping
// them; an empty extent gives -inf or the dtype's minimum. NaN if any element
// is. For the elementwise maximum of two tensors see Maximum.
func (t *Tensor) Max(axes ...int) *Tensor {
	return t.reduce("max", ir.OpReduceMax, false, axes)
}

// MaxKeep is Max keeping the reduced axes with size 1.
func (t *Tensor) MaxKeep(axes ...int) *Tensor {
	return t.reduce("max_keep", ir.OpReduceMax, true, axes)
}

// Min is the minimum over axes (every axis when none are given), dropping
// them; an empty extent gives +inf or the dtype's maximum. NaN if any element
// is. For the elementwise minimum of two tensors see Minimum.
func (t *Tensor) Min(axes ...int) *Tensor {
	return t.reduce("min", ir.OpReduceMin, false, axes)
}

// MinKeep is Min keeping the reduced axes with size 1.
func (t *Tensor) MinKeep(axes ...int) *Tensor {
	return t.reduce("min_keep", ir.OpReduceMin, true, axes)
}

// axisOp applies an op whose attribute is one axis.
func (t *Tensor) axisOp(name string, op ir.Op, axis int) *Tensor {
	check(name, t)
	return apply1(name, op, &ir.AxisAttr{Axis: normAxis(name, t.Type(), axis)}, nil, t)
}

// Argmax is the i32 index of the first maximum along axis (NaN counts as the maximum).
func (t *Tensor) Argmax(axis int) *Tensor { return t.axisOp("argmax", ir.OpArgmax, axis) }

// Argmin is the i32 index of the first minimum along axis (NaN counts as the minimum).
func (t *Tensor) Argmin(axis int) *Tensor { return t.axisOp("argmin", ir.OpArgmin, axis) }

// Cumsum is the inclusive prefix sum along axis.
func (t *Tensor) Cumsum(axis int) *Tensor { return t.axisOp("cumsum", ir.OpCumsum, axis) }
