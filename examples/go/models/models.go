// Package models holds the example models of examples/*.tir written in Go
// against package tensor: the same computations op for op, so that a Go
// model run eagerly and its .tir twin run by the reference executor agree
// (models_test.go checks it). The commands in examples/go/mlp,
// examples/go/transformer_block and examples/go/moe_dense run them.
//
// Each model takes its weights as arguments, in the .tir function's
// parameter order, and reads its sizes from their shapes, so the same Go
// function serves any token count (what compile.Func's shape-keyed cache
// sees as a new signature).
package models

import (
	"math"

	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/tensor"
)

// MLP is examples/mlp.tir: relu(x @ w1 + b1) @ w2.
func MLP(x, w1, b1, w2 *tensor.Tensor) *tensor.Tensor {
	return x.MatMul(w1).Add(b1).Relu().MatMul(w2)
}

// Sizes of the transformer block that its weights' shapes do not give.
const (
	Heads   = 4    // attention heads; the head width is the model width / Heads
	NormEps = 1e-6 // eps of every rms_norm
)

// TransformerBlock is examples/transformer_block.tir: one pre-norm decoder
// block as in Llama and Qwen3. x is [tokens, width]; causal self-attention
// with q/k normalisation and rotary position embedding (rotate-half form,
// base 10000), then a SwiGLU MLP; both sub-blocks are residual.
func TransformerBlock(x, attnNorm, wq, wk, wv, wo, qNorm, kNorm, mlpNorm, wGate, wUp, wDown *tensor.Tensor) *tensor.Tensor {
	dims := x.Shape()
	t, d := dims[0], dims[1]
	hd := d / Heads

	// Attention: normalise, project, split into heads [head, token, hd].
	h := x.RMSNorm(attnNorm, NormEps)
	heads := func(w *tensor.Tensor) *tensor.Tensor {
		return h.MatMul(w).Reshape(t, Heads, hd).Transpose(1, 0, 2)
	}
	q := heads(wq).RMSNorm(qNorm, NormEps)
	k := heads(wk).RMSNorm(kNorm, NormEps)
	v := heads(wv)

	cos, sin := Rotary(t, hd)
	q, k = Rope(q, cos, sin), Rope(k, cos, sin)

	// Causal scaled dot-product attention.
	f32 := x.DType()
	scores := q.DotGeneral(k, ir.DotAttr{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContract: []int64{2}, RhsContract: []int64{2}})
	scaled := scores.Mul(tensor.Scalar(1/math.Sqrt(float64(hd)), f32))
	visible := tensor.Iota(ir.I32, 0, t, t).Ge(tensor.Iota(ir.I32, 1, t, t))
	probs := tensor.Where(visible, scaled, tensor.Scalar(math.Inf(-1), f32)).Softmax(-1)
	ctx := probs.DotGeneral(v, ir.DotAttr{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContract: []int64{2}, RhsContract: []int64{1}})
	attn := ctx.Transpose(1, 0, 2).Reshape(t, d).MatMul(wo)
	x1 := x.Add(attn)

	// SwiGLU MLP.
	h2 := x1.RMSNorm(mlpNorm, NormEps)
	gu := h2.MatMul(wGate).Silu().Mul(h2.MatMul(wUp))
	return x1.Add(gu.MatMul(wDown))
}

// Rotary returns cos and sin of the rotary angles [t, hd/2]:
// angle[p, i] = p * 10000^(-2i/hd).
func Rotary(t, hd int64) (cos, sin *tensor.Tensor) {
	pos := tensor.Iota(ir.F32, 0, t, hd/2)
	freqIdx := tensor.Iota(ir.F32, 1, t, hd/2)
	invFreq := freqIdx.Mul(tensor.Scalar(-2*math.Log(10000)/float64(hd), ir.F32)).Exp()
	angle := pos.Mul(invFreq)
	return angle.Cos(), angle.Sin()
}

// Rope rotates the two halves of the last axis of x [..., token, hd] by the
// Rotary tables: (a, b) -> (a cos - b sin, b cos + a sin).
func Rope(x, cos, sin *tensor.Tensor) *tensor.Tensor {
	s := x.Shape()
	last := len(s) - 1
	start, mid, end := make([]int64, len(s)), append([]int64(nil), s...), append([]int64(nil), s...)
	mid[last] = s[last] / 2
	a := x.Slice(start, mid, nil)
	start[last] = s[last] / 2
	b := x.Slice(start, end, nil)
	return tensor.Concat(last, a.Mul(cos).Sub(b.Mul(sin)), b.Mul(cos).Add(a.Mul(sin)))
}

// TopExperts is how many experts each token of MoEDense is routed to.
const TopExperts = 2

// MoEDense is examples/moe_dense.tir: a mixture-of-experts MLP computed
// densely. x is [tokens, width]; the router picks TopExperts experts per
// token and renormalises their probabilities (as Qwen3-MoE does); every
// expert's SwiGLU MLP runs on every token, and the outputs are combined with
// one_hot routing weights.
func MoEDense(x, wRouter, wGate, wUp, wDown *tensor.Tensor) *tensor.Tensor {
	t, e := x.Shape()[0], wRouter.Shape()[1]

	// Router: softmax over experts, keep the best, renormalise.
	probs := x.MatMul(wRouter).Softmax(1)
	topW, topI := probs.TopK(TopExperts)
	weights := topW.Div(topW.SumKeep(1))

	// Combine weights [token, expert]: sum over k of one_hot(expert) * weight.
	combine := topI.OneHot(e, x.DType()).Mul(weights.Reshape(t, TopExperts, 1)).Sum(1)

	// All experts on all tokens: [token, expert, ffn], then [expert, token, width].
	contract := ir.DotAttr{LhsContract: []int64{1}, RhsContract: []int64{1}}
	gu := x.DotGeneral(wGate, contract).Silu().Mul(x.DotGeneral(wUp, contract))
	out := gu.DotGeneral(wDown, ir.DotAttr{LhsBatch: []int64{1}, RhsBatch: []int64{0}, LhsContract: []int64{2}, RhsContract: []int64{1}})

	// Weighted sum over experts.
	return combine.DotGeneral(out, ir.DotAttr{LhsBatch: []int64{0}, RhsBatch: []int64{1}, LhsContract: []int64{1}, RhsContract: []int64{0}})
}

// Checksum is the sum of a concrete tensor's elements in float64, the number
// the example commands print.
func Checksum(y *tensor.Tensor) float64 {
	s := 0.0
	for _, v := range y.Float64s() {
		s += v
	}
	return s
}
