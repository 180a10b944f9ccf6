package tensor

import "github.com/tpucc/tpucc/ir"

// Composite ops, kept whole in traces for the pattern passes. On f16 and
// bf16 they compute in f32 and round once.

// Relu is max(t, 0).
func (t *Tensor) Relu() *Tensor { return t.unary("relu", ir.OpRelu) }

// Gelu is t*Phi(t): exact with erf, or the tanh approximation when approximate is true.
func (t *Tensor) Gelu(approximate bool) *Tensor {
	return apply1("gelu", ir.OpGelu, &ir.GeluAttr{Approximate: approximate}, nil, t)
}

// Silu is t*sigmoid(t).
func (t *Tensor) Silu() *Tensor { return t.unary("silu", ir.OpSilu) }

// Softmax is exp(t-max)/sum(exp(t-max)) along axis.
func (t *Tensor) Softmax(axis int) *Tensor { return t.axisOp("softmax", ir.OpSoftmax, axis) }

// LogSoftmax is t-max-log(sum(exp(t-max))) along axis.
func (t *Tensor) LogSoftmax(axis int) *Tensor {
	return t.axisOp("log_softmax", ir.OpLogSoftmax, axis)
}

// LayerNorm normalises over the last axis, (t-mean)/sqrt(var+eps)*scale+bias
// with the biased variance; scale and bias are 1-D of the last dimension.
func (t *Tensor) LayerNorm(scale, bias *Tensor, eps float64) *Tensor {
	return apply1("layer_norm", ir.OpLayerNorm, &ir.EpsAttr{Eps: eps}, nil, t, scale, bias)
}

// RMSNorm normalises over the last axis, t/sqrt(mean(t^2)+eps)*scale; scale
// is 1-D of the last dimension.
func (t *Tensor) RMSNorm(scale *Tensor, eps float64) *Tensor {
	return apply1("rms_norm", ir.OpRMSNorm, &ir.EpsAttr{Eps: eps}, nil, t, scale)
}
