// Package block is the benchmarks' transformer block: examples/go's decoder
// block (models.TransformerBlock) applied to a batch of sequences, x
// [batch, tokens, width], with attention inside each sequence. The batch is
// the dimension the recompile benchmark varies: every op keeps batch rows
// apart, so the compilation cache can pad it to power-of-two buckets. (The
// token dimension of the unbatched block is not paddable that way: causal
// attention contracts over it.)
package block

import (
	"math"

	"github.com/tpucc/tpucc/examples/go/models"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// Sizes of the block that the weights' shapes do not give.
const (
	Heads   = 2
	NormEps = 1e-6
)

// Weights are the block's parameters, in Block's argument order after x.
type Weights struct {
	AttnNorm, Wq, Wk, Wv, Wo, QNorm, KNorm, MLPNorm, WGate, WUp, WDown *tensor.Tensor
}

// NewWeights draws seeded weights for a block of the given width and MLP width.
func NewWeights(seed, width, ffn int64) Weights {
	w := func(k int64, shape ...int64) *tensor.Tensor {
		return tensor.Random(seed+k, ir.F32, shape...).Mul(tensor.Scalar(1/math.Sqrt(float64(shape[0])), ir.F32))
	}
	hd := width / Heads
	return Weights{
		AttnNorm: tensor.Ones(ir.F32, width), Wq: w(1, width, width), Wk: w(2, width, width), Wv: w(3, width, width), Wo: w(4, width, width),
		QNorm: tensor.Ones(ir.F32, hd), KNorm: tensor.Ones(ir.F32, hd), MLPNorm: tensor.Ones(ir.F32, width),
		WGate: w(5, width, ffn), WUp: w(6, width, ffn), WDown: w(7, ffn, width),
	}
}

// Args returns x followed by the weights, as Block takes them.
func (w Weights) Args(x *tensor.Tensor) []any {
	return []any{x, w.AttnNorm, w.Wq, w.Wk, w.Wv, w.Wo, w.QNorm, w.KNorm, w.MLPNorm, w.WGate, w.WUp, w.WDown}
}

// Block is one pre-norm decoder block (rms_norm, causal self-attention with
// q/k normalisation and rotary embedding, SwiGLU MLP, both residual) on x
// [batch, tokens, width].
func Block(x, attnNorm, wq, wk, wv, wo, qNorm, kNorm, mlpNorm, wGate, wUp, wDown *tensor.Tensor) *tensor.Tensor {
	return blockWith(Heads, x, attnNorm, wq, wk, wv, wo, qNorm, kNorm, mlpNorm, wGate, wUp, wDown)
}

// WithHeads is Block with another number of heads (bench/cpu uses the four
// of examples/transformer_block.tir).
func WithHeads(heads int64) func(x, attnNorm, wq, wk, wv, wo, qNorm, kNorm, mlpNorm, wGate, wUp, wDown *tensor.Tensor) *tensor.Tensor {
	return func(x, attnNorm, wq, wk, wv, wo, qNorm, kNorm, mlpNorm, wGate, wUp, wDown *tensor.Tensor) *tensor.Tensor {
		return blockWith(heads, x, attnNorm, wq, wk, wv, wo, qNorm, kNorm, mlpNorm, wGate, wUp, wDown)
	}
}

func blockWith(nh int64, x, attnNorm, wq, wk, wv, wo, qNorm, kNorm, mlpNorm, wGate, wUp, wDown *tensor.Tensor) *tensor.Tensor {
	dims := x.Shape()
	b, t, d := dims[0], dims[1], dims[2]
	hd := d / nh

	h := x.RMSNorm(attnNorm, NormEps)
	heads := func(w *tensor.Tensor) *tensor.Tensor { // [batch, head, token, hd]
		return h.MatMul(w).Reshape(b, t, nh, hd).Transpose(0, 2, 1, 3)
	}
	q := heads(wq).RMSNorm(qNorm, NormEps)
	k := heads(wk).RMSNorm(kNorm, NormEps)
	v := heads(wv)
	cos, sin := models.Rotary(t, hd)
	q, k = models.Rope(q, cos, sin), models.Rope(k, cos, sin)

	f32 := x.DType()
	batch := []int64{0, 1}
	scores := q.DotGeneral(k, ir.DotAttr{LhsBatch: batch, RhsBatch: batch, LhsContract: []int64{3}, RhsContract: []int64{3}})
	scaled := scores.Mul(tensor.Scalar(1/math.Sqrt(float64(hd)), f32))
	visible := tensor.Iota(ir.I32, 0, t, t).Ge(tensor.Iota(ir.I32, 1, t, t))
	probs := tensor.Where(visible, scaled, tensor.Scalar(math.Inf(-1), f32)).Softmax(-1)
	ctx := probs.DotGeneral(v, ir.DotAttr{LhsBatch: batch, RhsBatch: batch, LhsContract: []int64{3}, RhsContract: []int64{2}})
	x1 := x.Add(ctx.Transpose(0, 2, 1, 3).Reshape(b, t, d).MatMul(wo))

	h2 := x1.RMSNorm(mlpNorm, NormEps)
	gu := h2.MatMul(wGate).Silu().Mul(h2.MatMul(wUp))
	return x1.Add(gu.MatMul(wDown))
}
